/**
 * Two chats in one working tree (issue 25, docs/design/two-chats.md), through the shipped CLI bundle (dist/cli.js)
 * as real processes in real git repositories: the agents' own hook payloads (test/fixtures/hooks/, captured from the
 * real binaries) begin, report and end two interleaved turns; trees are checked exactly and nothing is lost.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENTS } from '../../src/cli/agents/registry';
import { TOOL_EVENTS } from '../../src/cli/hooks/earlyProbe';
import { VersionHistory } from '../../src/core/versionHistory';
import { repoPicture } from '../support/assertions';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  read,
  tempDir,
  testGitEnv,
  write,
} from '../support/gitFixtures';

const ROOT = path.resolve(__dirname, '../../..');
const DIST_CLI = path.join(ROOT, 'dist/cli.js');
const FIXTURES = path.join(ROOT, 'test/fixtures/hooks');
/** The scrubbed repository folder of the captured payloads. */
const CAPTURED_REPO = '/home/user/work/repo';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], cwd: string, input = ''): Run {
  const r = spawnSync(process.execPath, [DIST_CLI, ...args], {
    cwd,
    input,
    encoding: 'utf8',
    env: { ...testGitEnv(), COPILOT_CLI: '' },
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A captured payload pointed at `repo` (its paths and cwd), in chat `session`, with `overrides`. */
function payload(name: string, repo: string, session: string, overrides: Record<string, unknown> = {}): string {
  const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8').split(CAPTURED_REPO).join(repo);
  const o = JSON.parse(text) as Record<string, unknown>;
  return JSON.stringify({ ...o, cwd: repo, session_id: session, ...overrides });
}

interface HookJson {
  action: string;
  turnId?: string;
  version?: string | null;
  files?: number;
  shell?: boolean;
  reason?: string;
}

function hook(
  agent: string,
  name: string,
  repo: string,
  session: string,
  overrides: Record<string, unknown> = {},
): HookJson {
  const r = cli(['hook', agent, '--json'], path.dirname(repo), payload(name, repo, session, overrides));
  assert.equal(r.code, 0, `hook ${agent} ${name}: ${r.stderr}`);
  return JSON.parse(r.stdout) as HookJson;
}

/** Codex's apply_patch event naming `patch` (relative paths, as Codex sends them). */
function applyPatch(repo: string, session: string, patch: string): HookJson {
  const input = { command: `*** Begin Patch\n${patch}*** End Patch\n` };
  return hook('codex', 'codex/PostToolUse-apply_patch.json', repo, session, { tool_input: input });
}

/** Claude Code's Edit event for `file` (absolute, as Claude Code sends it). */
function claudeEdit(repo: string, session: string, file: string): HookJson {
  const input = { file_path: path.join(repo, file), old_string: 'x', new_string: 'y', replace_all: false };
  return hook('claude-code', 'claude-code/PostToolUse-Edit.json', repo, session, { tool_input: input });
}

/** The files of a commit's tree and their content. */
function treeOf(repo: string, rev: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of git(repo, 'ls-tree', '-r', '-z', '--name-only', rev).split('\0').filter(Boolean))
    files[name] = git(repo, 'show', `${rev}:${name}`);
  return files;
}

/** The working tree's files (not .git) and their content. */
function worktreeOf(repo: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else files[path.relative(repo, full).split(path.sep).join('/')] = fs.readFileSync(full, 'utf8');
    }
  };
  walk(repo);
  return files;
}

const A = 'd9b49c66-aaaa-4edb-b5e7-f35f493e58ea';
const B = '01a232c3-bbbb-7ca2-a02f-14d8e7a2bf1d';

function twoChatRepo(): string {
  const repo = makeRepo();
  write(repo, 'src.txt', 'one\n');
  write(repo, 'b.txt', 'b0\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'files');
  return repo;
}

describe('two chats in one working tree: what each turn reported writing decides its version (dist/cli.js)', function () {
  this.timeout(180_000);
  before(() => assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first'));
  afterEach(cleanupTempDirs);

  it('A ends while B is mid-edit: A’s version holds only A’s files, B’s half-done edit stays in the tree; Undo Only This Turn of A keeps B’s work exactly', async () => {
    const repo = twoChatRepo();
    const before = contentInventory(repo);
    const start = head(repo);
    const a = hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, A);
    const b = hook('codex', 'codex/UserPromptSubmit.json', repo, B);
    assert.deepEqual([a.action, b.action], ['began', 'began']);
    write(repo, 'src.txt', 'two\n');
    assert.deepEqual(claudeEdit(repo, A, 'src.txt'), {
      agent: 'claude-code',
      event: 'PostToolUse',
      action: 'recorded',
      files: 1,
      shell: false,
    });
    write(repo, 'b.txt', 'b-half\n');
    write(repo, 'new.txt', 'new from B\n');
    assert.equal(applyPatch(repo, B, '*** Update File: b.txt\n@@\n-b0\n+b-half\n*** Add File: new.txt\n+x\n').files, 2);
    const endA = hook('claude-code', 'claude-code/Stop.json', repo, A);
    assert.equal(typeof endA.version, 'string');
    assert.deepEqual(treeOf(repo, endA.version!), {
      ...treeOf(repo, start),
      'src.txt': 'two\n',
    });
    // The working tree is not touched: B's edits are uncommitted changes on top of A's version.
    assert.equal(read(repo, 'b.txt'), 'b-half\n');
    assert.deepEqual(git(repo, 'status', '--porcelain').split('\n').filter(Boolean).sort(), [' M b.txt', '?? new.txt']);
    write(repo, 'b.txt', 'b-final\n');
    applyPatch(repo, B, '*** Update File: b.txt\n@@\n-b-half\n+b-final\n');
    const endB = hook('codex', 'codex/Stop.json', repo, B);
    assert.equal(git(repo, 'rev-parse', `${endB.version}^`).trim(), endA.version);
    assert.deepEqual(treeOf(repo, endB.version!), {
      ...treeOf(repo, endA.version!),
      'b.txt': 'b-final\n',
      'new.txt': 'new from B\n',
    });
    const undo = cli(['undo', '--turn', a.turnId!, '--only', 'turn'], repo);
    assert.equal(undo.code, 0, undo.stderr);
    assert.match(undo.stdout, /later work kept\)/);
    const expected = { ...treeOf(repo, endB.version!), 'src.txt': 'one\n' };
    assert.deepEqual(treeOf(repo, 'HEAD'), expected);
    assert.deepEqual(worktreeOf(repo), expected);
    assert.equal(git(repo, 'status', '--porcelain'), '');
    assertNothingLost(repo, before);
  });

  it('with a --skip-worktree local edit in the tree: A’s version takes B’s file from B’s base, the local edit stays local through both versions and Undo Only This Turn of A', () => {
    const repo = twoChatRepo();
    write(repo, 'config.ini', 'db=prod\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'config');
    git(repo, 'update-index', '--skip-worktree', 'config.ini');
    write(repo, 'config.ini', 'db=local tweak\n');
    const before = contentInventory(repo);
    const start = head(repo);
    const a = hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, A);
    hook('codex', 'codex/UserPromptSubmit.json', repo, B);
    write(repo, 'src.txt', 'two\n');
    claudeEdit(repo, A, 'src.txt');
    write(repo, 'b.txt', 'b-half\n');
    applyPatch(repo, B, '*** Update File: b.txt\n@@\n-b0\n+b-half\n');
    const endA = hook('claude-code', 'claude-code/Stop.json', repo, A);
    assert.equal(typeof endA.version, 'string');
    assert.deepEqual(treeOf(repo, endA.version!), { ...treeOf(repo, start), 'src.txt': 'two\n' });
    assert.equal(read(repo, 'config.ini'), 'db=local tweak\n');
    write(repo, 'b.txt', 'b-final\n');
    applyPatch(repo, B, '*** Update File: b.txt\n@@\n-b-half\n+b-final\n');
    const endB = hook('codex', 'codex/Stop.json', repo, B);
    assert.deepEqual(treeOf(repo, endB.version!), { ...treeOf(repo, endA.version!), 'b.txt': 'b-final\n' });
    for (const version of [endA.version!, endB.version!])
      assert.equal(git(repo, 'show', `${version}:config.ini`), 'db=prod\n', 'the branch never holds the local edit');
    const undo = cli(['undo', '--turn', a.turnId!, '--only', 'turn'], repo);
    assert.equal(undo.code, 0, undo.stderr);
    assert.deepEqual(treeOf(repo, 'HEAD'), { ...treeOf(repo, endB.version!), 'src.txt': 'one\n' });
    assert.deepEqual(worktreeOf(repo), {
      ...treeOf(repo, endB.version!),
      'src.txt': 'one\n',
      'config.ini': 'db=local tweak\n',
    });
    assert.match(git(repo, 'ls-files', '-v', 'config.ini'), /^S /, 'the flag stays');
    assertNothingLost(repo, before);
  });

  it('B ran a shell command: A’s version keeps the unreported change; Undo Only This Turn of A names B’s chat and the files and asks, and --yes says what went', async () => {
    const repo = twoChatRepo();
    write(repo, 'c.txt', 'c0\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'c');
    const before = contentInventory(repo);
    const a = hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, A);
    hook('codex', 'codex/UserPromptSubmit.json', repo, B);
    write(repo, 'src.txt', 'two\n');
    claudeEdit(repo, A, 'src.txt');
    write(repo, 'c.txt', 'c-by-shell\n');
    assert.deepEqual(hook('codex', 'codex/PostToolUse-Bash.json', repo, B), {
      agent: 'codex',
      event: 'PostToolUse',
      action: 'recorded',
      files: 0,
      shell: true,
    });
    const endA = hook('claude-code', 'claude-code/Stop.json', repo, A);
    // Unknown whose it is: today's rule (the whole tree), and the overlap recorded with A's turn.
    assert.equal(git(repo, 'show', `${endA.version}:c.txt`), 'c-by-shell\n');
    write(repo, 'd.txt', 'd by B\n');
    applyPatch(repo, B, '*** Add File: d.txt\n+d by B\n');
    const endB = hook('codex', 'codex/Stop.json', repo, B);
    assert.equal(typeof endB.version, 'string');
    const picture = repoPicture(repo);
    const asked = cli(['undo', '--turn', a.turnId!, '--only', 'turn'], repo);
    assert.equal(asked.code, 1);
    assert.match(asked.stderr, new RegExp(`Another chat \\(codex chat ${B.slice(0, 8)}\\) also wrote a file`));
    assert.match(asked.stderr, /this Undo changes: c\.txt\. Its edits there may be taken away/);
    assert.match(asked.stderr, /Run again with --yes to continue; nothing was changed\./);
    assert.deepEqual(repoPicture(repo), picture, 'the refusal changed nothing');
    // The preview the palette asks from carries the same question.
    const history = await VersionHistory.open(repo);
    try {
      const preview = await history.preview({ kind: 'undo', turnId: a.turnId!, only: 'turn' });
      assert.deepEqual(preview.otherChats, { chats: [`codex chat ${B.slice(0, 8)}`], files: ['c.txt'] });
    } finally {
      await history.close();
    }
    const json = cli(['undo', '--turn', a.turnId!, '--only', 'turn', '--json'], repo);
    assert.equal(JSON.parse(json.stdout).error.reason, 'confirmation-required');
    const yes = cli(['undo', '--turn', a.turnId!, '--only', 'turn', '--yes'], repo);
    assert.equal(yes.code, 0, yes.stderr);
    assert.match(yes.stdout, /later work kept, except another chat’s edits in 1 file you confirmed: c\.txt\)/);
    assert.doesNotMatch(yes.stdout, /later work kept\)/);
    const expected = { ...treeOf(repo, endB.version!), 'src.txt': 'one\n', 'c.txt': 'c0\n' };
    assert.deepEqual(treeOf(repo, 'HEAD'), expected);
    assert.deepEqual(worktreeOf(repo), expected);
    assertNothingLost(repo, before);
  });

  it('Undo This File of A where a later turn of another chat reported writing that file: names the chat and asks; nothing changes until --yes', async () => {
    const repo = twoChatRepo();
    write(repo, 'shared.txt', '1\n2\n3\n4\n5\n6\n7\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'shared');
    const before = contentInventory(repo);
    const a = hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, A);
    write(repo, 'shared.txt', '1 by A\n2\n3\n4\n5\n6\n7\n');
    claudeEdit(repo, A, 'shared.txt');
    hook('claude-code', 'claude-code/Stop.json', repo, A);
    hook('codex', 'codex/UserPromptSubmit.json', repo, B);
    write(repo, 'shared.txt', '1 by A\n2\n3\n4\n5\n6\n7 by B\n');
    applyPatch(repo, B, '*** Update File: shared.txt\n@@\n-7\n+7 by B\n');
    const endB = hook('codex', 'codex/Stop.json', repo, B);
    const picture = repoPicture(repo);
    const asked = cli(['undo-file', '--turn', a.turnId!, 'shared.txt'], repo);
    assert.equal(asked.code, 1);
    assert.match(
      asked.stderr,
      new RegExp(`codex chat ${B.slice(0, 8)}\\) also wrote a file this Undo changes: shared\\.txt`),
    );
    assert.deepEqual(repoPicture(repo), picture);
    // Undo Only This Turn keeps B's line (a clean reverse), but it too changes a file B wrote: asked the same way.
    const onlyTurn = cli(['undo', '--turn', a.turnId!, '--only', 'turn'], repo);
    assert.equal(onlyTurn.code, 1);
    assert.match(onlyTurn.stderr, /shared\.txt/);
    const yes = cli(['undo', '--turn', a.turnId!, '--only', 'turn', '--yes'], repo);
    assert.equal(yes.code, 0, yes.stderr);
    assert.deepEqual(treeOf(repo, 'HEAD'), {
      ...treeOf(repo, endB.version!),
      'shared.txt': '1\n2\n3\n4\n5\n6\n7 by B\n',
    });
    assertNothingLost(repo, before);
  });

  it('Undo This File with --yes: the confirmed file is put back, the rest of both turns stays', async () => {
    const repo = twoChatRepo();
    write(repo, 'shared.txt', '1\n2\n3\n4\n5\n6\n7\n');
    write(repo, 'other.txt', 'o\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'shared');
    const before = contentInventory(repo);
    const a = hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, A);
    write(repo, 'shared.txt', '1 by A\n2\n3\n4\n5\n6\n7\n');
    claudeEdit(repo, A, 'shared.txt');
    write(repo, 'other.txt', 'o by A\n');
    claudeEdit(repo, A, 'other.txt');
    hook('claude-code', 'claude-code/Stop.json', repo, A);
    hook('codex', 'codex/UserPromptSubmit.json', repo, B);
    write(repo, 'shared.txt', '1 by A\n2\n3\n4\n5\n6\n7 by B\n');
    applyPatch(repo, B, '*** Update File: shared.txt\n@@\n-7\n+7 by B\n');
    const endB = hook('codex', 'codex/Stop.json', repo, B);
    const yes = cli(['undo-file', '--turn', a.turnId!, 'shared.txt', '--yes'], repo);
    assert.equal(yes.code, 0, yes.stderr);
    assert.equal(git(repo, 'log', '-1', '--format=%s').trim().startsWith('[Revert] Undid shared.txt of turn'), true);
    assert.deepEqual(treeOf(repo, 'HEAD'), {
      ...treeOf(repo, endB.version!),
      // The file as it was before A's turn: B's line goes too, which is what --yes confirmed (it stays in B's version).
      'shared.txt': '1\n2\n3\n4\n5\n6\n7\n',
    });
    assert.equal(git(repo, 'show', `${endB.version!}:shared.txt`), '1 by A\n2\n3\n4\n5\n6\n7 by B\n');
    assert.equal(worktreeOf(repo)['other.txt'], 'o by A\n', "the turn's other file stays");
    assertNothingLost(repo, before);
  });

  it('the same chat’s own later turn is no other chat: Undo Only This Turn does not ask', async () => {
    const repo = twoChatRepo();
    const a = hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, A);
    write(repo, 'src.txt', 'two\n');
    claudeEdit(repo, A, 'src.txt');
    hook('claude-code', 'claude-code/Stop.json', repo, A);
    hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, A);
    write(repo, 'b.txt', 'b by A later\n');
    claudeEdit(repo, A, 'b.txt');
    hook('claude-code', 'claude-code/Stop.json', repo, A);
    const undo = cli(['undo', '--turn', a.turnId!, '--only', 'turn'], repo);
    assert.equal(undo.code, 0, undo.stderr);
    assert.equal(read(repo, 'src.txt'), 'one\n');
    assert.equal(read(repo, 'b.txt'), 'b by A later\n');
  });
});

describe('tool events of every agent: the paths each reports, recorded on the fast path (dist/cli.js)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  /** The chat's recorded lines (the state folder's tool-writes file of the one chat used here). */
  function recorded(repo: string): { p?: string[]; s?: number }[] {
    const dir = path.join(repo, '.git', 'agent-versions', 'tool-writes');
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    assert.equal(files.length, 1);
    return fs
      .readFileSync(path.join(dir, files[0]), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { p?: string[]; s?: number });
  }

  const cases: [agent: string, begin: string, event: string, paths: string[], shell: boolean][] = [
    ['claude-code', 'claude-code/UserPromptSubmit.json', 'claude-code/PostToolUse-Write.json', ['added.txt'], false],
    ['claude-code', 'claude-code/UserPromptSubmit.json', 'claude-code/PostToolUse-Edit.json', ['src.txt'], false],
    [
      'claude-code',
      'claude-code/UserPromptSubmit.json',
      'claude-code/PostToolUse-NotebookEdit.json',
      ['nb.ipynb'],
      false,
    ],
    ['claude-code', 'claude-code/UserPromptSubmit.json', 'claude-code/PostToolUse-Bash.json', [], true],
    ['codex', 'codex/UserPromptSubmit.json', 'codex/PostToolUse-apply_patch.json', ['added.txt', 'src.txt'], false],
    ['codex', 'codex/UserPromptSubmit.json', 'codex/PostToolUse-Bash.json', [], true],
    ['copilot', 'copilot-cli/UserPromptSubmit.json', 'copilot-cli/PostToolUse-Write.json', ['greet.txt'], false],
    ['copilot', 'copilot-cli/UserPromptSubmit.json', 'copilot-cli/PostToolUse-Edit.json', ['src.txt'], false],
    ['copilot', 'copilot-cli/UserPromptSubmit.json', 'copilot-cli/PostToolUse-Bash.json', [], true],
    ['copilot', 'vscode/UserPromptSubmit.json', 'vscode/PostToolUse.json', ['src/app.ts'], false],
    ['gemini', 'gemini/BeforeAgent.json', 'gemini/AfterTool-write_file.json', ['greet.txt'], false],
    ['gemini', 'gemini/BeforeAgent.json', 'gemini/AfterTool-replace.json', ['src.txt'], false],
    ['gemini', 'gemini/BeforeAgent.json', 'gemini/AfterTool-run_shell_command.json', [], true],
    ['opencode', 'opencode/chat.message.json', 'opencode/tool.execute.after-write.json', ['greet.txt'], false],
    ['opencode', 'opencode/chat.message.json', 'opencode/tool.execute.after-bash.json', [], true],
  ];
  for (const [agent, begin, event, paths, shell] of cases) {
    it(`${agent} ${path.basename(event, '.json')}: ${shell ? 'a shell edit (no paths)' : paths.join(', ')}`, () => {
      const repo = makeRepo();
      hook(agent, begin, repo, 'chat-1');
      const r = hook(agent, event, repo, 'chat-1');
      assert.deepEqual([r.action, r.files, r.shell], ['recorded', paths.length, shell]);
      const lines = recorded(repo);
      assert.equal(lines.length, 1);
      assert.deepEqual(lines[0].p ?? [], paths);
      assert.equal(lines[0].s === 1, shell);
    });
  }

  it('the entry starts no early status for a tool event: its list is exactly the agents’ tool events', () => {
    const wrote = AGENTS.flatMap((a) =>
      [...a.events].filter(([, effect]) => effect === 'wrote' || effect === 'before-tool').map(([e]) => e),
    );
    assert.deepEqual([...TOOL_EVENTS].sort(), [...new Set(wrote)].sort());
  });

  it('a tool that writes nothing (Read), and paths outside the working tree or in .git, record nothing', () => {
    const repo = makeRepo();
    hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, 'chat-1');
    assert.equal(hook('claude-code', 'claude-code/PostToolUse-Read.json', repo, 'chat-1').action, 'ignored');
    const outside = { file_path: path.join(tempDir(), 'elsewhere.txt'), content: 'x' };
    const r = hook('claude-code', 'claude-code/PostToolUse-Write.json', repo, 'chat-1', { tool_input: outside });
    assert.deepEqual([r.action, r.files], ['recorded', 0]);
    const inGit = { file_path: path.join(repo, '.git', 'config'), content: 'x' };
    assert.equal(
      hook('claude-code', 'claude-code/PostToolUse-Write.json', repo, 'chat-1', { tool_input: inGit }).files,
      0,
    );
    assert.ok(!fs.existsSync(path.join(repo, '.git', 'agent-versions', 'tool-writes')), 'no line was written');
  });

  it('in a repository Version History never recorded a turn in, a tool event creates nothing', () => {
    const repo = makeRepo();
    const picture = repoPicture(repo);
    const r = hook('claude-code', 'claude-code/PostToolUse-Write.json', repo, 'chat-1');
    assert.deepEqual([r.action, r.reason], ['ignored', 'no-repository']);
    assert.ok(!fs.existsSync(path.join(repo, '.git', 'agent-versions')));
    assert.deepEqual(repoPicture(repo), picture);
  });

  it('a malformed tool event is refused with a clear message and records nothing', () => {
    const repo = makeRepo();
    hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, 'chat-1');
    const bad = { tool_input: { file_path: 42 } };
    const r = hook('claude-code', 'claude-code/PostToolUse-Write.json', repo, 'chat-1', bad);
    assert.deepEqual([r.action, r.files], ['recorded', 0]);
    const notJson = cli(['hook', 'claude-code'], repo, '{not json');
    assert.equal(notJson.code, 1);
    assert.match(notJson.stderr, /The hook event is not valid JSON\./);
  });
});
