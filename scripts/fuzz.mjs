// `npm run fuzz -- --seeds 200 --steps 60`: the model-checked random tester (test/support/fuzz/) over many seeds,
// against the shipped CLI (dist/cli.js). `npm run fuzz` builds and compiles first; `node scripts/fuzz.mjs` runs what
// out/ and dist/ hold. `--seed N` runs one seed (and prints its steps), `--from N` the first seed of a range.
// Last line: "N seeds passed, N failed" with the failing seeds.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`--${name} takes a whole number`);
    process.exit(2);
  }
  return value;
}

const { runFuzz, formatFailure } = require(path.join(root, 'out/test/support/fuzz/runner.js'));
const steps = option('steps', 40);
const single = option('seed', undefined);
const from = option('from', 1);
const seeds = single !== undefined ? [single] : Array.from({ length: option('seeds', 20) }, (_, i) => from + i);

const failed = [];
let refusals = 0;
for (const seed of seeds) {
  const started = Date.now();
  const result = runFuzz({ seed, steps });
  refusals += result.refusals.length;
  const took = `${((Date.now() - started) / 1000).toFixed(1)} s`;
  if (result.ok) {
    console.log(`seed ${seed}: passed (${result.steps.length} steps, ${result.refusals.length} refusals, ${took})`);
    if (single !== undefined) for (const line of [...result.log, ...result.refusals]) console.log(`  ${line}`);
  } else {
    failed.push(seed);
    console.log(formatFailure(result, steps));
  }
}
console.log(`${refusals} refusals recorded (allowed by the README)`);
console.log(
  `${seeds.length - failed.length} seeds passed, ${failed.length} failed${failed.length ? `: ${failed.join(' ')}` : ''}`,
);
process.exit(failed.length > 0 ? 1 : 0);
