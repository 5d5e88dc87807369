// `npm start`: a private VS Code (code-server) in your browser with Agent Version History installed from its
// packaged .vsix, opened on a demo repository in which a demo agent, driven through the real CLI like a terminal
// agent, already made a few turns: one completed, one cancelled with its partial changes left in the tree.
// Prints progress, then one line with the URL. Ctrl+C stops everything it started. A second run reuses the
// .vsix (when newer than the sources), the installed profile and the demo repository, so it is ready in seconds.
//
//   npm start -- [--repo <your repository>] [--port N] [--demo-repo <path>] [--profile <dir>] [--reset-demo]
//
// Local only: code-server listens on 127.0.0.1 without a password (--auth none).
/* global AbortController */
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DEMO_FOLDER, defaultDemoRepo, runDemoTurn } from './demoAgent.mjs';
import { groupAlive, installVsix, repoRoot, startCodeServer, vscodeTestDir } from './vscode/codeServer.mjs';

export const vsixPath = path.join(repoRoot, 'dist/agent-version-history.vsix');
const defaultProfile = path.join(vscodeTestDir, 'start');
// What the .vsix is made from: a change to any of these makes `npm start` package again.
const PACKAGE_INPUTS = [
  'src',
  'vite.config.ts',
  'media',
  'package.json',
  'package-lock.json',
  'scripts/build.mjs',
  'README.md',
  'CHANGELOG.md',
  'LICENSE',
  '.vscodeignore',
];
const PACKAGE_OUTPUTS = ['dist/extension.js', 'dist/cli.js', 'dist/agent-version-history.vsix'];
const DEMO_MARKER = 'avh-demo'; // in the demo repository's .git: "preparing" while npm start builds it, then "ready"

const say = (line) => console.log(`[start] ${line}`);

class StartError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

// ---- child processes: every one is tracked so Ctrl+C during preparation stops it too ----

const running = new Set();

/** Runs a command with its output passed through; rejects with a message naming it when it fails. */
function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'], ...options });
    running.add(child);
    child.once('error', (err) => {
      running.delete(child);
      reject(new StartError(`could not run ${command}: ${err.message}`));
    });
    child.once('exit', (code, signal) => {
      running.delete(child);
      if (code === 0) resolve();
      else
        reject(
          new StartError(
            `'${[command, ...args].map((a) => path.relative(repoRoot, a) || a).join(' ')}' failed (${signal ?? `exit ${code}`})`,
          ),
        );
    });
  });
}

// ---- the packaged extension ----

function newestMtime(file) {
  let st;
  try {
    st = statSync(file);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of readdirSync(file)) newest = Math.max(newest, newestMtime(path.join(file, name)));
  return newest;
}

/** True when the .vsix, the bundled extension and the CLI exist and are newer than everything they are made from. */
export function packageIsCurrent(root = repoRoot) {
  const outputs = PACKAGE_OUTPUTS.map((f) => path.join(root, f));
  if (!outputs.every((f) => existsSync(f))) return false;
  const oldestOutput = Math.min(...outputs.map((f) => statSync(f).mtimeMs));
  return Math.max(...PACKAGE_INPUTS.map((f) => newestMtime(path.join(root, f)))) <= oldestOutput;
}

/** Builds and packages the .vsix (`npm run package`) unless it is current; returns its path. */
export async function ensurePackaged() {
  if (packageIsCurrent()) {
    say(`extension: ${path.relative(repoRoot, vsixPath)} is up to date, packaging skipped`);
    return vsixPath;
  }
  say('extension: building and packaging (npm run package)…');
  await run(npmCommand(), ['run', '--silent', 'package'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (!existsSync(vsixPath)) throw new StartError(`npm run package finished but ${vsixPath} is missing`);
  say(`extension: packaged ${path.relative(repoRoot, vsixPath)}`);
  return vsixPath;
}

function npmCommand() {
  return process.platform === 'win32' ? 'npm.cmd' : 'npm';
}

/** Installs the .vsix into the private profile, unless exactly this .vsix is already installed there. */
async function ensureInstalled(vsix, profile) {
  const extensionsDir = path.join(profile, 'exts');
  const userDataDir = path.join(profile, 'user');
  const stamp = path.join(profile, 'installed-vsix.sha256');
  const digest = createHash('sha256').update(readFileSync(vsix)).digest('hex');
  if (existsSync(extensionsDir) && existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) {
    say(`profile: the extension is already installed in ${shown(profile)}`);
  } else {
    say(`profile: installing the .vsix into the private code-server profile ${shown(profile)}…`);
    // The version number does not change between builds: start from an empty extensions folder instead of --force.
    rmSync(extensionsDir, { recursive: true, force: true });
    rmSync(stamp, { force: true });
    mkdirSync(extensionsDir, { recursive: true });
    await installVsix(vsix, { extensionsDir, userDataDir });
    writeFileSync(stamp, digest);
  }
  return { extensionsDir, userDataDir };
}

// ---- the demo repository ----

function git(cwd, ...args) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Refuses a --demo-repo folder that holds something npm start did not make (it may be remade from scratch). */
function checkDemoRepoIsOurs(dir) {
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new StartError(`--demo-repo ${dir} is a file; nothing was started.`, 2);
  if (demoState(dir) === 'foreign') {
    throw new StartError(
      `${dir} already exists and was not made by npm start; nothing was started or changed. Pass --demo-repo <another path>, or open it with --repo ${dir}.`,
      2,
    );
  }
}

function demoState(dir) {
  const marker = path.join(dir, '.git', DEMO_MARKER);
  if (existsSync(marker)) return readFileSync(marker, 'utf8').trim(); // 'preparing' | 'ready'
  if (!existsSync(dir)) return 'absent';
  return readdirSync(dir).length === 0 ? 'absent' : 'foreign';
}

/**
 * Creates the demo repository (or reuses a finished one): a small project, then two demo agent turns through the
 * real CLI, the first completed, the second stopped after two of its three edits (partial changes left in the tree).
 */
export async function ensureDemoRepo(dir, { reset, signal }) {
  const state = demoState(dir);
  checkDemoRepoIsOurs(dir);
  if (state === 'ready' && !reset) {
    say(`demo repository: reusing ${shown(dir)} (--reset-demo makes a fresh one)`);
    return;
  }
  if (state !== 'absent') {
    say(
      `demo repository: ${state === 'preparing' ? 'an earlier start stopped while preparing it; ' : ''}making ${shown(dir)} afresh`,
    );
    rmSync(dir, { recursive: true, force: true });
  } else {
    say(`demo repository: creating ${shown(dir)}`);
  }
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, '.git', DEMO_MARKER), 'preparing');
  // Its own identity, no signing and no hooks: the demo must not depend on (or trigger) the user's git setup.
  git(dir, 'config', 'user.name', 'Demo User');
  git(dir, 'config', 'user.email', 'demo@example.invalid');
  git(dir, 'config', 'commit.gpgsign', 'false');
  writeFileSync(
    path.join(dir, 'README.md'),
    `# Demo project\n\nA scratch repository made by \`npm start\` for trying Agent Version History.\nThe demo agent (\`npm run demo-agent\`) edits files under \`${DEMO_FOLDER}/\`.\n`,
  );
  writeFileSync(path.join(dir, '.gitignore'), 'node_modules/\n*.log\n');
  git(dir, 'add', '-A');
  git(dir, '-c', 'core.hooksPath=/dev/null', 'commit', '-q', '--no-verify', '-m', 'Initial commit');

  const agentSay = (line) => say(`demo agent: ${line}`);
  await runDemoTurn({ repo: dir, stepMs: 100, signal, say: agentSay });
  if (signal.aborted) return;
  await runDemoTurn({ repo: dir, stepMs: 100, signal, say: agentSay, stopAfterSteps: 2 });
  if (signal.aborted) return;
  writeFileSync(path.join(dir, '.git', DEMO_MARKER), 'ready');
}

// ---- a repository the user names ----

function checkUserRepo(dir) {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new StartError(`--repo ${dir}: there is no such folder; nothing was started.`, 2);
  try {
    git(dir, 'rev-parse', '--show-toplevel');
  } catch {
    throw new StartError(
      `--repo ${dir} is not inside a git repository; nothing was started. Agent Version History records versions as git commits: run 'git init' there (and make a first commit) or leave out --repo to open the demo.`,
      2,
    );
  }
}

// ---- code-server ----

function portIsFree(port) {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * code-server runs with a private HOME; point git at the user's own global config so commits in the user's
 * repository carry their identity and settings, as in their own VS Code.
 */
function userGitEnv() {
  const candidates = [
    path.join(os.homedir(), '.gitconfig'),
    path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'git', 'config'),
  ];
  const global = candidates.find((f) => existsSync(f));
  return { GIT_CONFIG_NOSYSTEM: undefined, ...(global ? { GIT_CONFIG_GLOBAL: global } : {}) };
}

function shown(p) {
  const rel = path.relative(repoRoot, p);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
}

const USAGE = `Usage: npm start -- [--repo <path>] [--port N] [--demo-repo <path>] [--profile <dir>] [--reset-demo]
  --repo        open your own git repository instead of the demo (no demo turns are made in it)
  --port        the port on 127.0.0.1 (default: a free one)
  --demo-repo   where the demo repository lives (default ${shown(defaultDemoRepo)})
  --profile     the private code-server profile: user data and extensions (default ${shown(defaultProfile)})
  --reset-demo  throw the demo repository away and make it again
Local only: code-server listens on 127.0.0.1 without a password. Ctrl+C stops it.`;

function parseOptions(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        repo: { type: 'string' },
        port: { type: 'string' },
        'demo-repo': { type: 'string' },
        profile: { type: 'string' },
        'reset-demo': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (err) {
    throw new StartError(`${err.message}\n${USAGE}`, 2);
  }
  let port;
  if (values.port !== undefined) {
    port = /^\d{1,5}$/.test(values.port) ? Number(values.port) : NaN;
    if (!(port >= 1 && port <= 65535))
      throw new StartError(`--port must be a number from 1 to 65535, got "${values.port.slice(0, 20)}"`, 2);
  }
  if (values.repo && (values['demo-repo'] || values['reset-demo']))
    throw new StartError('--repo opens your own repository: --demo-repo and --reset-demo do not apply to it', 2);
  return {
    help: values.help,
    repo: values.repo ? path.resolve(values.repo) : undefined,
    port,
    demoRepo: path.resolve(values['demo-repo'] ?? defaultDemoRepo),
    profile: path.resolve(values.profile ?? defaultProfile),
    resetDemo: values['reset-demo'],
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const stopping = new AbortController();

async function main() {
  const options = parseOptions(process.argv.slice(2));
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  let server;
  let stopped = Promise.resolve();
  // While preparing, a signal stops the current step and main() unwinds (exit 130); once code-server runs, it is
  // stopped by its pid (its whole process group) and the script exits 0.
  const shutdown = (sig) => {
    if (stopping.signal.aborted) return;
    stopping.abort();
    say(`${sig}: stopping${server ? ` code-server (pid ${server.pid})` : ''}…`);
    for (const child of running) child.kill('SIGTERM');
    if (server) stopped = server.stop().then(() => say('stopped.'));
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, shutdown);
  const checkpoint = () => {
    if (stopping.signal.aborted) throw new StartError('stopped before it was ready', 130);
  };

  if (options.repo) checkUserRepo(options.repo);
  else checkDemoRepoIsOurs(options.demoRepo);
  if (options.port !== undefined && !(await portIsFree(options.port))) {
    throw new StartError(
      `port ${options.port} on 127.0.0.1 is in use: pick another with --port, or leave it out to use a free one.`,
      2,
    );
  }
  say('preparing a private VS Code (code-server) with Agent Version History…');
  say('harness: Node 24, code-server and Chromium under .vscode-test/ (scripts/vscode/setup.sh)');
  await run('bash', [path.join(repoRoot, 'scripts/vscode/setup.sh')]);
  checkpoint();
  const vsix = await ensurePackaged();
  checkpoint();
  const dirs = await ensureInstalled(vsix, options.profile);
  checkpoint();
  const folder = options.repo ?? options.demoRepo;
  if (!options.repo) await ensureDemoRepo(options.demoRepo, { reset: options.resetDemo, signal: stopping.signal });
  checkpoint();

  say(`code-server: starting on 127.0.0.1${options.port ? `:${options.port}` : ''}…`);
  server = await startCodeServer({ ...dirs, port: options.port, env: userGitEnv() });
  // From here this script stops code-server itself (SIGTERM, then SIGKILL after 5 s): drop the harness' own
  // signal handlers, which exit at once; its exit hook stays as the last line of defence.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    for (const listener of process.listeners(sig)) if (listener !== shutdown) process.removeListener(sig, listener);
  }
  if (stopping.signal.aborted) {
    await server.stop();
    throw new StartError('stopped before it was ready', 130);
  }
  say(`code-server: pid ${server.pid}, port ${server.port}`);
  say(`ready: open this URL in a browser on this machine (local only: 127.0.0.1, no password). Ctrl+C stops it.`);
  console.log(server.workbenchUrl(folder));
  if (!options.repo)
    say(`try it: "Agent Versions: Undo Agent Turn" from the palette (F1); make a new turn with 'npm run demo-agent'.`);

  // Wait for Ctrl+C; if code-server dies on its own, say so and exit.
  while (!stopping.signal.aborted) {
    await sleep(1000);
    if (!stopping.signal.aborted && !groupAlive(server.pid)) {
      const log = server.logTail();
      await server.stop();
      throw new StartError(`code-server stopped unexpectedly. Its last log lines:\n${log}`);
    }
  }
  await stopped;
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      if (stopping.signal.aborted) process.exit(130); // a step killed by Ctrl+C: no error to report
      if (err instanceof StartError) {
        console.error(`[start] ${err.message}`);
        process.exit(err.exitCode);
      }
      console.error(`[start] failed: ${err.stack ?? err}`);
      process.exit(1);
    },
  );
}
