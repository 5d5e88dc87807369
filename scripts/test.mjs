// `npm test`: installs the real-VS-Code harness (idempotent), builds, type checks, lints, then runs unit,
// fault-injection, real-agent (the real agent binaries against mock models), webview (Chromium), extension-host
// (code-server) and end-to-end (Chromium) tests. Its last line is "N passed, N failed"; a failed build, type check,
// lint or install counts as one failure each.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
const statsDir = mkdtempSync(path.join(os.tmpdir(), 'avh-test-stats-'));
let passed = 0;
let failed = 0;
const started = Date.now();

function step(name, command, args, { countsFile, env } = {}) {
  const t0 = Date.now();
  console.log(`\n=== ${name}`);
  const r = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  if (countsFile && existsSync(countsFile)) {
    const s = JSON.parse(readFileSync(countsFile, 'utf8'));
    passed += s.passed;
    failed += s.failed;
    console.log(`=== ${name}: ${s.passed} passed, ${s.failed} failed (${seconds} s)`);
    if (r.status !== 0 && s.failed === 0) {
      failed += 1;
      console.log(`=== ${name} exited ${r.status} without a failing test: counted as one failure`);
    }
  } else if (r.status === 0) {
    console.log(`=== ${name}: ok (${seconds} s)`);
    if (countsFile) {
      failed += 1;
      console.log(`=== ${name}: no results were recorded: counted as one failure`);
    }
  } else {
    failed += 1;
    console.log(`=== ${name}: FAILED (exit ${r.status ?? r.signal}, ${seconds} s)`);
  }
  return r.status === 0;
}

// The test layers talk to 127.0.0.1 only, so they run without NODE_EXTRA_CA_CERTS: every Node process started with it
// reads the whole CA bundle first (about 50 ms here), and the layers start thousands. The installs keep it (the
// registry may need it); the tests about it set it themselves (cliConnect.test.ts).
const TEST_ENV = { NODE_EXTRA_CA_CERTS: undefined };

const mocha = (name, globs, extra = []) => {
  const countsFile = path.join(statsDir, `${name.replace(/\W+/g, '-')}.json`);
  return step(
    name,
    process.execPath,
    [
      path.join(root, 'node_modules/mocha/bin/mocha.js'),
      '--reporter',
      path.join(root, 'out/test/support/countingReporter.js'),
      ...extra,
      ...globs,
    ],
    // The tests run dist/ (the shipped bundles): nothing may rebuild it under them (scripts/build.mjs refuses).
    { countsFile, env: { ...TEST_ENV, AVH_TEST_STATS: countsFile, AVH_DIST_READ_ONLY: '1' } },
  );
};

const wantsVsCode = !only || only === 'vscode' || only === 'e2e' || only === 'webview';
if (wantsVsCode)
  step('install VS Code harness (code-server, Node 24, Chromium)', 'bash', [
    path.join(root, 'scripts/vscode/setup.sh'),
  ]);
const built = step('build (vite webview + esbuild)', process.execPath, [path.join(root, 'scripts/build.mjs')]);
const builtWebview = built;
rmSync(path.join(root, 'out'), { recursive: true, force: true }); // no stale compiled tests from deleted sources
const compiled = step('type check + compile (tsc)', process.execPath, [
  path.join(root, 'node_modules/typescript/bin/tsc'),
  '-p',
  root,
]);
if (!only || only === 'webview')
  step('type check webview (svelte-check)', process.execPath, [
    path.join(root, 'node_modules/svelte-check/bin/svelte-check'),
    '--tsconfig',
    path.join(root, 'src/vscode/historyView/app/tsconfig.json'),
    '--fail-on-warnings',
    '--output',
    'human',
  ]);
if (!only) step('lint (eslint)', process.execPath, [path.join(root, 'node_modules/eslint/bin/eslint.js'), '.']);
if (!only) step('import cycles (src/)', process.execPath, [path.join(root, 'scripts/checkImportCycles.mjs')]);
if (!only) step('third-party notices', process.execPath, [path.join(root, 'scripts/thirdPartyNotices.mjs'), '--check']);
if (!only)
  step('format (prettier --check)', process.execPath, [
    path.join(root, 'node_modules/prettier/bin/prettier.cjs'),
    '--check',
    '--log-level',
    'warn',
    '.',
  ]);
if (compiled) {
  // Files are independent (own temp repositories and processes): two mocha workers, one per core.
  const parallel = ['--parallel', '--jobs', '2'];
  if (!only || only === 'unit')
    mocha('unit tests', ['out/test/unit/**/*.test.js'], ['--timeout', '60000', ...parallel]);
  if (!only || only === 'fault')
    mocha('fault-injection tests', ['out/test/fault/**/*.test.js'], ['--timeout', '300000', ...parallel]);
  if (built && (!only || only === 'agents')) {
    // The pinned agent binaries (npm registry, idempotent: a rerun checks stamps) into AVH_AGENTS_DIR.
    const agents = step(
      'install the real agents (Claude Code and the Agent SDK, Codex, Copilot CLI, Gemini CLI, opencode; tmux)',
      'bash',
      [path.join(root, 'scripts/agents/setup.sh')],
    );
    // Each file drives its own agent processes against its own mock servers: three workers (the agents mostly wait
    // on their own start-up), the longest files first so that no long one starts last.
    const longestFirst = ['opencode', 'claudeCode', 'codex', 'gemini', 'copilotCli'];
    const rank = (file) => {
      const at = longestFirst.indexOf(file.replace('.agent.test.js', ''));
      return at === -1 ? longestFirst.length : at;
    };
    const dir = path.join(root, 'out/test/agents');
    const files = (existsSync(dir) ? readdirSync(dir) : [])
      .filter((f) => f.endsWith('.agent.test.js'))
      .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
      .map((f) => path.join('out/test/agents', f));
    if (agents)
      mocha('real-agent tests (real binaries, mock models)', files, [
        '--timeout',
        '180000',
        '--parallel',
        '--jobs',
        '3',
      ]);
  }
  if (builtWebview && (!only || only === 'webview'))
    mocha('webview tests (Chromium, fake host)', ['out/test/webview/**/*.test.js'], ['--timeout', '60000']);
  if (built && (!only || only === 'vscode')) {
    const countsFile = path.join(statsDir, 'extension-host.json');
    step(
      'extension-host tests (real VS Code: code-server)',
      process.execPath,
      [
        path.join(root, 'scripts/vscode/runExtensionTests.mjs'),
        '--ext',
        root,
        '--tests',
        path.join(root, 'out/test/integration/index.js'),
        '--stats',
        countsFile,
      ],
      { countsFile, env: TEST_ENV },
    );
  }
  if (built && (!only || only === 'e2e')) {
    const countsFile = path.join(statsDir, 'e2e.json');
    step(
      'end-to-end tests (Chromium + code-server)',
      process.execPath,
      [path.join(root, 'scripts/vscode/runE2E.mjs'), '--stats', countsFile],
      { countsFile, env: TEST_ENV },
    );
  }
}
rmSync(statsDir, { recursive: true, force: true });
console.log(`\nwhole suite: ${((Date.now() - started) / 1000).toFixed(0)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
