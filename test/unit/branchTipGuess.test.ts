import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { guessBranchTip } from '../../src/core/git/healthProbe';
import { VersionHistory } from '../../src/core/versionHistory';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  tempDir,
  write,
} from '../support/gitFixtures';

/**
 * Restore planning starts its lookups on the branch tip the ref files name while the health probe runs; the guess
 * must match git exactly or be null, and a wrong guess must never steer a restore.
 */
describe('branch tip read from the ref files (restore planning starts early on it)', () => {
  afterEach(cleanupTempDirs);

  const gitDir = (repo: string) => git(repo, 'rev-parse', '--absolute-git-dir').trim();
  const headOf = (repo: string) => git(repo, 'rev-parse', 'HEAD').trim();

  it('a loose ref, a packed ref and a linked worktree give what git reports', () => {
    const repo = makeRepo();
    assert.deepEqual(guessBranchTip(gitDir(repo)), { branch: 'main', head: headOf(repo) });
    git(repo, 'pack-refs', '--all');
    assert.equal(fs.existsSync(path.join(gitDir(repo), 'refs/heads/main')), false);
    assert.deepEqual(guessBranchTip(gitDir(repo)), { branch: 'main', head: headOf(repo) });
    const linked = path.join(tempDir(), 'linked');
    git(repo, 'worktree', 'add', '-q', '-b', 'side/feature', linked);
    write(linked, 'side.txt', 'side\n');
    git(linked, 'add', '-A');
    git(linked, 'commit', '-q', '-m', 'side');
    assert.deepEqual(guessBranchTip(gitDir(linked)), { branch: 'side/feature', head: headOf(linked) });
  });

  it('detached, unborn and unreadable refs give no guess', () => {
    const repo = makeRepo();
    git(repo, 'checkout', '-q', '--detach');
    assert.equal(guessBranchTip(gitDir(repo)), null);
    const empty = makeRepo({ commit: false });
    assert.equal(guessBranchTip(gitDir(empty)), null);
    fs.writeFileSync(path.join(gitDir(repo), 'HEAD'), 'ref: refs/heads/main\n');
    fs.writeFileSync(path.join(gitDir(repo), 'refs/heads/main'), 'ref: refs/heads/other\n'); // a symbolic ref
    assert.equal(guessBranchTip(gitDir(repo)), null);
  });

  it('Undo and Redo plan on the guessed tip in a linked worktree with packed refs, and restore exactly', async () => {
    const repo = makeRepo();
    const linked = path.join(tempDir(), 'linked');
    git(repo, 'worktree', 'add', '-q', '-b', 'feature', linked);
    const before = contentInventory(linked);
    const history = await VersionHistory.open(linked);
    try {
      const baseTree = git(linked, 'rev-parse', 'HEAD^{tree}').trim();
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'edit' });
      write(linked, 'a.txt', 'agent\n');
      const { version } = await history.endTurn(turnId, 'completed');
      assert.ok(version);
      git(repo, 'pack-refs', '--all');
      assert.deepEqual(guessBranchTip(gitDir(linked)), { branch: 'feature', head: version });
      const undone = await history.undo(turnId);
      assert.equal(undone.result, 'restored');
      assert.equal(git(linked, 'rev-parse', 'HEAD^{tree}').trim(), baseTree);
      const redone = await history.redo();
      assert.equal(redone.result, 'restored');
      assert.equal(
        git(linked, 'rev-parse', 'HEAD^{tree}').trim(),
        git(linked, 'rev-parse', `${version}^{tree}`).trim(),
      );
      assert.equal(git(linked, 'status', '--porcelain', '--untracked-files=all').trim(), '');
    } finally {
      await history.close();
    }
    assertNothingLost(linked, before);
  });
});
