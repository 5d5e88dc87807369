// `npm run fuzz -- --seeds 200 --steps 60`: the model-checked random tester (test/support/fuzz/) over many seeds,
// against the shipped CLI (dist/cli.js). `npm run fuzz` builds and compiles first; `node scripts/fuzz.mjs` runs what
// out/ and dist/ hold. `--seed N` runs one seed (and prints its steps), `--from N` the first seed of a range,
// `--verbose` lists the refusals (allowed by the README) of passing seeds too, and `--seed N --minimize` shortens a
// failing seed's steps (takes steps out while the run still fails) and prints the shortest list found, as text and
// as JSON (`--replay <file.json>` runs such a list).
// Last line: "N seeds passed, N failed" with the failing seeds.
import fs from 'node:fs';
import os from 'node:os';
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

const verbose = process.argv.includes('--verbose');
const minimize = process.argv.includes('--minimize');
const replayFile = process.argv[process.argv.indexOf('--replay') + 1];
if (process.argv.includes('--replay')) {
  const given = JSON.parse(fs.readFileSync(replayFile, 'utf8'));
  const result = runFuzz({ seed: 0, steps: given.length, given });
  for (const line of result.log) console.log(`  ${line}`);
  for (const line of result.refusals) console.log(`  refusal: ${line}`);
  console.log(result.ok ? 'the steps pass' : `the steps fail: ${result.failure}`);
  process.exit(result.ok ? 0 : 1);
}

/** Takes steps out of a failing list (halves, quarters, … single steps) while the run still fails. */
function shorten(steps) {
  let best = steps;
  for (let size = Math.max(1, Math.floor(best.length / 2)); size >= 1; size = Math.floor(size / 2)) {
    for (let at = best.length - size; at >= 0; at -= size) {
      const trial = [...best.slice(0, at), ...best.slice(at + size)];
      const r = runFuzz({ seed: 0, steps: trial.length, given: trial });
      if (!r.ok && !r.failure.includes('    at ')) {
        best = r.steps;
        console.log(`  ${best.length} steps still fail: ${r.failure.split('\n')[0]}`);
      }
    }
    if (size === 1) break;
  }
  return best;
}

const failed = [];
let refusals = 0;
for (const seed of seeds) {
  const started = Date.now();
  const result = runFuzz({ seed, steps });
  refusals += result.refusals.length;
  const took = `${((Date.now() - started) / 1000).toFixed(1)} s`;
  if (result.ok) {
    console.log(`seed ${seed}: passed (${result.steps.length} steps, ${result.refusals.length} refusals, ${took})`);
    if (single !== undefined) for (const line of result.log) console.log(`  ${line}`);
    if (single !== undefined || verbose) for (const line of result.refusals) console.log(`  refusal: ${line}`);
  } else {
    failed.push(seed);
    console.log(formatFailure(result, steps));
    if (minimize && single !== undefined) {
      const shortest = shorten(result.steps);
      const again = runFuzz({ seed, steps: shortest.length, given: shortest });
      console.log(`shortest list found (${shortest.length} steps), fails with: ${again.failure}`);
      for (const line of again.log) console.log(`  ${line}`);
      const file = path.join(os.tmpdir(), `avh-fuzz-seed-${seed}.json`);
      fs.writeFileSync(file, JSON.stringify(shortest, null, 1));
      console.log(`as JSON: ${file} (node scripts/fuzz.mjs --replay ${file})`);
    }
  }
}
console.log(`${refusals} refusals recorded (allowed by the README)`);
console.log(
  `${seeds.length - failed.length} seeds passed, ${failed.length} failed${failed.length ? `: ${failed.join(' ')}` : ''}`,
);
process.exit(failed.length > 0 ? 1 : 0);
