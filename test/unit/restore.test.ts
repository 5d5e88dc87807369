import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../../src/core/errors';
import { expectReason } from '../support/assertions';
import { VersionHistory } from '../../src/core/versionHistory';
import { CLI, cliJson, runCliProcess } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  gitStatus,
  head,
  makeRepo,
  read,
  subjectOf,
  testGitEnv,
  write,
} from '../support/gitFixtures';
import { contextOf } from '../../src/core/repoContextOf';

function treeOf(repo: string, rev = 'HEAD'): string {
  return git(repo, 'rev-parse', `${rev}^{tree}`).trim();
}

function statusClean(repo: string): boolean {
  return git(repo, 'status', '--porcelain', '--untracked-files=all').trim() === '';
}

/** A repository with one completed agent turn on top of the initial commit. */
async function repoWithCompletedTurn(): Promise<{
  repo: string;
  history: VersionHistory;
  turnId: string;
  base: string;
  version: string;
}> {
  const repo = makeRepo();
  const history = await VersionHistory.open(repo);
  const base = head(repo);
  const { turnId } = await history.beginTurn({ chatId: 'chat', prompt: 'Write the feature' });
  write(repo, 'feature.ts', 'export const feature = true;\n');
  write(repo, 'README.md', '# demo\nwith feature\n');
  const { version } = await history.endTurn(turnId, 'completed');
  assert.ok(version);
  return { repo, history, turnId, base, version };
}

describe('undo, redo and restore (real git, real store)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('undo of a completed turn restores its base as a [Restore] commit; redo brings back the exact tree', async () => {
    const { repo, history, turnId, base, version } = await repoWithCompletedTurn();
    try {
      const before = contentInventory(repo);
      const versionTree = treeOf(repo);
      const undo = await history.undo();
      assert.equal(undo.result, 'restored');
      assert.equal(undo.turnId, turnId);
      assert.equal(head(repo), undo.restoreCommit);
      assert.equal(subjectOf(repo), `[Restore] Restored version ${base.slice(0, 7)}`);
      assert.equal(git(repo, 'rev-parse', 'HEAD^').trim(), version, 'history is never rewritten');
      assert.equal(treeOf(repo), treeOf(repo, base));
      assert.ok(statusClean(repo));
      assert.equal(fs.existsSync(path.join(repo, 'feature.ts')), false);
      assert.deepEqual(await history.historyCounts(), { undo: 0, redo: 1 });
      const redo = await history.redo();
      assert.equal(redo.result, 'restored');
      assert.equal(treeOf(repo), versionTree, 'redo restores the exact pre-undo tree');
      assert.ok(statusClean(repo));
      assert.deepEqual(await history.historyCounts(), { undo: 1, redo: 0 });
      assert.equal((await history.redo()).result, 'nothing-to-redo');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('Stop→Undo: a cancelled turn with dirty tracked, untracked and binary files is saved as [Interrupted], then restored', async () => {
    const repo = makeRepo();
    write(repo, 'user.txt', 'the user had this before the turn\n');
    git(repo, 'add', 'user.txt');
    git(repo, 'commit', '-q', '-m', 'user work');
    const history = await VersionHistory.open(repo);
    try {
      const { turnId, baseCommit } = await history.beginTurn({ chatId: 'c', prompt: 'Refactor everything' });
      write(repo, 'user.txt', 'agent rewrote half of it\n');
      write(repo, 'new-untracked.ts', 'partial\n');
      write(repo, 'blob.bin', Buffer.from([0, 255, 1, 254, 0]));
      write(repo, 'ignored/keep.txt', 'ignored content\n');
      await history.endTurn(turnId, 'cancelled');
      const before = contentInventory(repo);
      const undo = await history.undo();
      assert.equal(undo.result, 'restored');
      assert.ok(undo.preserved, 'partial work was preserved');
      assert.equal(
        subjectOf(repo, undo.preserved),
        '[Interrupted] Saved partial changes before restoring to an earlier version',
      );
      assert.equal(git(repo, 'show', `${undo.preserved}:user.txt`), 'agent rewrote half of it\n');
      assert.equal(git(repo, 'show', `${undo.preserved}:new-untracked.ts`), 'partial\n');
      assert.ok(git(repo, 'cat-file', '-s', `${undo.preserved}:blob.bin`).trim() === '5');
      assert.equal(git(repo, 'rev-parse', 'HEAD^').trim(), undo.preserved, '[Restore] sits on top of [Interrupted]');
      assert.equal(treeOf(repo), treeOf(repo, baseCommit), 'the tree is exactly the base snapshot');
      assert.equal(read(repo, 'user.txt'), 'the user had this before the turn\n');
      assert.equal(read(repo, 'ignored/keep.txt'), 'ignored content\n', 'ignored files untouched');
      assert.ok(statusClean(repo));
      const versions = await history.getVersions(5);
      assert.deepEqual(
        versions.slice(0, 2).map((v) => v.kind),
        ['restore', 'interrupted'],
      );
      assert.equal(versions[1].outcome, 'cancelled');
      assert.equal(await history.promptOf(turnId), 'Refactor everything');
      assertNothingLost(repo, before);
      // Redo brings back the exact pre-undo tree, partial work included.
      await history.redo();
      assert.equal(treeOf(repo), treeOf(repo, undo.preserved));
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('Undo of a still-running turn ends it cancelled first, tells the listener, and preserves its work', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, 'wip.txt', 'work in progress\n');
      const cancelled: string[] = [];
      const undo = await history.undo(undefined, { onTurnCancelled: (t) => cancelled.push(t.turnId) });
      assert.deepEqual(cancelled, [turnId]);
      assert.ok(undo.preserved);
      assert.equal(git(repo, 'show', `${undo.preserved}:wip.txt`), 'work in progress\n');
      const row = await contextOf(history).store.read((r) =>
        r.get<{ terminal_outcome: string }>('SELECT terminal_outcome FROM turns WHERE id = ?', [turnId]),
      );
      assert.equal(row?.terminal_outcome, 'cancelled');
      assert.equal(fs.existsSync(path.join(repo, 'wip.txt')), false);
    } finally {
      await history.close();
    }
  });

  it('dirty tree + completed target: a conflict before anything is touched, no recovery, history still usable', async () => {
    const { repo, history } = await repoWithCompletedTurn();
    try {
      write(repo, 'mine.txt', 'my own uncommitted edit\n');
      const headBefore = head(repo);
      const indexBefore = fs.readFileSync(path.join(repo, '.git', 'index'));
      const err = await expectReason(history.undo(), 'dirty-conflict');
      assert.match(err.message, /uncommitted changes/);
      assert.equal(head(repo), headBefore);
      assert.deepEqual(fs.readFileSync(path.join(repo, '.git', 'index')), indexBefore);
      assert.equal(read(repo, 'mine.txt'), 'my own uncommitted edit\n');
      const status = await history.status();
      assert.equal(status.recovery, null);
      assert.equal(status.operation, null);
      fs.rmSync(path.join(repo, 'mine.txt'));
      assert.equal((await history.undo()).result, 'restored', 'Undo works once the tree is clean');
    } finally {
      await history.close();
    }
  });

  it('every blocker gives its specific ordinary failure and changes nothing', async () => {
    const { repo, history } = await repoWithCompletedTurn();
    try {
      const headBefore = head(repo);
      const check = async (setup: () => void, teardown: () => void, reason: string) => {
        setup();
        await expectReason(history.undo(), reason);
        assert.equal(head(repo), headBefore);
        teardown();
        const s = await history.status();
        assert.equal(s.recovery, null);
      };
      const gd = path.join(repo, '.git');
      const marker = (name: string, dir = false) =>
        [
          () => (dir ? fs.mkdirSync(path.join(gd, name)) : fs.writeFileSync(path.join(gd, name), `${headBefore}\n`)),
          () => fs.rmSync(path.join(gd, name), { recursive: true, force: true }),
        ] as const;
      for (const [name, dir] of [
        ['MERGE_HEAD', false],
        ['rebase-merge', true],
        ['rebase-apply', true],
        ['CHERRY_PICK_HEAD', false],
        ['REVERT_HEAD', false],
        ['BISECT_LOG', false],
      ] as const) {
        const [s, t] = marker(name, dir);
        await check(s, t, 'operation-in-progress');
      }
      const [ls, lt] = marker('index.lock');
      await check(ls, lt, 'index-locked');
      await check(
        () => git(repo, 'checkout', '-q', '--detach'),
        () => git(repo, 'checkout', '-q', 'main'),
        'detached-head',
      );
    } finally {
      await history.close();
    }
  });

  it('a real unmerged index blocks Undo with its own reason', async () => {
    const { repo, history } = await repoWithCompletedTurn();
    try {
      git(repo, 'checkout', '-q', '-b', 'side', 'HEAD~1');
      write(repo, 'README.md', '# side change\n');
      git(repo, 'commit', '-q', '-am', 'side');
      git(repo, 'checkout', '-q', 'main');
      assert.notEqual(gitStatus(repo, 'merge', 'side').code, 0);
      const headBefore = head(repo);
      const e = await history.undo().catch((x: unknown) => x);
      assert.ok(e instanceof AvhError);
      assert.ok(['unmerged-entries', 'operation-in-progress'].includes(e.reason), e.reason);
      assert.equal(head(repo), headBefore);
    } finally {
      await history.close();
    }
  });

  it("restoring past the user's own commits needs confirmation naming the count", async () => {
    const { repo, history, base } = await repoWithCompletedTurn();
    try {
      write(repo, 'hand.txt', 'by hand\n');
      git(repo, 'add', 'hand.txt');
      git(repo, 'commit', '-q', '-m', 'my own commit');
      const headBefore = head(repo);
      const preview = await history.preview({ kind: 'undo' });
      assert.equal(preview.userCommits, 1);
      const err = await expectReason(history.undo(), 'confirmation-required');
      assert.match(err.message, /undoes 1 commit you made yourself/);
      assert.equal(head(repo), headBefore);
      const r = await history.undo(undefined, { confirmUserCommits: true });
      assert.equal(r.result, 'restored');
      assert.equal(treeOf(repo), treeOf(repo, base));
      assert.equal(
        gitStatus(repo, 'merge-base', '--is-ancestor', headBefore, 'HEAD').code,
        0,
        'the user commit stays reachable',
      );
      // Restore to an arbitrary version (the user commit) the same way.
      const back = await history.restore(headBefore.slice(0, 12));
      assert.equal(back.result, 'restored');
      assert.equal(read(repo, 'hand.txt'), 'by hand\n');
    } finally {
      await history.close();
    }
  });

  it('a restore that would change nothing says so and makes no commit; nothing-to-undo when no turn that changed something is left', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      assert.equal((await history.undo()).result, 'nothing-to-undo');
      const t = await history.beginTurn({ chatId: 'c', prompt: 'nothing' });
      await history.endTurn(t.turnId, 'completed');
      const h = head(repo);
      // A turn that changed nothing is never plain Undo's target (docs/product-contract.md §5.1); undone by its id, it
      // says so.
      assert.equal((await history.undo()).result, 'nothing-to-undo');
      assert.deepEqual(await history.undo(t.turnId), { result: 'no-change', turnId: t.turnId });
      assert.equal(head(repo), h);
      assert.equal((await history.restore('HEAD')).result, 'no-change');
      await expectReason(history.restore('not-a-commit-anywhere'), 'invalid-input');
      await expectReason(history.restore('--output=/tmp/x'), 'invalid-input');
    } finally {
      await history.close();
    }
  });

  it('redo is offered only while nothing new happened since the undo', async () => {
    const { repo, history } = await repoWithCompletedTurn();
    try {
      await history.undo();
      assert.equal((await history.historyCounts()).redo, 1);
      write(repo, 'new.txt', 'new work\n');
      git(repo, 'add', 'new.txt');
      git(repo, 'commit', '-q', '-m', 'something new');
      assert.equal((await history.historyCounts()).redo, 0);
      assert.equal((await history.redo()).result, 'nothing-to-redo');
    } finally {
      await history.close();
    }
  });

  it('CLI undo/redo/restore give JSON results and refuse user commits without --yes', async () => {
    const { repo, history, base } = await repoWithCompletedTurn();
    await history.close();
    write(repo, 'hand.txt', 'by hand\n');
    git(repo, 'add', 'hand.txt');
    git(repo, 'commit', '-q', '-m', 'mine');
    const refused = runCliProcess(['undo', '--json'], { cwd: repo });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /--yes/);
    const undo = cliJson<{ result: string; restoreCommit: string }>(['undo', '--yes'], { cwd: repo });
    assert.equal(undo.result, 'restored');
    assert.equal(undo.restoreCommit, head(repo));
    assert.equal(treeOf(repo), treeOf(repo, base));
    const redo = cliJson<{ result: string }>(['redo'], { cwd: repo });
    assert.equal(redo.result, 'restored');
    assert.equal(cliJson<{ result: string }>(['redo'], { cwd: repo }).result, 'nothing-to-redo');
    const restore = cliJson<{ result: string }>(['restore', base, '--yes'], { cwd: repo });
    assert.equal(restore.result, 'restored');
    assert.equal(runCliProcess(['restore'], { cwd: repo }).code, 2);
  });

  it("a submodule with uncommitted changes inside: turns and Undo work, the submodule's own files are never touched", async () => {
    const lib = makeRepo();
    write(lib, 'lib.txt', 'library v1\n');
    git(lib, 'add', '-A');
    git(lib, 'commit', '-q', '-m', 'lib');
    const repo = makeRepo();
    git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'vendor/lib');
    git(repo, 'commit', '-q', '-m', 'add submodule');
    write(repo, 'vendor/lib/lib.txt', 'edited inside the submodule\n');
    const history = await VersionHistory.open(repo);
    try {
      const before = contentInventory(repo);
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'top-level change' });
      write(repo, 'top.txt', 'top\n');
      const end = await history.endTurn(turnId, 'completed');
      assert.ok(end.version);
      const undo = await history.undo();
      assert.equal(undo.result, 'restored');
      assert.equal(fs.existsSync(path.join(repo, 'top.txt')), false);
      assert.equal(read(repo, 'vendor/lib/lib.txt'), 'edited inside the submodule\n', 'submodule content untouched');
      assert.equal((await history.status()).recovery, null);
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('a linked worktree keeps its own state in its own git dir; Undo there leaves the main worktree alone', async () => {
    const repo = makeRepo();
    const wt = path.join(path.dirname(repo), `${path.basename(repo)}-wt`);
    git(repo, 'worktree', 'add', '-q', '-b', 'feature', wt);
    try {
      const history = await VersionHistory.open(wt);
      try {
        assert.match(history.repository.stateDir, /\.git\/worktrees\/.+\/agent-versions$/);
        const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'in the worktree' });
        write(wt, 'wt.txt', 'worktree change\n');
        const { version } = await history.endTurn(turnId, 'completed');
        assert.equal(git(wt, 'rev-parse', 'feature').trim(), version);
        const mainHead = head(repo);
        assert.equal((await history.undo()).result, 'restored');
        assert.equal(fs.existsSync(path.join(wt, 'wt.txt')), false);
        assert.equal(head(repo), mainHead, 'the main worktree did not move');
      } finally {
        await history.close();
      }
    } finally {
      fs.rmSync(wt, { recursive: true, force: true });
    }
  });

  it('line-ending conversion (eol=crlf): Undo succeeds, the postcondition proven by the full probe when bytes differ from blobs', async () => {
    const repo = makeRepo();
    write(repo, '.gitattributes', '*.txt text eol=crlf\n');
    write(repo, 'a.txt', 'line one\nline two\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'crlf files');
    git(repo, 'rm', '-q', '--cached', '-r', '.');
    git(repo, 'reset', '-q', '--hard');
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'edit' });
      write(repo, 'a.txt', 'line one\r\nchanged\r\n');
      write(repo, 'b.txt', 'new\r\n');
      assert.ok((await history.endTurn(turnId, 'completed')).version);
      const undo = await history.undo();
      assert.equal(undo.result, 'restored');
      assert.equal(read(repo, 'a.txt'), 'line one\r\nline two\r\n');
      assert.equal(fs.existsSync(path.join(repo, 'b.txt')), false);
      assert.equal((await history.status()).recovery, null);
    } finally {
      await history.close();
    }
  });

  it('an ignored file in the way of the restore is never overwritten: the Undo fails ordinarily and changes nothing', async () => {
    const repo = makeRepo();
    write(repo, 'keep.log', 'tracked despite *.log\n');
    git(repo, 'add', '-f', 'keep.log');
    git(repo, 'commit', '-q', '-m', 'force-added log');
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'remove the log' });
      fs.rmSync(path.join(repo, 'keep.log'));
      assert.ok((await history.endTurn(turnId, 'completed')).version);
      write(repo, 'keep.log', 'a new ignored file the user cares about\n');
      const headBefore = head(repo);
      const e = await expectReason(history.undo(), 'dirty-conflict');
      assert.match(e.message, /1 ignored file .* would be overwritten/);
      assert.equal(read(repo, 'keep.log'), 'a new ignored file the user cares about\n');
      assert.equal(head(repo), headBefore);
      assert.equal((await history.status()).recovery, null, 'an ordinary failure, not recovery');
    } finally {
      await history.close();
    }
  });

  it('Stop→Undo with an ignored file where the base needs a folder: partial work saved, the ignored file untouched, clear message', async () => {
    const repo = makeRepo();
    write(repo, '.gitignore', 'cfg\n');
    write(repo, 'cfg/app.json', '{"v":1}\n');
    git(repo, 'add', '-f', '.gitignore', 'cfg/app.json');
    git(repo, 'commit', '-q', '-m', 'config');
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'flatten config' });
      fs.rmSync(path.join(repo, 'cfg'), { recursive: true });
      write(repo, 'cfg', 'an ignored file now\n');
      write(repo, 'partial.txt', 'partial work\n');
      await history.endTurn(turnId, 'cancelled');
      const before = contentInventory(repo);
      const e = await expectReason(history.undo(), 'dirty-conflict');
      assert.match(e.message, /ignored file .*would be overwritten/);
      assert.match(e.message, /saved as an Interrupted version/);
      assert.equal(read(repo, 'cfg'), 'an ignored file now\n');
      assert.equal(subjectOf(repo), '[Interrupted] Saved partial changes before restoring to an earlier version');
      assert.equal(git(repo, 'show', 'HEAD:partial.txt'), 'partial work\n');
      assert.equal((await history.status()).recovery, null);
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('two processes Undo at once: one restores, the other gets a clear message', async () => {
    const { repo, history } = await repoWithCompletedTurn();
    await history.close();
    const before = contentInventory(repo);
    const run = () =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, 'undo', '--json'], { cwd: repo, env: testGitEnv() });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => {
          stdout += d;
        });
        child.stderr.on('data', (d) => {
          stderr += d;
        });
        child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      });
    const results = await Promise.all([run(), run()]);
    const restored = results.filter((r) => r.code === 0 && JSON.parse(r.stdout).result === 'restored');
    assert.equal(restored.length, 1, JSON.stringify(results));
    const other = results.find((r) => r !== restored[0])!;
    // The loser either saw the restore in progress, or came after it and found nothing left to undo.
    const ok =
      (other.code === 1 && /another restore is in progress/i.test(other.stderr)) ||
      (other.code === 0 && JSON.parse(other.stdout).result === 'nothing-to-undo');
    assert.ok(ok, JSON.stringify(other));
    assertNothingLost(repo, before);
    assert.equal(cliJson<{ recovery: unknown }>(['status'], { cwd: repo }).recovery, null);
  });

  it('Undo racing a turn begin: both finish, in some order, with nothing lost and a consistent store', async () => {
    const { repo, history } = await repoWithCompletedTurn();
    await history.close();
    const before = contentInventory(repo);
    const spawnCli = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, ...args], { cwd: repo, env: testGitEnv() });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => {
          stdout += d;
        });
        child.stderr.on('data', (d) => {
          stderr += d;
        });
        child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      });
    const [undo, begin] = await Promise.all([
      spawnCli(['undo', '--json']),
      spawnCli(['turn', 'begin', '--chat', 'race', '--prompt', 'p', '--json']),
    ]);
    assert.equal(undo.code, 0, undo.stderr);
    assert.equal(begin.code, 0, begin.stderr);
    const undone = JSON.parse(undo.stdout) as { result: string; turnId?: string };
    const begun = JSON.parse(begin.stdout) as { turnId: string };
    const status = cliJson<{ runningTurns: { turnId: string }[]; recovery: unknown; operation: unknown }>(['status'], {
      cwd: repo,
    });
    assert.equal(status.recovery, null);
    assert.equal(status.operation, null);
    if (undone.turnId === begun.turnId) {
      // The begin won: Undo took the newest turn — the one just begun — and cancelled it (nothing to restore).
      assert.equal(status.runningTurns.length, 0);
      assert.equal(undone.result, 'no-change');
    } else {
      // The undo won: it restored the completed turn; the new turn began afterwards and is still running.
      assert.equal(undone.result, 'restored');
      assert.deepEqual(
        status.runningTurns.map((t) => t.turnId),
        [begun.turnId],
      );
    }
    assertNothingLost(repo, before);
  });
});
