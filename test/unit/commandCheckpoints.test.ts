/**
 * Issue 34: a checkpoint just before an agent's destructive shell command, through the shipped CLI bundle
 * (dist/cli.js) as real processes in real git repositories, with each agent's own pre-tool payload
 * (test/fixtures/hooks/, captured from the real binaries; opencode's is our plugin's) — then the command itself really runs, and
 * `undo --before-command` brings the working tree back exactly; nothing is lost.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DurableStore } from '../../src/core/store/durableStore';
import { CHECKPOINT_REF_PREFIX, savedFilesDir } from '../../src/core/turns/commandCheckpoints';
import { repoPicture } from '../support/assertions';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  read,
  testGitEnv,
  write,
} from '../support/gitFixtures';

const ROOT = path.resolve(__dirname, '../../..');
const DIST_CLI = path.join(ROOT, 'dist/cli.js');
/** The test build's entry: AVH_HOOK_FAST=off sends every event down the full path (cliProcess.ts TEST_BUILD_CLI). */
const TEST_BUILD_CLI = path.join(ROOT, 'dist/test-extension/dist/cli.js');
const FIXTURES = path.join(ROOT, 'test/fixtures/hooks');
const CAPTURED_REPO = '/home/user/work/repo';
const SESSION = 'c4e0f7a1-0d1e-4c55-9b2f-7a1f0e3c9d21';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], cwd: string, input = '', fullPath = false, env: NodeJS.ProcessEnv = {}): Run {
  const r = spawnSync(process.execPath, [fullPath ? TEST_BUILD_CLI : DIST_CLI, ...args], {
    cwd,
    input,
    encoding: 'utf8',
    env: { ...testGitEnv(), COPILOT_CLI: '', ...(fullPath ? { AVH_HOOK_FAST: 'off' } : {}), ...env },
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function payload(name: string, repo: string, overrides: Record<string, unknown> = {}): string {
  const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8').split(CAPTURED_REPO).join(repo);
  return JSON.stringify({ ...(JSON.parse(text) as object), cwd: repo, session_id: SESSION, ...overrides });
}

interface HookJson {
  action: string;
  reason?: string;
  turnId?: string;
  checkpointId?: string;
  command?: string;
  files?: number;
}

function hook(agent: string, name: string, repo: string, overrides: Record<string, unknown> = {}): HookJson {
  const r = cli(['hook', agent, '--json'], repo, payload(name, repo, overrides));
  assert.equal(r.code, 0, `hook ${agent} ${name}: ${r.stderr}`);
  return JSON.parse(r.stdout) as HookJson;
}

/** Claude Code's PreToolUse for its Bash tool running `command`. */
const bash = (repo: string, command: string) =>
  hook('claude-code', 'claude-code/PreToolUse.json', repo, { tool_name: 'Bash', tool_input: { command } });

/** The command as the agent's shell runs it (after its hook returned). */
function sh(repo: string, command: string): void {
  const r = spawnSync('sh', ['-c', command], { cwd: repo, env: testGitEnv(), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

function repoWithIgnored(): string {
  const repo = makeRepo();
  write(repo, '.gitignore', '.env\n*.log\nnode_modules/\n');
  write(repo, 'a.txt', 'a0\n');
  write(repo, 'src/keep.ts', 'keep\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'start');
  write(repo, '.env', 'SECRET=1\n');
  write(repo, 'debug.log', 'log\n');
  write(repo, 'node_modules/dep/index.js', 'dep\n');
  return repo;
}

describe('checkpoints before an agent’s destructive commands (issue 34; dist/cli.js, real git)', function () {
  this.timeout(120_000);
  afterEach(() => cleanupTempDirs());

  it('git reset --hard then git clean -fdx in one Claude Code turn: each restored exactly from its checkpoint', () => {
    const repo = repoWithIgnored();
    const before = contentInventory(repo);
    const began = hook('claude-code', 'claude-code/UserPromptSubmit.json', repo);
    assert.equal(began.action, 'began');
    write(repo, 'a.txt', 'a by the agent\n');
    write(repo, 'new.txt', 'new by the agent\n');
    const atReset = repoPicture(repo);
    const reset = bash(repo, 'cd src && git reset --hard');
    assert.equal(reset.action, 'checkpoint', JSON.stringify(reset));
    assert.equal(reset.turnId, began.turnId);
    assert.equal(reset.command, 'git reset --hard');
    assert.equal(reset.files, 0, 'reset --hard does not reach ignored files: none copied');
    sh(repo, 'git reset -q --hard');
    assert.equal(read(repo, 'a.txt'), 'a0\n', 'the agent’s edit is gone from the tree');
    const atClean = repoPicture(repo);
    const clean = bash(repo, 'git clean -fdx');
    assert.equal(clean.action, 'checkpoint');
    assert.equal(clean.command, 'git clean -x');
    assert.equal(clean.files, 3, '.env, debug.log and the small node_modules/ copied aside');
    sh(repo, 'git clean -q -fdx');
    assert.equal(fs.existsSync(path.join(repo, '.env')), false);
    assert.equal(hook('claude-code', 'claude-code/Stop.json', repo).action, 'ended');

    const listed = cli(['checkpoints', '--json'], repo);
    assert.equal(listed.code, 0, listed.stderr);
    const list = JSON.parse(listed.stdout) as Array<{ id: string; label: string; turnId: string }>;
    assert.deepEqual(
      list.map((k) => [k.id, k.label, k.turnId]),
      [
        [reset.checkpointId, 'git reset --hard', began.turnId],
        [clean.checkpointId, 'git clean -x', began.turnId],
      ],
    );
    assert.doesNotMatch(cli(['checkpoints'], repo).stdout, /cd src/, 'the command text is not printed');

    const back = cli(['undo', '--before-command', reset.checkpointId!, '--json'], repo);
    assert.equal(back.code, 0, back.stderr);
    assert.equal((JSON.parse(back.stdout) as { result: string }).result, 'restored');
    assert.match(git(repo, 'log', '-1', '--format=%s'), /^\[Restore\]/);
    const now = repoPicture(repo);
    for (const file of ['a.txt', 'new.txt', 'src/keep.ts', '.gitignore'])
      assert.equal(now[file], atReset[file], `${file} as just before git reset --hard`);
    assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=no').trim(), '');

    const beforeClean = cli(['undo', '--before-command', clean.checkpointId!, '--json'], repo);
    assert.equal(beforeClean.code, 0, beforeClean.stderr);
    assert.equal((JSON.parse(beforeClean.stdout) as { broughtBack: number }).broughtBack, 3);
    const after = repoPicture(repo);
    for (const file of ['a.txt', 'new.txt', '.env', 'debug.log', 'node_modules/dep/index.js'])
      assert.equal(after[file], atClean[file], `${file} as just before git clean -fdx`);
    assert.equal(fs.statSync(path.join(repo, '.git/agent-versions')).isDirectory(), true);
    assertNothingLost(repo, before);
  });

  for (const fullPath of [false, true]) {
    it(`git clean -fdx keeps an ignored build folder whole and a dependency folder past the cap not at all; rm keeps no build folder (${fullPath ? 'the full path' : 'the fast path'})`, () => {
      const repo = makeRepo();
      write(repo, '.gitignore', '.env\nbuild/\nnode_modules/\n');
      write(repo, 'src/app.ts', 'app\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'start');
      write(repo, '.env', 'SECRET=1\n');
      write(repo, 'build/app.js', 'built\n');
      write(repo, 'build/assets/logo.svg', '<svg/>\n');
      fs.symlinkSync('app.js', path.join(repo, 'build/latest.js'));
      fs.chmodSync(path.join(repo, 'build/app.js'), 0o755);
      // 5,001 files: one past what a checkpoint copies of dependency and build folders.
      for (let i = 0; i <= 5_000; i++) write(repo, `node_modules/dep${i % 50}/f${i}.js`, `${i}\n`);
      const before = contentInventory(repo);
      const preTool = (command: string): HookJson => {
        const input = payload('claude-code/PreToolUse.json', repo, { tool_name: 'Bash', tool_input: { command } });
        const r = cli(['hook', 'claude-code', '--tool', '--json'], repo, input, fullPath);
        assert.equal(r.code, 0, r.stderr);
        return JSON.parse(r.stdout) as HookJson;
      };
      assert.equal(hook('claude-code', 'claude-code/UserPromptSubmit.json', repo).action, 'began');
      const rm = preTool('rm -rf src');
      assert.equal(rm.action, 'checkpoint', JSON.stringify(rm));
      assert.equal(rm.files, 0, 'rm -rf src: no ignored file under src/, no build or dependency folder');
      assert.equal(preTool('rm -rf src .env build').files, 1, '.env only: rm keeps no build folder, even named');
      const atClean = repoPicture(repo);
      const clean = preTool('git clean -fdx');
      assert.equal(clean.action, 'checkpoint', JSON.stringify(clean));
      assert.equal(
        clean.files,
        4,
        '.env and build/ whole (a symlink included); node_modules/ past the cap: none of it',
      );
      sh(repo, 'git clean -q -fdx');
      assert.equal(fs.existsSync(path.join(repo, 'build')), false);
      assert.equal(hook('claude-code', 'claude-code/Stop.json', repo).action, 'ended');

      const back = cli(['undo', '--before-command', clean.checkpointId!, '--json'], repo);
      assert.equal(back.code, 0, back.stderr);
      assert.equal((JSON.parse(back.stdout) as { broughtBack: number }).broughtBack, 4);
      const now = repoPicture(repo);
      for (const file of ['.env', 'build/app.js', 'build/assets/logo.svg', 'src/app.ts'])
        assert.equal(now[file], atClean[file], `${file} as just before git clean -fdx`);
      assert.equal(fs.readlinkSync(path.join(repo, 'build/latest.js')), 'app.js');
      assert.equal(fs.statSync(path.join(repo, 'build/app.js')).mode & 0o111, 0o111, 'the exec bit kept');
      assert.equal(fs.existsSync(path.join(repo, 'node_modules')), false, 'past the cap: left out whole, never half');
      const kept = savedFilesDir(path.join(repo, '.git', 'agent-versions'), clean.checkpointId!);
      assert.equal(fs.statSync(kept).mode & 0o777, 0o700);
      assertNothingLost(repo, before);
    });
  }

  for (const fullPath of [false, true]) {
    it(`rm of named paths keeps only the ignored files at or under them; a glob or an rm elsewhere keeps every one (${fullPath ? 'the full path' : 'the fast path'})`, () => {
      const repo = makeRepo();
      write(repo, '.gitignore', '.env\n*.log\n.cache/\n');
      write(repo, 'src/app.ts', 'app\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'start');
      write(repo, '.env', 'SECRET=1\n');
      write(repo, 'logs/app.log', 'app log\n');
      write(repo, 'logs/old/1.log', 'old log\n');
      write(repo, 'src/debug.log', 'debug\n');
      for (let i = 0; i < 20; i++) write(repo, `.cache/c${i}`, `${i}\n`);
      const before = contentInventory(repo);
      const preTool = (command: string): HookJson => {
        const input = payload('claude-code/PreToolUse.json', repo, { tool_name: 'Bash', tool_input: { command } });
        const r = cli(['hook', 'claude-code', '--tool', '--json'], repo, input, fullPath);
        assert.equal(r.code, 0, r.stderr);
        return JSON.parse(r.stdout) as HookJson;
      };
      assert.equal(hook('claude-code', 'claude-code/UserPromptSubmit.json', repo).action, 'began');
      assert.equal(preTool('rm -rf logs').files, 2, 'logs/ only: not .env, src/debug.log or .cache/');
      assert.equal(
        preTool('cd src && rm debug.log').files,
        1,
        'the shell in src/: src/debug.log, found from any folder',
      );
      assert.equal(
        preTool(`cd .. && rm -rf ${path.basename(repo)}/logs`).files,
        2,
        'the shell outside the repository: logs/ found by its name',
      );
      assert.equal(preTool('rm src/app.ts').files, 0, 'a tracked file: the tree is saved, no ignored file');
      assert.equal(preTool('rm -f *.log').files, 24, 'a glob: every ignored file');
      const atRm = repoPicture(repo);
      const rm = preTool('rm -rf logs');
      sh(repo, 'rm -rf logs');
      assert.equal(hook('claude-code', 'claude-code/Stop.json', repo).action, 'ended');
      const back = cli(['undo', '--before-command', rm.checkpointId!, '--json'], repo);
      assert.equal(back.code, 0, back.stderr);
      assert.equal((JSON.parse(back.stdout) as { broughtBack: number }).broughtBack, 2);
      const now = repoPicture(repo);
      for (const file of ['logs/app.log', 'logs/old/1.log', '.env', 'src/debug.log'])
        assert.equal(now[file], atRm[file], `${file} as just before rm -rf logs`);
      assertNothingLost(repo, before);
    });
  }

  it('a checkpoint taken by the hook prunes those of turns the history archive moved out (ref, saved files, row)', async () => {
    const repo = repoWithIgnored();
    const stateDir = path.join(repo, '.git', 'agent-versions');
    const ref = (id: string) => `${CHECKPOINT_REF_PREFIX}${id}`;
    const hasRef = (id: string) => git(repo, 'for-each-ref', '--format=%(refname)', ref(id)).trim() === ref(id);
    const listed = () =>
      (JSON.parse(cli(['checkpoints', '--json'], repo).stdout) as Array<{ id: string }>).map((c) => c.id);
    hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, { prompt: 'Turn 0' });
    const old = bash(repo, 'git clean -fdx');
    assert.equal(old.action, 'checkpoint', JSON.stringify(old));
    sh(repo, 'git clean -q -fdx');
    hook('claude-code', 'claude-code/Stop.json', repo);
    for (let i = 1; i < 12; i++) {
      hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, { prompt: `Turn ${i}` });
      write(repo, `f${i}.txt`, `f${i}\n`);
      hook('claude-code', 'claude-code/Stop.json', repo);
    }
    // The history archive moves the old turns out, as a long history would at the default keep (1,500).
    const { store } = await DurableStore.open(stateDir, { compactEvery: 1, archiveKeep: 4, archiveMargin: 4 });
    await store.transaction((tx) => tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('test_rotation', '1')"));
    await store.read(() => undefined);
    await store.close();
    assert.deepEqual(listed(), [old.checkpointId], 'archiving alone removes nothing');
    assert.ok(hasRef(old.checkpointId!) && fs.existsSync(savedFilesDir(stateDir, old.checkpointId!)));

    const before = contentInventory(repo);
    hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, { prompt: 'Newer' });
    write(repo, '.env', 'SECRET=2\n');
    const newer = bash(repo, 'rm -rf src .env');
    assert.equal(newer.action, 'checkpoint', JSON.stringify(newer));
    assert.deepEqual(listed(), [newer.checkpointId], 'the archived turn’s checkpoint went with the new one');
    assert.equal(hasRef(old.checkpointId!), false, 'its ref is gone');
    assert.equal(fs.existsSync(savedFilesDir(stateDir, old.checkpointId!)), false, 'its saved .env is gone');
    assert.ok(hasRef(newer.checkpointId!) && fs.existsSync(savedFilesDir(stateDir, newer.checkpointId!)));
    // With nothing left to prune, the next checkpoint keeps the running turn's own.
    sh(repo, 'rm -rf src');
    const third = bash(repo, 'git reset --hard');
    assert.equal(third.action, 'checkpoint', JSON.stringify(third));
    assert.deepEqual(listed(), [newer.checkpointId, third.checkpointId]);
    assertNothingLost(repo, before);
  });

  it('the ignored files kept aside are owner-only and in no ref; a file there now is never overwritten', () => {
    const repo = repoWithIgnored();
    hook('claude-code', 'claude-code/UserPromptSubmit.json', repo);
    const taken = bash(repo, 'rm -rf .env debug.log');
    assert.equal(taken.action, 'checkpoint');
    const refs = git(repo, 'for-each-ref', '--format=%(objectname)', 'refs/');
    const envBlob = git(repo, 'hash-object', '.env').trim();
    const reachable = git(repo, 'rev-list', '--objects', '--all');
    assert.ok(refs.length > 0);
    assert.equal(reachable.includes(envBlob), false, '.env’s bytes are reachable from no ref (git push --mirror)');
    const saved = path.join(repo, '.git/agent-versions/checkpoints', taken.checkpointId!);
    assert.equal(fs.statSync(saved).mode & 0o077, 0, 'owner-only folder');
    sh(repo, 'rm -rf .env debug.log');
    write(repo, 'debug.log', 'a newer log\n');
    hook('claude-code', 'claude-code/Stop.json', repo);
    const back = cli(['undo', '--before-command', taken.checkpointId!, '--json'], repo);
    assert.equal(back.code, 0, back.stderr);
    assert.equal(read(repo, '.env'), 'SECRET=1\n');
    assert.equal(read(repo, 'debug.log'), 'a newer log\n', 'present: not overwritten');
  });

  it('privacy: the command’s text (paths, arguments) never reaches output or logs, with --verbose too', () => {
    const repo = repoWithIgnored();
    const canary = 'CANARY-5e1d-command-text';
    write(repo, `${canary}/f.txt`, 'f\n');
    hook('claude-code', 'claude-code/UserPromptSubmit.json', repo);
    const input = payload('claude-code/PreToolUse.json', repo, {
      tool_name: 'Bash',
      tool_input: { command: `rm -rf ${canary}` },
    });
    const verbose = cli(['hook', 'claude-code', '--json', '--verbose'], repo, input);
    assert.equal(verbose.code, 0, verbose.stderr);
    const taken = JSON.parse(verbose.stdout) as HookJson;
    assert.equal(taken.action, 'checkpoint');
    const outputs = [
      verbose.stdout,
      verbose.stderr,
      ...['checkpoints', 'status'].flatMap((c) => {
        const r = cli([c, '--verbose'], repo);
        const j = cli([c, '--json'], repo);
        return [r.stdout, r.stderr, j.stdout, j.stderr];
      }),
    ];
    sh(repo, `rm -rf ${canary}`);
    const back = cli(['undo', '--before-command', taken.checkpointId!, '--verbose'], repo);
    assert.equal(back.code, 0, back.stderr);
    outputs.push(back.stdout, back.stderr);
    for (const text of outputs) assert.equal(text.includes(canary), false, text.slice(0, 400));
    assert.equal(read(repo, `${canary}/f.txt`), 'f\n', 'and the folder is back');
  });

  it('Codex’s PreToolUse for its Bash tool takes the checkpoint the same way', () => {
    const repo = repoWithIgnored();
    const began = hook('codex', 'codex/UserPromptSubmit.json', repo);
    write(repo, 'a.txt', 'a by codex\n');
    const taken = hook('codex', 'codex/PostToolUse-Bash.json', repo, {
      hook_event_name: 'PreToolUse',
      tool_input: { command: 'git stash' },
      tool_response: undefined,
    });
    assert.equal(taken.action, 'checkpoint', JSON.stringify(taken));
    assert.equal(taken.turnId, began.turnId);
    sh(repo, 'git stash -q');
    assert.equal(read(repo, 'a.txt'), 'a0\n');
    hook('codex', 'codex/Stop.json', repo);
    assert.equal(cli(['undo', '--before-command', taken.checkpointId!], repo).code, 0);
    assert.equal(read(repo, 'a.txt'), 'a by codex\n');
  });

  // Each agent's own pre-tool payload (captured from Gemini CLI 0.61.0 and Copilot CLI 1.0.102; opencode's is our
  // plugin's; VS Code's run_in_terminal is its source's tool name in Copilot CLI's payload shape).
  for (const [what, agent, begin, pre, shell, end] of [
    [
      'Gemini CLI’s BeforeTool (run_shell_command)',
      'gemini',
      'gemini/BeforeAgent.json',
      'gemini/BeforeTool-run_shell_command.json',
      { tool_input: { command: 'git stash' } },
      'gemini/AfterAgent.json',
    ],
    [
      'Copilot CLI’s PreToolUse (Bash)',
      'copilot',
      'copilot-cli/UserPromptSubmit.json',
      'copilot-cli/PreToolUse-Bash.json',
      { tool_input: { command: 'git stash' } },
      'copilot-cli/Stop.json',
    ],
    [
      'VS Code’s PreToolUse (run_in_terminal)',
      'copilot',
      'vscode/UserPromptSubmit.json',
      'copilot-cli/PreToolUse-Bash.json',
      { tool_name: 'run_in_terminal', tool_input: { command: 'git stash' } },
      'vscode/Stop.json',
    ],
    [
      'opencode’s tool.execute.before (bash)',
      'opencode',
      'opencode/chat.message.json',
      'opencode/tool.execute.before-bash.json',
      { command: 'git stash' },
      'opencode/session.idle.json',
    ],
  ] as const) {
    it(`${what} takes the checkpoint; another tool with the same command takes none`, () => {
      const repo = repoWithIgnored();
      const began = hook(agent, begin, repo);
      assert.equal(began.action, 'began', JSON.stringify(began));
      write(repo, 'a.txt', 'a by the agent\n');
      const other = hook(agent, pre, repo, { ...shell, tool_name: 'write_file' });
      assert.equal(other.action, 'ignored', JSON.stringify(other));
      const taken = hook(agent, pre, repo, shell);
      assert.equal(taken.action, 'checkpoint', JSON.stringify(taken));
      assert.equal(taken.turnId, began.turnId);
      assert.equal(taken.command, 'git stash');
      sh(repo, 'git stash -q');
      assert.equal(read(repo, 'a.txt'), 'a0\n');
      assert.equal(hook(agent, end, repo).action, 'ended');
      assert.equal(cli(['undo', '--before-command', taken.checkpointId!], repo).code, 0);
      assert.equal(read(repo, 'a.txt'), 'a by the agent\n');
    });
  }

  it('a harmless command, no running turn, and bad input: exit 0, nothing written, no repository opened', () => {
    const repo = repoWithIgnored();
    const refs = () => git(repo, 'for-each-ref');
    const untouched = refs();
    // No running turn: a destructive command outside a turn is the user's business.
    assert.equal(bash(repo, 'git reset --hard').action, 'ignored');
    assert.equal(hook('claude-code', 'claude-code/UserPromptSubmit.json', repo).action, 'began');
    const during = refs();
    assert.equal(during, untouched, 'a clean tree: the turn began with no snapshot ref');
    for (const command of [
      'ls -la',
      'git status',
      'echo "git reset --hard"',
      'git reset --soft HEAD~1',
      'x'.repeat(1 << 20),
    ])
      assert.equal(bash(repo, command).action, 'ignored', command.slice(0, 40));
    for (const overrides of [
      { tool_name: 'Bash', tool_input: { command: 42 } },
      { tool_name: 'Bash', tool_input: 'git reset --hard' },
      { tool_name: 'NoSuchTool', tool_input: { command: 'git reset --hard' } },
      { tool_name: 'Read', tool_input: { file_path: path.join(repo, 'a.txt') } },
    ])
      assert.equal(hook('claude-code', 'claude-code/PreToolUse.json', repo, overrides).action, 'ignored');
    assert.equal(refs(), during, 'no checkpoint was made');
    const listed = cli(['checkpoints', '--json'], repo);
    assert.deepEqual(JSON.parse(listed.stdout), []);
    const unknown = cli(['undo', '--before-command', '00000000-0000-4000-8000-000000000000'], repo);
    assert.equal(unknown.code, 2, 'bad input');
    assert.match(unknown.stderr, /No checkpoint with this id/);
    const usage = cli(['undo', '--before-command', 'x', '--only', 'turn'], repo);
    assert.equal(usage.code, 2);
  });
});

describe('before a tool runs: nothing to destroy, the guard, bad input (issue 34; dist/cli.js, real git)', function () {
  this.timeout(120_000);
  afterEach(() => cleanupTempDirs());

  /** Claude Code's PreToolUse, as connect writes its entry (`--tool`, and the guard's flag when given). */
  function preTool(repo: string, command: string, flags: string[] = [], fullPath = false): Run {
    const input = payload('claude-code/PreToolUse.json', repo, { tool_name: 'Bash', tool_input: { command } });
    return cli(['hook', 'claude-code', '--tool', ...flags], repo, input, fullPath);
  }

  const checkpointRefs = (repo: string) =>
    git(repo, 'for-each-ref', '--format=%(refname)', 'refs/agent-versions/checkpoints/').split('\n').filter(Boolean);

  for (const fullPath of [false, true]) {
    it(`git pull/merge/rebase and mv/cp over a clean tree take no checkpoint; over a dirty one, or onto an ignored file, they do (${fullPath ? 'the full path' : 'the fast path'})`, () => {
      const repo = makeRepo();
      write(repo, 'a.txt', 'a0\n');
      write(repo, '.gitignore', 'node_modules/\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'start');
      const before = contentInventory(repo);
      assert.equal(hook('claude-code', 'claude-code/UserPromptSubmit.json', repo).action, 'began');
      // Ignored only under a heavy folder (reinstallable, never copied): nothing to keep either.
      write(repo, 'node_modules/dep/index.js', 'dep\n');
      const json = (command: string) => {
        const r = preTool(repo, command, ['--json'], fullPath);
        assert.equal(r.code, 0, r.stderr);
        return JSON.parse(r.stdout) as HookJson;
      };
      for (const command of ['git pull', 'git merge feature', 'git rebase main', 'mv a.txt b.txt', 'cp a.txt c.txt'])
        assert.equal(json(command).action, 'ignored', command);
      assert.deepEqual(checkpointRefs(repo), [], 'a clean tree: nothing a merge or a move can destroy');
      // A destructive command whatever the tree: taken over a clean tree too.
      assert.equal(json('git pull && rm -rf src').action, 'checkpoint');
      // An ignored destination a copy can overwrite: kept.
      write(repo, '.env', 'SECRET=1\n');
      write(repo, '.gitignore', 'node_modules/\n.env\n');
      git(repo, 'commit', '-q', '-am', 'ignore .env');
      const ontoIgnored = json('cp .env.example .env');
      assert.equal(ontoIgnored.action, 'checkpoint');
      assert.equal(ontoIgnored.files, 1, '.env kept aside');
      // A dirty tree: a pull can destroy the edit.
      write(repo, 'a.txt', 'a by the agent\n');
      const dirty = json('git pull --rebase');
      assert.equal(dirty.action, 'checkpoint');
      assert.equal(dirty.command, 'git pull');
      assert.equal(checkpointRefs(repo).length, 3);
      assertNothingLost(repo, before);
    });

    it(`--guard-destructive: the agent's own deny answer for a destructive command, the checkpoint taken all the same; nothing for a harmless one (${fullPath ? 'the full path' : 'the fast path'})`, () => {
      const repo = repoWithIgnored();
      assert.equal(hook('claude-code', 'claude-code/UserPromptSubmit.json', repo).action, 'began');
      write(repo, 'a.txt', 'a by the agent\n');
      const denied = preTool(repo, 'git reset --hard', ['--guard-destructive'], fullPath);
      assert.equal(denied.code, 0, denied.stderr);
      const answer = JSON.parse(denied.stdout) as {
        hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string };
      };
      assert.equal(answer.hookSpecificOutput.hookEventName, 'PreToolUse');
      assert.equal(answer.hookSpecificOutput.permissionDecision, 'deny');
      const [ref] = checkpointRefs(repo);
      const id = ref.slice('refs/agent-versions/checkpoints/'.length);
      assert.match(answer.hookSpecificOutput.permissionDecisionReason, /`git reset --hard` can destroy work/);
      assert.ok(answer.hookSpecificOutput.permissionDecisionReason.includes(`undo --before-command ${id}`));
      // Harmless: nothing printed, nothing taken.
      const harmless = preTool(repo, 'npm test', ['--guard-destructive'], fullPath);
      assert.equal(harmless.code, 0, harmless.stderr);
      assert.equal(harmless.stdout, '');
      assert.equal(checkpointRefs(repo).length, 1);
      // Gemini CLI's BeforeTool form.
      const gemini = cli(
        ['hook', 'gemini', '--tool', '--guard-destructive'],
        repo,
        payload('gemini/BeforeTool-run_shell_command.json', repo, { tool_input: { command: 'rm -rf src' } }),
        fullPath,
      );
      assert.equal(gemini.code, 0, gemini.stderr);
      const geminiAnswer = JSON.parse(gemini.stdout) as { decision: string; reason: string };
      assert.equal(geminiAnswer.decision, 'deny');
      assert.match(geminiAnswer.reason, /`rm -r` can destroy work/);
      assert.ok(!geminiAnswer.reason.includes('src'), 'the reason never holds the command’s paths');
      // Copilot CLI's preToolUse form (top level), though the turn is recorded as copilot-cli, not the hook's agent.
      const copilot = cli(
        ['hook', 'copilot', '--tool', '--guard-destructive'],
        repo,
        payload('copilot-cli/PreToolUse-Bash.json', repo, { tool_input: { command: 'git stash' } }),
        fullPath,
        { COPILOT_CLI: '1' },
      );
      assert.equal(copilot.code, 0, copilot.stderr);
      const copilotAnswer = JSON.parse(copilot.stdout) as {
        permissionDecision: string;
        permissionDecisionReason: string;
      };
      assert.equal(copilotAnswer.permissionDecision, 'deny');
      assert.match(copilotAnswer.permissionDecisionReason, /`git stash` can destroy work/);
    });
  }

  it('bad input to a tool event (`--tool`): malformed, not an object, over 16 MiB, a 1 MB command — exit 0, nothing on stdout, nothing written; the older entry without --tool exits 1', () => {
    const repo = repoWithIgnored();
    assert.equal(hook('claude-code', 'claude-code/UserPromptSubmit.json', repo).action, 'began');
    write(repo, 'a.txt', 'a by the agent\n');
    const refs = git(repo, 'for-each-ref');
    const state = (dir: string) => fs.readdirSync(path.join(repo, '.git', dir)).sort();
    const stateBefore = state('agent-versions');
    const huge = JSON.stringify({ hook_event_name: 'PreToolUse', pad: 'x'.repeat(17 * 1024 * 1024) });
    for (const [what, input] of [
      ['malformed JSON', '{"hook_event_name": "PreToolUse", "session_id":'],
      ['not an object', '["PreToolUse"]'],
      ['no session', JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash' })],
      ['over 16 MiB', huge],
    ] as const) {
      for (const fullPath of [false, true]) {
        const r = cli(['hook', 'claude-code', '--tool', '--guard-destructive'], repo, input, fullPath);
        assert.equal(r.code, 0, `${what}: ${r.stderr}`);
        assert.equal(r.stdout, '', what);
        assert.match(r.stderr, /^agent-versions: .*Nothing was recorded for this tool event\.\n$/, what);
        assert.ok(!r.stderr.includes('xxxx'), 'the payload never reaches stderr');
      }
    }
    // A destructive command of 1 MB is past what the classifier reads: answered at once, nothing taken.
    const long = preTool(repo, `git reset --hard ${'x'.repeat(1 << 20)}`, ['--guard-destructive', '--json']);
    assert.equal(long.code, 0, long.stderr);
    assert.equal((JSON.parse(long.stdout) as HookJson).action, 'ignored');
    assert.equal(git(repo, 'for-each-ref'), refs, 'no checkpoint');
    assert.deepEqual(state('agent-versions'), stateBefore, 'nothing new in the store folder');
    // The entry connect wrote before --tool: bad input exits 1 (an agent never blocks on 1).
    const older = cli(['hook', 'claude-code'], repo, '{"hook_event_name":');
    assert.equal(older.code, 1);
  });
});
