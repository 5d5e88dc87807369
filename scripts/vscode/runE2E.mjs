// End-to-end tests: packages the extension into a .vsix (this also proves packaging), then runs mocha in
// plain Node over out/test/e2e/**/*.e2e.test.js; the tests install the .vsix into code-server and drive
// Chromium (test/e2e/harness.ts). Needs `npm run build` and `tsc` first. Last line: "N passed, N failed".
// It also packages the test build (dist/test-extension/, failpoints kept) as a second, test-only .vsix for the
// walk that kills the extension host mid-restore (AVH_E2E_TEST_VSIX); the .vsix users get has no failpoints.
//
//   node scripts/vscode/runE2E.mjs [--ext <dir to package, default the repo>] [--vsix <prebuilt .vsix>]
//     [--test-ext <test build to package, default dist/test-extension>]
//     [--tests <dir with *.e2e.test.js, default out/test/e2e>] [--stats <counts.json>] [--grep <re>]
//     [--timeout <overall seconds, default 1200>] [--jobs <files run side by side, default 2>]
//
// Files run side by side in `--jobs` worker processes (one mocha per file, each file its own code-server and
// Chromium in temporary profiles on free ports), largest file first. A file spends most of its time waiting on the
// workbench (about half a core), so two at once on this 2-core machine take about two thirds of the time. Each
// file's output is printed whole when it finishes, so the log reads file by file.
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Mocha from 'mocha';
import { repoRoot } from './codeServer.mjs';

const started = Date.now();
let opts;
try {
  ({ values: opts } = parseArgs({
    options: {
      ext: { type: 'string', default: repoRoot },
      vsix: { type: 'string' },
      'test-ext': { type: 'string', default: path.join(repoRoot, 'dist/test-extension') },
      tests: { type: 'string', default: path.join(repoRoot, 'out/test/e2e') },
      stats: { type: 'string' },
      grep: { type: 'string' },
      timeout: { type: 'string', default: '1200' },
      jobs: { type: 'string', default: '2' },
      // Internal: run these files (comma-separated) in this process and write their counts to --stats.
      files: { type: 'string' },
    },
  }));
} catch (err) {
  // Wrong arguments still honour --stats and the last-line contract.
  const at = process.argv.indexOf('--stats');
  opts = { stats: at > 0 ? process.argv[at + 1] : undefined };
  console.error(err.message);
  finish({ passed: 0, failed: 1 }, 2);
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'avh-vsix-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
  process.once(sig, () => process.exit(128 + os.constants.signals[sig]));
let counts = { passed: 0, failed: 0 };
let exitCode = 1;

const workers = new Set();
process.on('exit', () => {
  for (const worker of workers) worker.kill('SIGTERM');
});
// A hung browser or server must not hang CI: codeServer.mjs kills its process groups on exit, and so does each
// worker, which the exit handler above stops with SIGTERM.
const watchdog = setTimeout(
  () => {
    console.log(`[e2e] timed out after ${opts.timeout} s (counted as one failure)`);
    finish({ passed: counts.passed, failed: counts.failed + 1 }, 1);
  },
  Number(opts.timeout) * 1000,
);
watchdog.unref();

try {
  if (opts.files) {
    // A worker: the .vsix paths come in the environment from the parent.
    counts = await runMocha(opts.files.split(','));
    exitCode = counts.failed === 0 ? 0 : 1;
  } else {
    const vsix = opts.vsix ? path.resolve(opts.vsix) : packageExtension(path.resolve(opts.ext), 'extension');
    const testExt = path.resolve(opts['test-ext']);
    if (!existsSync(path.join(testExt, 'package.json')))
      throw new Error(`no test build at ${testExt} (run 'npm run build' first)`);
    const testVsix = packageExtension(testExt, 'test-extension');
    const files = existsSync(opts.tests)
      ? readdirSync(opts.tests, { recursive: true, encoding: 'utf8' })
          .filter((f) => f.endsWith('.e2e.test.js'))
          .map((f) => path.join(opts.tests, f))
      : [];
    if (files.length === 0) throw new Error(`no *.e2e.test.js under ${opts.tests} (run 'npx tsc -p .' first)`);
    process.env.AVH_E2E_VSIX = vsix;
    process.env.AVH_E2E_TEST_VSIX = testVsix;
    const jobs = Math.max(1, Number.parseInt(opts.jobs, 10) || 1);
    counts = jobs === 1 ? await runMocha(files.sort()) : await runSideBySide(files, jobs);
    exitCode = counts.failed === 0 ? 0 : 1;
  }
} catch (err) {
  console.log(`[e2e] harness error (counted as one failure): ${err.stack ?? err}`);
  counts.failed += 1;
}
if (!opts.files) console.log(`[e2e] done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
finish(counts, exitCode);

/** Runs `files` in this process with the spec reporter; resolves to their counts. */
async function runMocha(files) {
  const mocha = new Mocha({ ui: 'bdd', reporter: 'spec', timeout: 180_000, slow: 20_000, grep: opts.grep });
  for (const file of files) mocha.addFile(file);
  await mocha.loadFilesAsync();
  return new Promise((resolve) => {
    const runner = mocha.run((failures) => resolve({ passed: runner.stats?.passes ?? 0, failed: failures }));
  });
}

/**
 * Runs each file in its own worker process, `jobs` at a time, the largest file first (size stands in for length:
 * the longest walk should not start last). A worker that ends without counts is one failure.
 */
async function runSideBySide(files, jobs) {
  const queue = files
    .map((file) => ({ file, size: statSync(file).size }))
    .sort((a, b) => b.size - a.size)
    .map((f) => f.file);
  const total = { passed: 0, failed: 0 };
  const runOne = (file) =>
    new Promise((resolve) => {
      const stats = path.join(tmp, `${path.basename(file)}.json`);
      const args = [
        new URL(import.meta.url).pathname,
        '--files',
        file,
        '--stats',
        stats,
        ...(opts.grep ? ['--grep', opts.grep] : []),
      ];
      const worker = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
      workers.add(worker);
      const output = [];
      worker.stdout.on('data', (d) => output.push(d));
      worker.stderr.on('data', (d) => output.push(d));
      const t0 = Date.now();
      worker.on('close', (code, signal) => {
        workers.delete(worker);
        let c = { passed: 0, failed: 1 };
        try {
          c = JSON.parse(readFileSync(stats, 'utf8'));
        } catch {
          output.push(
            Buffer.from(
              `[e2e] ${path.basename(file)} ended (${signal ?? `exit ${code}`}) without counts: counted as one failure\n`,
            ),
          );
        }
        total.passed += c.passed;
        total.failed += c.failed;
        process.stdout.write(
          `\n[e2e] ${path.basename(file)}: ${c.passed} passed, ${c.failed} failed (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`,
        );
        process.stdout.write(Buffer.concat(output));
        resolve();
      });
    });
  const lane = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) await runOne(file);
  };
  await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, lane));
  return total;
}

/** Packages `extDir` into `<tmp>/<name>.vsix` with vsce and returns its path. */
function packageExtension(extDir, name) {
  // vsce globs every file under the folder before applying .vscodeignore; the 800 MB harness in
  // .vscode-test/ alone makes that take 10+ s. A copy without the folders vsce never ships anyway
  // (.git, node_modules with --no-dependencies, .vscode-test, and the benchmarks' work folder, over a GB after a
  // large-repository run) packages the same files in about a second.
  const stage = path.join(tmp, `${name}-stage`);
  const skip = new Set(['.git', 'node_modules', '.vscode-test', 'bench/.work'].map((d) => path.join(extDir, d)));
  cpSync(extDir, stage, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (src) => !skip.has(src) && !src.endsWith('.vsix'),
  });
  const out = path.join(tmp, `${name}.vsix`);
  const vsce = path.join(repoRoot, 'node_modules/@vscode/vsce/vsce');
  console.log(`[e2e] vsce package --no-dependencies (${extDir})`);
  // stdin closed: vsce never waits for an answer (without a TTY it warns and goes on).
  const r = spawnSync(
    process.execPath,
    [vsce, 'package', '--no-dependencies', '--no-rewrite-relative-links', '-o', out],
    {
      cwd: stage,
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    },
  );
  if (r.status !== 0 || !existsSync(out)) {
    throw new Error(`vsce package failed (exit ${r.status}; did 'npm run build' run?):\n${r.stdout}${r.stderr}`);
  }
  const warnings = `${r.stdout}${r.stderr}`.split('\n').filter((l) => /WARNING/.test(l));
  for (const w of warnings) console.log(`[e2e] vsce: ${w.trim()}`);
  return out;
}

function finish(c, code) {
  if (opts.stats) {
    mkdirSync(path.dirname(path.resolve(opts.stats)), { recursive: true });
    writeFileSync(opts.stats, JSON.stringify(c));
  }
  // A worker's counts go to its --stats file; the parent prints them with the file's name.
  if (!opts.files) console.log(`${c.passed} passed, ${c.failed} failed`);
  process.exit(code);
}
