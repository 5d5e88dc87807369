// The hook launcher (src/cli/launcherScript.ts) and the hook command forms (src/cli/installation.ts), with the
// shipped CLI bundles (dist/) copied into extension folders as VS Code lays them out, real git repositories and real
// processes started through `sh -c` as agents start hooks.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  cliEntryFile,
  currentFormOf,
  hookCommand,
  launcherOf,
  runsThisInstallation,
  useLauncher,
} from '../../src/cli/installation';
import {
  defaultLauncherFile,
  installLauncher,
  isLauncherFile,
  LAUNCHER_FAILED_EXIT,
  launcherTarget,
} from '../../src/cli/launcherScript';
import { cleanupTempDirs, makeRepo, read, tempDir, testGitEnv } from '../support/gitFixtures';
import { CLI } from '../support/cliProcess';

const repoRoot = path.resolve(__dirname, '../../..');
const DIST = path.join(repoRoot, 'dist');
const BUNDLES = ['cli.js', 'cliRun.js', 'cliMain.js', 'cliHook.js', 'sql-wasm.wasm'];
const PREFIX = 'agent-version-history.agent-version-history-';
const { version } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const NODE = process.execPath;
/** One word for sh, in single quotes. */
const q = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * A stand-in for VS Code's Electron binary (none can be installed here): records ELECTRON_RUN_AS_NODE in `seen`,
 * then runs as Node, which is what Electron does with it.
 */
function electronStandIn(file: string, seen: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\nprintf %s "$ELECTRON_RUN_AS_NODE" > ${q(seen)}\nexec ${q(NODE)} "$@"\n`, {
    mode: 0o755,
  });
}

/** An installed extension version: `<extensions>/<publisher.name-version>/dist/` with the shipped CLI bundles. */
function installVersion(extensions: string, v: string): string {
  const dist = path.join(extensions, `${PREFIX}${v}`, 'dist');
  fs.mkdirSync(dist, { recursive: true });
  for (const bundle of BUNDLES) fs.copyFileSync(path.join(DIST, bundle), path.join(dist, bundle));
  return path.join(dist, 'cli.js');
}

/** A PATH with git and env(1) but no node (here node sits beside them in /usr/bin): links in a folder of their own. */
function pathWithoutNode(): string {
  const bin = tempDir('avh-bin-');
  for (const tool of ['git', 'env'])
    fs.symlinkSync(
      spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(),
      path.join(bin, tool),
    );
  return bin;
}

/** `sh -c <command>` as an agent runs a hook: payload on stdin, from another folder. */
function sh(command: string, options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
  const r = spawnSync('/bin/sh', ['-c', command], {
    cwd: options.cwd ?? tempDir('avh-cwd-'),
    input: options.input ?? '',
    encoding: 'utf8',
    env: { ...testGitEnv(), ...options.env },
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const prompt = (repo: string, session: string) =>
  JSON.stringify({ hook_event_name: 'UserPromptSubmit', session_id: session, cwd: repo, prompt: 'add a file' });
const stop = (repo: string, session: string) =>
  JSON.stringify({ hook_event_name: 'Stop', session_id: session, cwd: repo });

function runningChats(repo: string): string[] {
  const r = spawnSync(NODE, [CLI, 'status', '--json'], { cwd: repo, encoding: 'utf8', env: testGitEnv() });
  assert.equal(r.status, 0, r.stderr);
  return (JSON.parse(r.stdout) as { runningTurns: { chatId: string }[] }).runningTurns.map((t) => t.chatId);
}

describe('hook launcher: a stable path that survives updates and needs no Node of the user’s (real sh, dist bundles)', function () {
  this.timeout(60_000);
  before(function () {
    if (!BUNDLES.every((b) => fs.existsSync(path.join(DIST, b)))) throw new Error('run `node scripts/build.mjs` first');
  });
  afterEach(() => {
    useLauncher(null);
    cleanupTempDirs();
  });

  it('runs the installation it points at with node from PATH; a prompt and a Stop through `sh -c` record a turn', () => {
    const home = tempDir('avh-home-');
    const extensions = path.join(home, '.vscode/extensions');
    const cli = installVersion(extensions, version);
    const file = defaultLauncherFile(home);
    assert.equal(
      installLauncher({ file, cli, runtime: NODE, siblings: { dir: extensions, prefix: PREFIX } }),
      'written',
    );
    assert.equal(fs.statSync(file).mode & 0o777, 0o755);
    assert.equal(launcherTarget(file), cli);
    assert.equal(sh(`${file} --version`).stdout.trim(), `agent-versions ${version}`);
    const repo = makeRepo();
    const command = hookCommand('claude-code', { launcher: file });
    assert.equal(command, `${file} hook claude-code`);
    assert.equal(sh(command, { input: prompt(repo, 's-launch') }).code, 0);
    assert.deepEqual(runningChats(repo), ['s-launch']);
    const ended = sh(command, { input: stop(repo, 's-launch') });
    assert.equal(ended.code, 0, ended.stderr);
    assert.deepEqual(runningChats(repo), []);
    assert.equal(
      installLauncher({ file, cli, runtime: NODE, siblings: { dir: extensions, prefix: PREFIX } }),
      'unchanged',
    );
  });

  it('a stale installation: the version it names was removed by an update → the installed one runs; none left → a clear stderr line, exit 1 (never 2), nothing on stdout', () => {
    const home = tempDir('avh-home-');
    const extensions = path.join(home, '.vscode/extensions');
    const old = installVersion(extensions, '0.0.9');
    const file = defaultLauncherFile(home);
    installLauncher({ file, cli: old, runtime: NODE, siblings: { dir: extensions, prefix: PREFIX } });
    installVersion(extensions, version);
    fs.rmSync(path.dirname(path.dirname(old)), { recursive: true });
    const repo = makeRepo();
    const command = hookCommand('claude-code', { launcher: file });
    const updated = sh(command, { input: prompt(repo, 's-updated') });
    assert.equal(updated.code, 0, updated.stderr);
    assert.deepEqual(runningChats(repo), ['s-updated']);

    fs.rmSync(extensions, { recursive: true });
    const before = read(repo, 'README.md');
    const gone = sh(command, { input: stop(repo, 's-updated') });
    assert.equal(gone.code, LAUNCHER_FAILED_EXIT);
    assert.notEqual(gone.code, 2, 'exit 2 blocks the prompt in Claude Code, Gemini and VS Code');
    assert.equal(gone.stdout, '', 'stdout reaches the agent’s context');
    assert.match(
      gone.stderr,
      /^agent-versions: the Agent Version History extension is no longer installed \(.*0\.0\.9\/dist\/cli\.js is gone\), so nothing was recorded\. Install the extension again/,
    );
    assert.equal(gone.stderr.split('\n').length, 2, 'one line');
    assert.equal(read(repo, 'README.md'), before);
    assert.deepEqual(runningChats(repo), ['s-updated'], 'nothing changed');
  });

  it('no node on PATH: runs the CLI with the editor’s runtime (a path with spaces, quotes and parentheses, as macOS’s “Code Helper (Plugin)”) with ELECTRON_RUN_AS_NODE=1', () => {
    const home = tempDir(`avh-home it's "q" -`);
    const extensions = path.join(home, 'ext dir');
    const cli = installVersion(extensions, version);
    const helper = path.join(home, `Code Helper (Plugin) it's.app`, 'Code Helper');
    const seen = path.join(home, 'electron-run-as-node');
    electronStandIn(helper, seen);
    const file = defaultLauncherFile(home);
    installLauncher({ file, cli, runtime: helper });
    assert.equal(launcherTarget(file), cli);
    const command = hookCommand('claude-code', { launcher: file });
    assert.equal(command, `${q(file)} hook claude-code`);
    const repo = makeRepo();
    const r = sh(command, { input: prompt(repo, 's-electron'), env: { PATH: pathWithoutNode() } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.readFileSync(seen, 'utf8'), '1');
    assert.deepEqual(runningChats(repo), ['s-electron']);
    // The real Node binary by a link whose name has spaces: the same, without a stand-in.
    const link = path.join(home, 'Visual Studio Code.app', 'Code Helper');
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(NODE, link);
    installLauncher({ file, cli, runtime: link });
    assert.equal(
      sh(`${command.split(' hook')[0]} --version`, { env: { PATH: pathWithoutNode() } }).stdout.trim(),
      `agent-versions ${version}`,
    );
  });

  it('missing runtime: no node on PATH and the editor’s runtime gone → a clear stderr line, exit 1, nothing recorded', () => {
    const home = tempDir('avh-home-');
    const cli = installVersion(path.join(home, 'exts'), version);
    const file = defaultLauncherFile(home);
    installLauncher({ file, cli, runtime: path.join(home, 'code-server-4.0.0/lib/node') });
    const repo = makeRepo();
    const r = sh(`${file} hook claude-code`, { input: prompt(repo, 's-none'), env: { PATH: pathWithoutNode() } });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr,
      /^agent-versions: nothing can run the CLI: node is not on PATH and the editor that wrote this launcher \(.*code-server-4\.0\.0\/lib\/node\) is gone, so nothing was recorded\. Start VS Code once/,
    );
    assert.deepEqual(runningChats(repo), []);
  });

  it('a file at the launcher’s path that is not ours is left alone; a launcher is recognised by its marker, not its name', () => {
    const home = tempDir('avh-home-');
    const file = defaultLauncherFile(home);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '#!/bin/sh\nexec my-own-agent-versions "$@"\n', { mode: 0o755 });
    const cli = installVersion(path.join(home, 'exts'), version);
    assert.equal(installLauncher({ file, cli, runtime: NODE }), 'foreign');
    assert.equal(fs.readFileSync(file, 'utf8'), '#!/bin/sh\nexec my-own-agent-versions "$@"\n');
    assert.equal(isLauncherFile(file), false);
    assert.equal(launcherOf(`${file} hook claude-code`), null);
  });

  it('the CLI run through the launcher (a terminal’s `agent-versions connect`) writes the launcher form, which doctor calls this installation’s current form', () => {
    const home = tempDir('avh-home-');
    const cli = installVersion(path.join(home, 'exts'), version);
    const file = defaultLauncherFile(home);
    installLauncher({ file, cli, runtime: NODE });
    const repo = makeRepo();
    const r = sh(`${file} connect claude-code --local`, { cwd: repo, env: { HOME: home } });
    assert.equal(r.code, 0, r.stderr);
    const settings = JSON.parse(read(repo, '.claude/settings.local.json')) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    assert.equal(settings.hooks.UserPromptSubmit[0].hooks[0].command, `${file} hook claude-code`);
    // In this process (the tsc CLI): a launcher pointing at another installation is not this one; at this one, it is.
    assert.equal(runsThisInstallation(`${file} hook claude-code`, 'claude-code'), false);
    // This process's own entry (the compiled sources here; dist/cli.js in the shipped CLI).
    installLauncher({ file, cli: cliEntryFile(), runtime: NODE });
    assert.equal(runsThisInstallation(`${file} hook claude-code`, 'claude-code'), true);
    assert.equal(runsThisInstallation(`${file} hook codex`, 'claude-code'), false);
    assert.equal(currentFormOf(`${file} hook claude-code --init`, 'claude-code'), `${file} hook claude-code --init`);
    // With the launcher in use, a command naming the installation's own folder is the older form.
    useLauncher(file);
    const direct = hookCommand('claude-code', { launcher: null });
    assert.equal(runsThisInstallation(direct, 'claude-code'), true);
    assert.equal(currentFormOf(direct, 'claude-code'), `${file} hook claude-code`);
  });
});

describe('the Electron-runtime command form (no launcher: the editor’s binary runs the CLI as Node)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('env(1) sets ELECTRON_RUN_AS_NODE=1 before the runtime; quoted paths with spaces and quotes; a hook through `sh -c` records a turn', () => {
    const home = tempDir(`avh-electron it's "q" -`);
    const helper = path.join(home, `Code Helper (Plugin)`);
    const seen = path.join(home, 'seen');
    electronStandIn(helper, seen);
    const cli = installVersion(path.join(home, 'ext dir'), version);
    const command = hookCommand('claude-code', { cliFile: cli, runtime: { path: helper, electron: true } });
    assert.equal(command, `env -u NODE_EXTRA_CA_CERTS ELECTRON_RUN_AS_NODE=1 ${q(helper)} ${q(cli)} hook claude-code`);
    assert.equal(
      hookCommand('claude-code', { cliFile: cli, runtime: { path: NODE, electron: false } }),
      `env -u NODE_EXTRA_CA_CERTS ${NODE} ${q(cli)} hook claude-code`,
    );
    const repo = makeRepo();
    const r = sh(command, { input: prompt(repo, 's-direct'), env: { PATH: pathWithoutNode() } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.readFileSync(seen, 'utf8'), '1');
    assert.deepEqual(runningChats(repo), ['s-direct']);
  });
});
