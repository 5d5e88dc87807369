import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { gitLauncherReady, startGitLauncher, stopGitLauncher } from '../../src/core/git/gitLauncher';
import { GitCommandError, runGit } from '../../src/core/git/gitRunner';
import { VersionHistory } from '../../src/core/versionHistory';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  read,
  write,
} from '../support/gitFixtures';

/** The pid of the process that started the git running this alias (field 4 of /proc/<git pid>/stat). */
const PARENT_OF_GIT = ['-c', 'alias.parent=!cut -d" " -f4 /proc/$PPID/stat', 'parent'];

async function startedBy(repo: string): Promise<number> {
  return Number((await runGit(repo, PARENT_OF_GIT)).stdout.trim());
}

/** Every way a git command can end, run the same way through whichever path is active. */
async function outcomes(repo: string): Promise<unknown[]> {
  const caught = (p: Promise<unknown>) =>
    p.then(
      (value) => ({ ok: value }),
      (error: unknown) =>
        error instanceof GitCommandError
          ? { reason: error.reason, message: error.message, exitCode: error.exitCode }
          : { other: String(error) },
    );
  return Promise.all([
    caught(runGit(repo, ['rev-parse', 'HEAD^{tree}'])),
    caught(runGit(repo, ['hash-object', '-w', '--stdin'], { input: 'from stdin\n' })),
    caught(runGit(repo, ['hash-object', '--stdin'], { input: Buffer.from([0, 1, 2, 255]) })),
    caught(runGit(repo, ['diff', '--quiet', 'HEAD'], { okCodes: [1] })),
    caught(runGit(repo, ['rev-parse', '--verify', '-q', 'no-such-ref'])),
    caught(runGit(repo, ['cat-file', '-p', 'HEAD:no-such-file'])),
    caught(runGit(repo, ['var', 'GIT_EDITOR'], { env: { GIT_EDITOR: 'from-options' } })),
    caught(runGit(repo, ['-c', 'alias.slow=!sleep 1', 'slow'], { timeoutMs: 300 })),
    caught(runGit(`${repo}/no-such-folder`, ['status'])),
  ]);
}

describe('git launcher: commands started from a small helper process give exactly what a direct spawn gives', function () {
  this.timeout(60_000);
  afterEach(() => {
    stopGitLauncher();
    cleanupTempDirs();
  });

  it('every outcome (output, stdin text and bytes, ok codes, failures, environment, timeout, missing folder) is the same through the launcher', async () => {
    const repo = makeRepo();
    write(repo, 'a.txt', 'changed\n');
    const direct = await outcomes(repo);
    assert.equal(await startedBy(repo), process.pid, 'without a launcher, this process starts git');

    startGitLauncher();
    assert.equal(await gitLauncherReady(), true);
    const launcherPid = await startedBy(repo);
    assert.notEqual(launcherPid, process.pid, 'with a ready launcher, another process starts git');
    assert.deepEqual(await outcomes(repo), direct);
  });

  it('a launcher killed while git runs: that command fails with a plain message, the next ones run (directly, then through a new launcher)', async () => {
    const repo = makeRepo();
    startGitLauncher();
    assert.equal(await gitLauncherReady(), true);
    const launcherPid = await startedBy(repo);
    const running = runGit(repo, ['-c', 'alias.slow=!sleep 2', 'slow']);
    await new Promise((r) => setTimeout(r, 200));
    process.kill(launcherPid, 'SIGKILL');
    await assert.rejects(
      running,
      (error: unknown) =>
        error instanceof GitCommandError && error.reason === 'git-failed' && /did not finish/.test(error.message),
    );
    // Right after: git is spawned directly while the new launcher starts; then the new launcher answers.
    assert.equal((await runGit(repo, ['rev-parse', '--is-inside-work-tree'])).stdout.trim(), 'true');
    assert.equal(await gitLauncherReady(), true);
    const second = await startedBy(repo);
    assert.ok(second !== process.pid && second !== launcherPid, `a new launcher (${second}) starts git`);
  });

  it('a turn and its Undo through the launcher: the tree is restored and nothing is lost', async () => {
    const repo = makeRepo();
    write(repo, 'notes.md', 'mine\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'notes');
    startGitLauncher();
    assert.equal(await gitLauncherReady(), true);
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'chat-1', prompt: 'edit notes' });
      write(repo, 'notes.md', 'agent\n');
      write(repo, 'new.txt', 'agent file\n');
      await history.endTurn(turnId, 'completed');
      const before = contentInventory(repo);
      const undone = await history.undo(turnId);
      assert.equal(undone.result, 'restored');
      assert.equal(read(repo, 'notes.md'), 'mine\n');
      assert.equal(fs.existsSync(`${repo}/new.txt`), false);
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });
});
