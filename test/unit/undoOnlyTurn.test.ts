import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VersionHistory } from '../../src/core/versionHistory';
import { expectReason, repoPicture } from '../support/assertions';
import { cliJson, runCliProcess } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  read,
  subjectOf,
  write,
} from '../support/gitFixtures';

const tree = (repo: string, rev = 'HEAD') => git(repo, 'rev-parse', `${rev}^{tree}`).trim();
const clean = (repo: string) => git(repo, 'status', '--porcelain', '--untracked-files=all').trim() === '';
/** Every path of a commit's tree mapped to its blob (what "checked with git trees" compares). */
function files(repo: string, rev = 'HEAD'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of git(repo, 'ls-tree', '-r', rev).trim().split('\n')) {
    const [meta, file] = line.split('\t');
    out[file] = meta.split(' ')[2];
  }
  return out;
}
const blob = (repo: string, rev: string, file: string) => git(repo, 'rev-parse', `${rev}:${file}`).trim();

const LINES = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
const withLine = (text: string[], index: number, value: string) => text.map((l, i) => (i === index ? value : l));
const joined = (text: string[]) => `${text.join('\n')}\n`;

async function turn(
  history: VersionHistory,
  repo: string,
  chatId: string,
  prompt: string,
  edit: () => void,
): Promise<{ turnId: string; version: string }> {
  const { turnId } = await history.beginTurn({
    chatId,
    prompt,
    agent: chatId === 'A' ? 'claude-code' : 'copilot',
    chatTitle: `chat ${chatId}`,
  });
  edit();
  const { version } = await history.endTurn(turnId, 'completed');
  assert.ok(version, `${prompt} made a version`);
  return { turnId, version };
}

/**
 * Two chats interleaved on one branch: A1, B1, A2, a user commit, B2. A1 edits line 1 of shared.txt and adds
 * a1.txt; B1 edits line 12 (independent of A1); A2 adds a2.txt; the user adds mine.txt; B2 adds b2.txt.
 */
async function interleaved(options: { b1Line?: number } = {}) {
  const repo = makeRepo();
  write(repo, 'shared.txt', joined(LINES));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'shared');
  const history = await VersionHistory.open(repo);
  let shared = LINES;
  const a1 = await turn(history, repo, 'A', 'A1: first change', () => {
    shared = withLine(shared, 0, 'line 1 by A1');
    write(repo, 'shared.txt', joined(shared));
    write(repo, 'a1.txt', 'from A1\n');
  });
  const b1 = await turn(history, repo, 'B', 'B1: other chat', () => {
    shared = withLine(shared, options.b1Line ?? 11, `line ${(options.b1Line ?? 11) + 1} by B1`);
    write(repo, 'shared.txt', joined(shared));
    write(repo, 'b1.txt', 'from B1\n');
  });
  const a2 = await turn(history, repo, 'A', 'A2: second change', () => write(repo, 'a2.txt', 'from A2\n'));
  write(repo, 'mine.txt', 'my own commit\n');
  git(repo, 'add', 'mine.txt');
  git(repo, 'commit', '-q', '-m', 'my commit');
  const b2 = await turn(history, repo, 'B', 'B2: more', () => write(repo, 'b2.txt', 'from B2\n'));
  return { repo, history, a1, b1, a2, b2, a1Base: git(repo, 'rev-parse', `${a1.version}^`).trim() };
}

describe('Undo Only This Turn and Undo This File (real git, real store)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('Undo Only This Turn on A1 keeps B1, A2, the user commit and B2; Redo brings A1 back', async () => {
    const { repo, history, a1, a1Base } = await interleaved();
    try {
      const before = contentInventory(repo);
      const beforeFiles = files(repo);
      const beforeTree = tree(repo);
      const headBefore = head(repo);
      const preview = await history.preview({ kind: 'undo', turnId: a1.turnId });
      assert.deepEqual(preview.later, {
        otherChatTurns: 2,
        sameChatTurns: 1,
        userCommits: 1,
        reverts: 0,
        uncommitted: false,
      });
      assert.deepEqual(preview.onlyTurn, { conflicts: [] });
      const r = await history.undo(a1.turnId, { only: 'turn' });
      assert.equal(r.result, 'restored');
      assert.equal(r.scope, 'turn');
      assert.equal(subjectOf(repo), '[Revert] Undid turn "A1: first change"');
      assert.equal(git(repo, 'rev-parse', 'HEAD^').trim(), headBefore, 'history is never rewritten');
      const after = files(repo);
      // A1's own changes are gone: a1.txt removed, shared.txt line 1 back; everything else is exactly as before.
      assert.equal(after['a1.txt'], undefined);
      assert.deepEqual(read(repo, 'shared.txt').split('\n')[0], 'line 1');
      assert.equal(read(repo, 'shared.txt').split('\n')[11], 'line 12 by B1', 'B1 kept in the same file');
      for (const kept of ['b1.txt', 'a2.txt', 'mine.txt', 'b2.txt', 'README.md'])
        assert.equal(after[kept], beforeFiles[kept], `${kept} kept`);
      assert.deepEqual(
        Object.keys(after).sort(),
        Object.keys(beforeFiles)
          .filter((f) => f !== 'a1.txt')
          .sort(),
      );
      assert.equal(after['a1.txt'], files(repo, a1Base)['a1.txt']);
      assert.ok(clean(repo));
      assert.equal((await history.preview({ kind: 'redo' })).nothing, undefined);
      const redo = await history.redo();
      assert.equal(redo.result, 'restored');
      assert.equal(tree(repo), beforeTree, 'Redo brings the exact pre-undo tree back');
      assert.ok(clean(repo));
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('Restore Everything names what else goes, needs the choice, then restores the base; Redo brings everything back', async () => {
    const { repo, history, a1, a1Base } = await interleaved();
    try {
      const before = contentInventory(repo);
      const beforeTree = tree(repo);
      const headBefore = head(repo);
      const refused = await expectReason(history.undo(a1.turnId), 'confirmation-required');
      assert.match(refused.message, /2 turns of other chats, 1 later turn of the same chat and 1 of your commits/);
      assert.equal(head(repo), headBefore, 'nothing changed');
      const r = await history.undo(a1.turnId, { only: 'everything', confirmUserCommits: true });
      assert.equal(r.result, 'restored');
      assert.equal(r.scope, 'everything');
      assert.equal(tree(repo), tree(repo, a1Base));
      assert.match(subjectOf(repo), /^\[Restore\] /);
      const redo = await history.redo();
      assert.equal(redo.result, 'restored');
      assert.equal(tree(repo), beforeTree);
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('a conflicting reverse is refused with the file list and nothing changed; Restore Everything stays available', async () => {
    const { repo, history, a1, a1Base } = await interleaved({ b1Line: 0 });
    try {
      const preview = await history.preview({ kind: 'undo', turnId: a1.turnId });
      assert.deepEqual(preview.onlyTurn, { conflicts: ['shared.txt'] });
      const picture = repoPicture(repo);
      const e = await expectReason(history.undo(a1.turnId, { only: 'turn' }), 'revert-conflict');
      assert.match(
        e.message,
        /in shared\.txt\. Nothing was changed\. Restore Everything to Before This Turn is still available/,
      );
      assert.equal(e.details.files, 'shared.txt');
      assert.deepEqual(repoPicture(repo), picture, 'refs, index, worktree untouched');
      assert.equal((await history.status()).recovery, null);
      const all = await history.undo(a1.turnId, { only: 'everything', confirmUserCommits: true });
      assert.equal(all.result, 'restored');
      assert.equal(tree(repo), tree(repo, a1Base));
    } finally {
      await history.close();
    }
  });

  it('uncommitted edits count as current: saved first, kept after the reverse, nothing lost; Redo restores them with the turn', async () => {
    const { repo, history, a1 } = await interleaved();
    try {
      write(repo, 'shared.txt', read(repo, 'shared.txt').replace('line 6', 'line 6 edited, not committed'));
      write(repo, 'scratch.txt', 'untracked notes\n');
      const before = contentInventory(repo);
      const dirtyPreview = await history.preview({ kind: 'undo', turnId: a1.turnId });
      assert.equal(dirtyPreview.later?.uncommitted, true);
      assert.deepEqual(dirtyPreview.onlyTurn, { conflicts: [] });
      const r = await history.undo(a1.turnId, { only: 'turn' });
      assert.equal(r.result, 'restored');
      assert.ok(r.preserved);
      assert.equal(subjectOf(repo, 'HEAD^'), '[Interrupted] Saved uncommitted changes before undoing a turn');
      assert.equal(subjectOf(repo), '[Revert] Undid turn "A1: first change"');
      const shared = read(repo, 'shared.txt').split('\n');
      assert.equal(shared[0], 'line 1');
      assert.equal(shared[5], 'line 6 edited, not committed');
      assert.equal(read(repo, 'scratch.txt'), 'untracked notes\n');
      assert.equal(fs.existsSync(path.join(repo, 'a1.txt')), false);
      assert.ok(clean(repo));
      assertNothingLost(repo, before);
      await history.redo();
      assert.equal(read(repo, 'a1.txt'), 'from A1\n');
      assert.equal(read(repo, 'shared.txt').split('\n')[5], 'line 6 edited, not committed');
    } finally {
      await history.close();
    }
  });

  it('a later Undo of another turn counts as later work: undoing B2 afterwards keeps A1 undone unless Restore Everything is chosen', async () => {
    const { repo, history, a1, b2 } = await interleaved();
    try {
      await history.undo(a1.turnId, { only: 'turn' });
      const preview = await history.preview({ kind: 'undo' });
      assert.equal(preview.turnId, b2.turnId);
      assert.equal(preview.later?.reverts, 1);
      const refused = await expectReason(history.undo(), 'confirmation-required');
      assert.match(refused.message, /1 later undo of another turn/);
      const r = await history.undo(undefined, { only: 'turn' });
      assert.equal(r.scope, 'turn');
      assert.equal(fs.existsSync(path.join(repo, 'b2.txt')), false);
      assert.equal(fs.existsSync(path.join(repo, 'a1.txt')), false, 'A1 stays undone');
      assert.equal(read(repo, 'a2.txt'), 'from A2\n');
    } finally {
      await history.close();
    }
  });

  it('a commit the user made while the turn ran counts as theirs: Restore Everything asks, Undo Only This Turn keeps it', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'A', prompt: 'slow turn' });
      write(repo, 'mine.txt', 'committed by hand during the turn\n');
      git(repo, 'add', 'mine.txt');
      git(repo, 'commit', '-q', '-m', 'mine, during the turn');
      write(repo, 'agent.txt', 'by the agent\n');
      assert.ok((await history.endTurn(turnId, 'completed')).version);
      const preview = await history.preview({ kind: 'undo' });
      assert.equal(preview.userCommits, 1);
      assert.equal(preview.later?.userCommits, 1);
      await expectReason(history.undo(), 'confirmation-required');
      const r = await history.undo(turnId, { only: 'turn' });
      assert.equal(r.scope, 'turn');
      assert.equal(fs.existsSync(path.join(repo, 'agent.txt')), false);
      assert.equal(read(repo, 'mine.txt'), 'committed by hand during the turn\n');
    } finally {
      await history.close();
    }
  });

  it('a turn that began on uncommitted edits: Undo Only This Turn keeps those edits (they were in its base snapshot)', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      write(repo, 'README.md', '# demo\nmy edit before the turn\n');
      const a = await turn(history, repo, 'A', 'agent on a dirty tree', () => write(repo, 'agent.txt', 'by A\n'));
      await turn(history, repo, 'B', 'other chat', () => write(repo, 'b.txt', 'by B\n'));
      const before = contentInventory(repo);
      const r = await history.undo(a.turnId, { only: 'turn' });
      assert.equal(r.scope, 'turn');
      assert.equal(fs.existsSync(path.join(repo, 'agent.txt')), false);
      assert.equal(read(repo, 'README.md'), '# demo\nmy edit before the turn\n', "the pre-turn edit is not the turn's");
      assert.equal(read(repo, 'b.txt'), 'by B\n');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('in place: uncommitted, staged and untracked changes in files the turn did not change stay exactly as they are (no save commit)', async () => {
    const { repo, history, a1 } = await interleaved();
    try {
      write(repo, 'mine.txt', 'my commit, then edited\n'); // tracked, modified, not staged
      write(repo, 'b1.txt', 'from B1, edited and staged\n');
      git(repo, 'add', 'b1.txt'); // a staged change to a tracked file
      write(repo, 'new.txt', 'staged, never committed\n');
      git(repo, 'add', 'new.txt'); // a staged new file
      write(repo, 'scratch.txt', 'untracked notes\n');
      const before = contentInventory(repo);
      const headBefore = head(repo);
      const statusBefore = git(repo, 'status', '--porcelain', '--untracked-files=all');
      const stagedBefore = git(repo, 'diff', '--cached', '--name-status');
      const r = await history.undo(a1.turnId, { only: 'turn' });
      assert.equal(r.result, 'restored');
      assert.equal(r.scope, 'turn');
      assert.equal(r.preserved, undefined, 'nothing needed saving');
      assert.equal(subjectOf(repo), '[Revert] Undid turn "A1: first change"');
      assert.equal(
        git(repo, 'rev-parse', 'HEAD^').trim(),
        headBefore,
        'the revert sits right on the old tip: no save commit',
      );
      assert.equal(fs.existsSync(path.join(repo, 'a1.txt')), false);
      assert.equal(read(repo, 'shared.txt').split('\n')[0], 'line 1');
      assert.equal(
        git(repo, 'status', '--porcelain', '--untracked-files=all'),
        statusBefore,
        'the same uncommitted, staged and untracked changes',
      );
      assert.equal(git(repo, 'diff', '--cached', '--name-status'), stagedBefore, 'staged stays staged');
      assert.equal(read(repo, 'mine.txt'), 'my commit, then edited\n');
      assert.equal(git(repo, 'show', ':b1.txt'), 'from B1, edited and staged\n');
      assert.equal(read(repo, 'scratch.txt'), 'untracked notes\n');
      assert.equal((await history.status()).recovery, null);
      assertNothingLost(repo, before);
      // Redo runs in place too (issue 33, fuzz seed 203): the turn comes back, the same changes of the user's stay.
      const headAfter = head(repo);
      const redone = await history.redo();
      assert.equal(redone.result, 'restored');
      assert.equal(redone.preserved, undefined, 'nothing needed saving');
      assert.equal(git(repo, 'rev-parse', 'HEAD^').trim(), headAfter, 'on top of the revert');
      assert.equal(read(repo, 'a1.txt'), 'from A1\n');
      assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), statusBefore);
      assert.equal(git(repo, 'show', ':b1.txt'), 'from B1, edited and staged\n');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('in place refused by git (a staged change in a file the turn changed): planned in full instead, the change saved first, no recovery', async () => {
    const { repo, history, a1 } = await interleaved();
    try {
      write(repo, 'shared.txt', read(repo, 'shared.txt').replace('line 6', 'line 6 staged by me'));
      git(repo, 'add', 'shared.txt');
      const before = contentInventory(repo);
      const headBefore = head(repo);
      const r = await history.undo(a1.turnId, { only: 'turn' });
      assert.equal(r.result, 'restored');
      assert.ok(r.preserved, 'the staged change was saved first');
      assert.equal(git(repo, 'rev-parse', 'HEAD^^').trim(), headBefore);
      assert.equal(subjectOf(repo, 'HEAD^'), '[Interrupted] Saved uncommitted changes before undoing a turn');
      assert.equal(subjectOf(repo), '[Revert] Undid turn "A1: first change"');
      const shared = read(repo, 'shared.txt').split('\n');
      assert.equal(shared[0], 'line 1');
      assert.equal(shared[5], 'line 6 staged by me');
      assert.equal(fs.existsSync(path.join(repo, 'a1.txt')), false);
      assert.ok(clean(repo));
      assert.equal((await history.status()).recovery, null);
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it("with nothing after the turn, Undo Only This Turn is exactly today's Undo", async () => {
    const { repo, history, b2 } = await interleaved();
    try {
      const preview = await history.preview({ kind: 'undo' });
      assert.equal(preview.turnId, b2.turnId);
      assert.deepEqual(preview.later, {
        otherChatTurns: 0,
        sameChatTurns: 0,
        userCommits: 0,
        reverts: 0,
        uncommitted: false,
      });
      assert.equal(preview.onlyTurn, undefined);
      const r = await history.undo(undefined, { only: 'turn' });
      assert.equal(r.scope, 'everything');
      assert.match(subjectOf(repo), /^\[Restore\] Restored version /);
      assert.equal(tree(repo), tree(repo, `${b2.version}^`));
    } finally {
      await history.close();
    }
  });

  it('Undo This File on one path of a 10-file turn: only that path changes; Redo brings it back; the turn stays undoable', async () => {
    const repo = makeRepo();
    for (let i = 0; i < 10; i++) write(repo, `src/f${i}.ts`, `export const v${i} = 0;\n`);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'ten files');
    const history = await VersionHistory.open(repo);
    try {
      const t = await turn(history, repo, 'A', 'touch ten files', () => {
        for (let i = 0; i < 10; i++) write(repo, `src/f${i}.ts`, `export const v${i} = 1; // by the agent\n`);
      });
      const before = contentInventory(repo);
      const beforeFiles = files(repo);
      const r = await history.undoFile(t.turnId, 'src/f3.ts');
      assert.equal(r.result, 'restored');
      assert.equal(r.scope, 'file');
      assert.equal(subjectOf(repo), '[Revert] Undid src/f3.ts of turn "touch ten files"');
      assert.equal(
        git(repo, 'diff-tree', '--no-commit-id', '--name-only', '-r', 'HEAD^', 'HEAD').trim(),
        'src/f3.ts',
        'only that path changed',
      );
      assert.equal(read(repo, 'src/f3.ts'), 'export const v3 = 0;\n');
      const after = files(repo);
      for (let i = 0; i < 10; i++) if (i !== 3) assert.equal(after[`src/f${i}.ts`], beforeFiles[`src/f${i}.ts`]);
      assert.equal(after['src/f3.ts'], blob(repo, `${t.version}^`, 'src/f3.ts'));
      assert.ok(clean(repo));
      assert.deepEqual(await history.historyCounts(), { undo: 1, redo: 1 }, 'the turn itself is still in effect');
      await history.redo();
      assert.equal(read(repo, 'src/f3.ts'), 'export const v3 = 1; // by the agent\n');
      assertNothingLost(repo, before);
      // A path the turn did not change, and bad input, are refused with nothing changed.
      const picture = repoPicture(repo);
      await expectReason(history.undoFile(t.turnId, 'README.md'), 'invalid-input');
      await expectReason(history.undoFile(t.turnId, ''), 'invalid-input');
      await expectReason(history.undoFile('not-a-turn', 'src/f1.ts'), 'invalid-input');
      assert.deepEqual(repoPicture(repo), picture);
    } finally {
      await history.close();
    }
  });

  it('Undo This File of a file the turn added removes it, uncommitted edits saved first; bad "only" values are refused', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      const t = await turn(history, repo, 'A', 'add two', () => {
        write(repo, 'new1.txt', 'one\n');
        write(repo, 'new2.txt', 'two\n');
      });
      write(repo, 'README.md', '# demo\nuncommitted edit\n');
      const before = contentInventory(repo);
      const r = await history.undoFile(t.turnId, 'new1.txt');
      assert.ok(r.preserved, 'the uncommitted edit was saved first');
      assert.equal(subjectOf(repo, 'HEAD^'), '[Interrupted] Saved uncommitted changes before undoing a turn');
      assert.equal(git(repo, 'diff-tree', '--no-commit-id', '--name-only', '-r', 'HEAD^', 'HEAD').trim(), 'new1.txt');
      assert.equal(fs.existsSync(path.join(repo, 'new1.txt')), false);
      assert.equal(read(repo, 'new2.txt'), 'two\n');
      assert.equal(read(repo, 'README.md'), '# demo\nuncommitted edit\n');
      assert.ok(clean(repo));
      assertNothingLost(repo, before);
      await expectReason(history.undo(t.turnId, { only: 'some' }), 'invalid-input');
    } finally {
      await history.close();
    }
  });

  it('the chat picker lists the latest undoable turn of each chat, newest first', async () => {
    const { history, a2, b2 } = await interleaved();
    try {
      const turns = await history.undoableTurns();
      assert.deepEqual(
        turns.map((t) => [t.turnId, t.chatTitle, t.agent]),
        [
          [b2.turnId, 'chat B', 'copilot'],
          [a2.turnId, 'chat A', 'claude-code'],
        ],
      );
    } finally {
      await history.close();
    }
  });

  it('CLI: undo --only turn|everything and undo-file --turn, with --json results and clear refusals', async () => {
    const { repo, history, a1, b1, a1Base } = await interleaved({ b1Line: 0 });
    await history.close();
    const headBefore = head(repo);
    const choose = runCliProcess(['undo', '--turn', a1.turnId], { cwd: repo });
    assert.equal(choose.code, 1);
    assert.match(
      choose.stderr,
      /Work landed after this turn: 2 turns of other chats, 1 later turn of the same chat and 1 of your commits\. Choose .* Run again with --only turn or --only everything; nothing was changed\./,
    );
    const conflict = runCliProcess(['undo', '--turn', a1.turnId, '--only', 'turn', '--json'], { cwd: repo });
    assert.equal(conflict.code, 1);
    assert.equal(JSON.parse(conflict.stdout).error.reason, 'revert-conflict');
    assert.match(conflict.stderr, /shared\.txt/);
    assert.equal(head(repo), headBefore);
    const bad = runCliProcess(['undo', '--only', 'half'], { cwd: repo });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--only must be turn or everything/);
    assert.equal(runCliProcess(['undo-file', 'b1.txt'], { cwd: repo }).code, 2, 'undo-file needs --turn');
    const file = cliJson<{ result: string; scope: string; restoreCommit: string }>(
      ['undo-file', '--turn', b1.turnId, 'b1.txt'],
      { cwd: repo },
    );
    assert.equal(file.result, 'restored');
    assert.equal(file.scope, 'file');
    assert.equal(fs.existsSync(path.join(repo, 'b1.txt')), false);
    assert.equal(subjectOf(repo), '[Revert] Undid b1.txt of turn "B1: other chat"');
    const all = cliJson<{ result: string; scope: string }>(['undo', '--turn', a1.turnId, '--only', 'everything'], {
      cwd: repo,
    });
    assert.deepEqual([all.result, all.scope], ['restored', 'everything']);
    assert.equal(tree(repo), tree(repo, a1Base));
  });
});
