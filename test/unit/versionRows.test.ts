import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { configureGitExecutable } from '../../src/core/git/gitRunner';
import { setRecovery } from '../../src/core/operations/recoveryLatch';
import { VersionHistory } from '../../src/core/versionHistory';
import { BLOCKED_MESSAGE } from '../../src/core/history/wording';
import type { VersionRow, VersionsView } from '../../src/vscode/historyView/protocol';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  tempDir,
  write,
} from '../support/gitFixtures';
import { contextOf } from '../../src/core/repoContextOf';

function rowsOf(view: VersionsView): VersionRow[] {
  assert.equal(view.kind, 'versions');
  return view.kind === 'versions' ? view.rows : [];
}

describe('Version History view model (real git, real sql.js files)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('joins the branch log with turns: kinds, labels, outcomes, agents, chats, files +/-, undone and Redo', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      git(repo, 'commit', '-q', '--allow-empty', '-m', 'my own commit');
      const t1 = await history.beginTurn({
        chatId: 'chat-a',
        prompt: 'Add hello\nmore',
        agent: 'claude-code',
        chatTitle: 'Greetings',
      });
      write(repo, 'hello.txt', 'one\ntwo\n');
      write(repo, 'README.md', '# demo\nchanged\n');
      await history.endTurn(t1.turnId, 'completed');
      // Codex's hook named where the turn sits in its thread (issue 32): Continue Chat applies to its row.
      const t2 = await history.beginTurn({
        chatId: 'chat-b',
        prompt: 'Remove hello',
        agent: 'codex',
        anchor: { chatRef: 'thread-b', turnRef: 'turn-b' },
      });
      fs.rmSync(path.join(repo, 'hello.txt'));
      await history.endTurn(t2.turnId, 'completed');
      const t3 = await history.beginTurn({ chatId: 'chat-a', prompt: 'Add world' });
      write(repo, 'world.txt', 'w\n');
      await history.endTurn(t3.turnId, 'completed');

      let view = await history.versionsView(100);
      let rows = rowsOf(view);
      assert.deepEqual(
        rows.map((r) => [r.kind, r.label]),
        [
          ['agent', 'Add world'],
          ['agent', 'Remove hello'],
          ['agent', 'Add hello'],
          ['user', 'my own commit'],
          ['user', 'initial'],
        ],
      );
      assert.equal(rows[0].oid, head(repo));
      assert.deepEqual(
        rows.map((r) => r.isHead),
        [true, false, false, false, false],
      );
      assert.deepEqual(
        rows.map((r) => [r.filesChanged, r.insertions, r.deletions]),
        [
          [1, 1, 0],
          [1, 0, 2],
          [2, 3, 0],
          [0, 0, 0],
          [2, 3, 0],
        ],
      );
      assert.deepEqual(rows[2].turn, {
        id: t1.turnId,
        chatId: 'chat-a',
        chatTitle: 'Greetings',
        agent: 'claude-code',
        outcome: 'completed',
        undone: false,
        canUndo: true,
        canContinueChat: false,
        chatIndex: 1,
      });
      assert.equal(rows[1].turn?.agent, 'codex');
      assert.equal(rows[1].turn?.canContinueChat, true, 'an anchor recorded for its own agent');
      // Rows of one conversation share a number: chat-a (newest first) is 1, chat-b is 2.
      assert.deepEqual(
        rows.map((r) => r.turn?.chatIndex ?? 0),
        [1, 2, 1, 0, 0],
      );
      assert.equal(rows[3].turn, null);
      assert.equal(view.kind === 'versions' && view.canRedo, false);
      assert.equal(view.kind === 'versions' && view.hasTurns, true);

      const before = contentInventory(repo);
      await history.undo(t3.turnId);
      view = await history.versionsView(100);
      rows = rowsOf(view);
      assert.equal(rows[0].kind, 'restore');
      assert.equal(rows[0].turn, null, 'the [Restore] row does not pose as the turn it undid');
      assert.equal(rows[1].label, 'Add world');
      assert.equal(rows[1].turn?.undone, true);
      assert.equal(rows[1].turn?.canUndo, false);
      assert.equal(rows[2].turn?.canUndo, true);
      assert.equal(view.kind === 'versions' && view.canRedo, true);
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('pages: `limit` versions and hasMore from one extra commit', async () => {
    const repo = makeRepo();
    for (let i = 0; i < 6; i++) git(repo, 'commit', '-q', '--allow-empty', '-m', `c${i}`);
    const history = await VersionHistory.open(repo);
    try {
      const first = await history.versionsView(3);
      assert.equal(rowsOf(first).length, 3);
      assert.equal(first.kind === 'versions' && first.hasMore, true);
      const all = await history.versionsView(7);
      assert.equal(rowsOf(all).length, 7);
      assert.equal(all.kind === 'versions' && all.hasMore, false);
      assert.equal(
        all.kind === 'versions' && all.hasTurns,
        false,
        'no turns yet: the view adds how to connect an agent',
      );
    } finally {
      await history.close();
    }
  });

  it('an unborn branch with no turns is the empty state; a recovery latch is the blocked state', async () => {
    const repo = makeRepo({ commit: false });
    const history = await VersionHistory.open(repo);
    try {
      assert.deepEqual(await history.versionsView(100), { kind: 'empty', branch: 'main' });
      await contextOf(history).store.transaction((tx) => setRecovery(tx, null, 'test latch', null, Date.now()));
      assert.deepEqual(await history.versionsView(100), { kind: 'blocked', message: BLOCKED_MESSAGE });
    } finally {
      await history.close();
    }
  });

  it('runs exactly one git process per refresh (counted by a PATH shim around the real git)', async function () {
    const repo = makeRepo();
    for (let i = 0; i < 3; i++) git(repo, 'commit', '-q', '--allow-empty', '-m', `c${i}`);
    const history = await VersionHistory.open(repo);
    const shimDir = tempDir('avh-git-shim-');
    const counter = path.join(shimDir, 'count');
    const realGit = (process.env.PATH ?? '')
      .split(path.delimiter)
      .map((d) => path.join(d, 'git'))
      .find((f) => fs.existsSync(f) && fs.statSync(f).isFile());
    assert.ok(realGit, 'git is on PATH');
    fs.writeFileSync(path.join(shimDir, 'git'), `#!/bin/sh\necho x >> '${counter}'\nexec '${realGit}' "$@"\n`, {
      mode: 0o755,
    });
    const savedPath = process.env.PATH;
    process.env.PATH = `${shimDir}${path.delimiter}${savedPath}`;
    configureGitExecutable([]); // git is resolved once per folder: forget it, so the shim first on PATH is the git found
    try {
      const view = await history.versionsView(100);
      assert.equal(rowsOf(view).length, 4);
      assert.equal(fs.readFileSync(counter, 'utf8').trim().split('\n').length, 1);
    } finally {
      process.env.PATH = savedPath;
      configureGitExecutable([]);
      await history.close();
    }
  });

  it('changed files of a version against its parent: added, deleted, modified, and a root commit', async () => {
    const repo = makeRepo();
    const root = head(repo);
    write(repo, 'a.txt', 'a\n');
    write(repo, 'bin.dat', Buffer.from([0, 1, 2, 0]));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'add');
    fs.rmSync(path.join(repo, 'a.txt'));
    write(repo, 'README.md', 'changed\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'change');
    const history = await VersionHistory.open(repo);
    try {
      const change = await history.changedFiles(head(repo));
      assert.equal(change.parent, git(repo, 'rev-parse', 'HEAD~1').trim());
      assert.deepEqual(change.files, [
        { status: 'modified', path: 'README.md' },
        { status: 'deleted', path: 'a.txt' },
      ]);
      const first = await history.changedFiles(root);
      assert.equal(first.parent, null);
      assert.deepEqual(
        first.files.map((f) => f.status + ' ' + f.path),
        ['added .gitignore', 'added README.md'],
      );
      assert.equal(await history.fileAt(root, 'README.md'), '# demo\n');
      assert.equal(await history.fileAt(root, 'missing.txt'), null);
      await assert.rejects(history.changedFiles('HEAD'), /full commit id/);
    } finally {
      await history.close();
    }
  });
});
