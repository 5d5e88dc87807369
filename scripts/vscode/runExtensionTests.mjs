// Runs the mocha extension-host suite (test/integration/index.ts) inside a real VS Code: code-server with
// the smoke-test driver, which honours the `payload` URL parameter (extensionDevelopmentPath and
// extensionTestsPath), driven by headless Chromium. Last line: "N passed, N failed".
//
//   node scripts/vscode/runExtensionTests.mjs --ext <abs ext dir> --tests <abs compiled index.js>
//     [--workspace <abs folder>] [--stats <counts.json>] [--timeout <seconds>] [--grep <mocha grep>]
// --ext names the extension's folder; what runs is its test build (<ext>/dist/test-extension, made by
// scripts/build.mjs), the only build that registers the `agentVersions._test.*` commands the suite calls.
import { writeFileSync, mkdirSync, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { artifactsDir, launchChromium, repoRoot, startCodeServer } from './codeServer.mjs';

const RESULT_MARKER = 'AVH_MOCHA_RESULT';
// test/integration/index.ts prefixes mocha's reporter lines with this; the workbench's own log (and the
// extension host's plain console) stays untagged and is printed only on failure or with --verbose.
const EXT_HOST_TAG = 'AVH-EXT-HOST| ';
const workbenchLog = [];
const started = Date.now();

let opts;
try {
  ({ values: opts } = parseArgs({
    options: {
      ext: { type: 'string' },
      tests: { type: 'string' },
      workspace: { type: 'string' },
      stats: { type: 'string' },
      timeout: { type: 'string', default: '180' },
      grep: { type: 'string' },
      verbose: { type: 'boolean', default: !!process.env.AVH_DEBUG },
    },
  }));
} catch (err) {
  // Wrong arguments still honour --stats and the last-line contract.
  const at = process.argv.indexOf('--stats');
  opts = { stats: at > 0 ? process.argv[at + 1] : undefined };
  usage(err.message);
}

function usage(message) {
  console.error(
    `${message}\nusage: runExtensionTests.mjs --ext <abs dir> --tests <abs index.js> [--workspace <abs dir>] [--stats <file>] [--timeout <s>] [--grep <re>]`,
  );
  finish({ passed: 0, failed: 1 }, 2);
}

if (!opts.ext || !opts.tests) usage('--ext and --tests are required');
const extDir = path.join(path.resolve(opts.ext), 'dist/test-extension');
const testsPath = path.resolve(opts.tests);
if (!existsSync(path.join(extDir, 'package.json'))) usage(`no test build in ${extDir} (run 'npm run build' first)`);
if (!existsSync(testsPath)) usage(`--tests ${testsPath} does not exist (run 'npx tsc -p .' first)`);
const timeoutMs = Number(opts.timeout) * 1000;

let workspace;
if (opts.workspace) {
  workspace = { folder: path.resolve(opts.workspace), dispose() {} };
  if (!existsSync(workspace.folder) || !statSync(workspace.folder).isDirectory())
    usage(`--workspace ${workspace.folder} is not a folder`);
} else {
  const helper = path.join(repoRoot, 'out/test/integration/workspace.js');
  if (!existsSync(helper)) usage(`${helper} is missing (run 'npx tsc -p .' first) or pass --workspace`);
  workspace = createRequire(import.meta.url)(helper).createGitWorkspace();
}
process.on('exit', () => workspace.dispose()); // also after a signal (codeServer.mjs turns those into exit)

let server;
let browser;
let page;
let result = null; // the AVH_MOCHA_RESULT counts
let vscodeExit = null; // the exit code VS Code hands to codeAutomationExit
let harnessError = null;

try {
  server = await startCodeServer({
    smokeDriver: true,
    env: { AVH_EXT_HOST_LOG_TAG: EXT_HOST_TAG, ...(opts.grep ? { AVH_MOCHA_GREP: opts.grep } : {}) },
  });
  const remote = (p) => `vscode-remote://127.0.0.1:${server.port}${p}`;
  const url = server.workbenchUrl(workspace.folder, [
    ['extensionDevelopmentPath', remote(extDir)],
    ['extensionTestsPath', remote(testsPath)],
  ]);

  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (err) => opts.verbose && console.log(`[page error] ${err.message}`));
  page.on('console', (msg) => opts.verbose && console.log(`[page ${msg.type()}] ${msg.text()}`));

  let exited;
  const exitPromise = new Promise((resolve) => (exited = resolve));
  // VS Code calls both when the smoke-test driver is on: the extension host's console, then its exit code.
  await page.exposeFunction('codeAutomationLog', (type, message) => onLog(type, message));
  await page.exposeFunction('codeAutomationExit', (code) => exited(code));
  page.on('crash', () => exited(new Error('the workbench page crashed')));

  console.log(`[ext-tests] code-server ${server.url} (pid ${server.pid}), workspace ${workspace.folder}`);
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });

  let timer;
  const timeout = new Promise(
    (resolve) =>
      (timer = setTimeout(
        () => resolve(new Error(`timed out after ${opts.timeout} s`)),
        timeoutMs - (Date.now() - started),
      )),
  );
  const outcome = await Promise.race([exitPromise, timeout]);
  clearTimeout(timer);
  if (outcome instanceof Error) throw outcome;
  vscodeExit = Number(outcome);
  if (!result) throw new Error(`VS Code exited with ${vscodeExit} but the test index printed no ${RESULT_MARKER} line`);
} catch (err) {
  harnessError = err;
} finally {
  const failedRun = harnessError || vscodeExit !== 0 || !result || result.failed > 0;
  if (failedRun && page) await screenshot(page);
  if (failedRun && workbenchLog.length && !opts.verbose) {
    console.log(`[ext-tests] workbench log (last ${workbenchLog.length} lines):\n${workbenchLog.join('\n')}`);
  }
  if (harnessError && server) console.log(`[ext-tests] code-server log (tail):\n${server.logTail()}`);
  await browser?.close().catch(() => {});
  await server?.stop();
}

const counts = { passed: result?.passed ?? 0, failed: result?.failed ?? 0 };
if (harnessError) {
  console.log(`[ext-tests] harness error (counted as one failure): ${harnessError.message}`);
  counts.failed += 1;
} else if (vscodeExit !== 0 && counts.failed === 0) {
  console.log(`[ext-tests] VS Code exited with ${vscodeExit} without a failing test (counted as one failure)`);
  counts.failed += 1;
}
console.log(`[ext-tests] done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
finish(counts, counts.failed === 0 ? 0 : 1);

function onLog(_type, message) {
  const text = Array.isArray(message) ? message.join(' ') : String(message);
  for (const raw of text.split('\n')) {
    const at = raw.indexOf(EXT_HOST_TAG);
    if (at < 0) {
      if (opts.verbose) console.log(`[workbench] ${raw}`);
      workbenchLog.push(raw);
      if (workbenchLog.length > 300) workbenchLog.shift();
      continue;
    }
    const line = raw.slice(at + EXT_HOST_TAG.length);
    if (line.startsWith(RESULT_MARKER)) {
      try {
        result = JSON.parse(line.slice(RESULT_MARKER.length).trim());
      } catch {
        console.log(`[ext-tests] unreadable result line: ${line}`);
      }
      continue;
    }
    console.log(line);
  }
}

async function screenshot(p) {
  try {
    mkdirSync(artifactsDir, { recursive: true });
    const file = path.join(artifactsDir, `extension-tests-${new Date().toISOString().replace(/[:.]/g, '-')}.png`);
    await p.screenshot({ path: file, timeout: 10_000 });
    console.log(`[ext-tests] screenshot: ${file}`);
  } catch (err) {
    console.log(`[ext-tests] no screenshot: ${err.message}`);
  }
}

function finish(counts, code) {
  if (opts.stats) {
    mkdirSync(path.dirname(path.resolve(opts.stats)), { recursive: true });
    writeFileSync(opts.stats, JSON.stringify(counts));
  }
  console.log(`${counts.passed} passed, ${counts.failed} failed`);
  process.exit(code);
}
