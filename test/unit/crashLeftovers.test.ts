import * as assert from 'node:assert/strict';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAvhError } from '../../src/core/errors';
import { resolveRepository } from '../../src/core/git/repository';
import { clearOwnStaleIndexLock } from '../../src/core/git/workingTree';
import { linuxLiveness, portableLiveness, processStartTime, setLockLiveness } from '../../src/core/store/pidLock';
import { VersionHistory } from '../../src/core/versionHistory';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  write,
} from '../support/gitFixtures';

/** A pid whose process has exited (a real child that ran and finished). */
function deadPid(): number {
  const run = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(run.stdout);
}

describe('what a crash leaves behind (issue 9: stale index lock liveness, housekeeping, confirmed plans)', function () {
  this.timeout(120_000);
  const children: ChildProcess[] = [];
  let previous: ReturnType<typeof setLockLiveness> | null = null;

  function liveChild(): ChildProcess {
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    children.push(child);
    return child;
  }

  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    if (previous) setLockLiveness(previous);
    previous = null;
    cleanupTempDirs();
  });

  describe('clearOwnStaleIndexLock judges its holder with the lock liveness provider', () => {
    const ownLock = (gitDir: string, pid: number, start: string) =>
      fs.writeFileSync(path.join(gitDir, 'index.lock'), `agent-versions:${pid}:${start}\n`);

    for (const provider of [
      { name: 'portable (no start times, as off Linux)', make: () => portableLiveness() },
      { name: 'linux-proc', make: () => linuxLiveness() },
    ]) {
      it(`${provider.name}: a live holder's lock stays, a dead holder's is removed`, async () => {
        previous = setLockLiveness(provider.make());
        const repo = await resolveRepository(makeRepo());
        const lock = path.join(repo.gitDir, 'index.lock');
        const child = liveChild();
        // Off Linux the marker carries no start time; the holder is alive while its pid exists.
        ownLock(repo.gitDir, child.pid!, provider.name === 'linux-proc' ? String(processStartTime(child.pid!)) : '');
        assert.equal(clearOwnStaleIndexLock(repo), false);
        assert.ok(fs.existsSync(lock), 'a running holder keeps its lock');
        ownLock(repo.gitDir, deadPid(), '');
        assert.equal(clearOwnStaleIndexLock(repo), true);
        assert.equal(fs.existsSync(lock), false);
        // git's own lock (no marker of ours) is never touched.
        fs.writeFileSync(lock, '');
        assert.equal(clearOwnStaleIndexLock(repo), false);
        assert.ok(fs.existsSync(lock));
      });
    }

    it('linux-proc: a reused pid (another start time) is the holder gone', async function () {
      if (processStartTime(process.pid) === null) this.skip(); // needs /proc
      previous = setLockLiveness(linuxLiveness());
      const repo = await resolveRepository(makeRepo());
      const child = liveChild();
      ownLock(repo.gitDir, child.pid!, String(processStartTime(child.pid!)! + 1));
      assert.equal(clearOwnStaleIndexLock(repo), true);
    });
  });

  it('the next reconciliation removes temp index copies and atomic-write temps of dead processes only', async () => {
    const root = makeRepo();
    const h = await VersionHistory.open(root);
    const repo = h.repository;
    try {
      const tmp = path.join(repo.stateDir, 'tmp');
      fs.mkdirSync(tmp, { recursive: true });
      const dead = deadPid();
      const child = liveChild();
      const liveStart = processStartTime(child.pid!) ?? '';
      const deadFiles = [
        path.join(tmp, `index-${dead}--${randomUUID()}`),
        path.join(tmp, `index-${dead}-123-${randomUUID()}.lock`),
        path.join(repo.stateDir, `state.sqlite.tmp-${dead}`),
        path.join(repo.stateDir, `index-repair.tmp-${dead}`),
      ];
      const liveFiles = [
        path.join(tmp, `index-${child.pid}-${liveStart}-${randomUUID()}`),
        path.join(repo.stateDir, `state.sqlite.tmp-${child.pid}`),
        path.join(tmp, 'not-ours.txt'),
      ];
      for (const f of [...deadFiles, ...liveFiles]) fs.writeFileSync(f, 'leftover');
      await h.reconcile();
      for (const f of deadFiles)
        assert.equal(fs.existsSync(f), false, `${path.basename(f)} of a dead process is removed`);
      for (const f of liveFiles) assert.ok(fs.existsSync(f), `${path.basename(f)} stays`);
    } finally {
      await h.close();
    }
  });

  it('a temp index of this very process survives reconciliation while a turn runs (never removed under a live commit path)', async () => {
    const root = makeRepo();
    const h = await VersionHistory.open(root);
    try {
      const { turnId } = await h.beginTurn({ chatId: 'c', prompt: 'p' });
      write(root, 'a.txt', 'agent\n');
      // Reconciliation (another window) in the middle: the commit path's temp index belongs to a live process.
      const [ended] = await Promise.all([h.endTurn(turnId, 'completed'), h.reconcile()]);
      assert.ok(ended.version, 'the version was made');
      assert.deepEqual(
        fs.readdirSync(path.join(h.repository.stateDir, 'tmp')),
        [],
        'its temp index was disposed by its owner',
      );
    } finally {
      await h.close();
    }
  });

  describe('a confirmation confirms what runs (plan fingerprint)', () => {
    async function repoWithUserCommit(): Promise<{ repo: string; base: string; h: VersionHistory }> {
      const repo = makeRepo();
      const h = await VersionHistory.open(repo);
      const base = head(repo);
      const { turnId } = await h.beginTurn({ chatId: 'c', prompt: 'agent work' });
      write(repo, 'agent.txt', 'agent\n');
      await h.endTurn(turnId, 'completed');
      write(repo, 'mine.txt', 'user 1\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'user commit 1');
      return { repo, base, h };
    }

    it('a commit made after the modal confirmed the preview: the restore is refused untouched, the new preview is asked for', async () => {
      const { repo, base, h } = await repoWithUserCommit();
      try {
        const preview = await h.preview({ kind: 'restore', target: base });
        assert.equal(preview.userCommits, 1);
        // Between the modal and the run, the user commits again.
        write(repo, 'mine.txt', 'user 2\n');
        git(repo, 'commit', '-q', '-am', 'user commit 2');
        const before = contentInventory(repo);
        const headBefore = head(repo);
        await assert.rejects(
          h.restore(base, { confirmUserCommits: true, expectedPlan: preview.fingerprint }),
          (error: unknown) => {
            assert.ok(isAvhError(error, 'confirmation-required'));
            assert.equal(error.details.planChanged, true);
            assert.equal(error.details.count, 2);
            assert.match(error.message, /changed since it was confirmed.*nothing was changed/i);
            return true;
          },
        );
        assert.equal(head(repo), headBefore, 'nothing ran');
        assert.equal(git(repo, 'status', '--porcelain'), '');
        const again = await h.preview({ kind: 'restore', target: base });
        assert.equal(again.userCommits, 2);
        assert.notEqual(again.fingerprint, preview.fingerprint);
        const done = await h.restore(base, { confirmUserCommits: true, expectedPlan: again.fingerprint });
        assert.equal(done.result, 'restored');
        assertNothingLost(repo, before);
      } finally {
        await h.close();
      }
    });

    it('a new turn after the preview of Undo: the confirmed Undo is refused instead of undoing the new turn', async () => {
      const { repo, h } = await repoWithUserCommit();
      try {
        const preview = await h.preview({ kind: 'undo' });
        assert.ok(preview.turnId);
        const { turnId } = await h.beginTurn({ chatId: 'c', prompt: 'a newer turn' });
        write(repo, 'newer.txt', 'newer\n');
        await h.endTurn(turnId, 'completed');
        const headBefore = head(repo);
        await assert.rejects(
          h.undo(undefined, { confirmUserCommits: true, expectedPlan: preview.fingerprint }),
          (e: unknown) => isAvhError(e, 'confirmation-required'),
        );
        assert.equal(head(repo), headBefore);
        // The unchanged plan runs.
        const same = await h.preview({ kind: 'undo' });
        assert.equal(same.turnId, turnId);
        assert.equal(
          (await h.undo(undefined, { confirmUserCommits: true, expectedPlan: same.fingerprint })).result,
          'restored',
        );
      } finally {
        await h.close();
      }
    });
  });
});
