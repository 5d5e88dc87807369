import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAvhError } from '../../src/core/errors';
import { findStaleGitLocks } from '../../src/core/recovery/staleLocks';
import { leasePath } from '../../src/core/git/repositoryLease';
import { tryAcquireLock } from '../../src/core/store/pidLock';
import { VersionHistory } from '../../src/core/versionHistory';
import { cliJson, runCliProcess, TEST_BUILD_CLI } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  testGitEnv,
  write,
} from '../support/gitFixtures';
import { killedWhileRunning, slowGit } from '../support/slowGit';
import { contextOf } from '../../src/core/repoContextOf';

/**
 * Issue 9 items 1 and 4: a VersionHistory that stays open (an extension host) while a CLI restore in another
 * process is SIGKILLed in the middle of git's `read-tree -u` (the kill lands while git runs, proven by git's
 * trace2 stream). The long-lived process's next mutation settles the dead restore first and never snapshots or
 * commits the half-restored tree; git's index.lock left by the killed child is offered for removal only then.
 */

const tree = (repo: string, rev = 'HEAD') => git(repo, 'rev-parse', `${rev}^{tree}`).trim();

/** A repository with app.ts v1 and a completed agent turn on top (app.ts v2, a new file, README removed). */
async function repoWithTurn(): Promise<{ repo: string; base: string }> {
  const repo = makeRepo();
  write(repo, 'app.ts', 'v1\n');
  for (let i = 0; i < 6; i++) write(repo, `src/module${i}.ts`, `module ${i} v1\n`);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'app v1');
  const h = await VersionHistory.open(repo);
  try {
    const base = head(repo);
    const { turnId } = await h.beginTurn({ chatId: 'c', prompt: 'improve app' });
    write(repo, 'app.ts', 'v2 by the agent\n');
    for (let i = 0; i < 6; i++) write(repo, `src/module${i}.ts`, `module ${i} v2 by the agent\n`);
    fs.rmSync(path.join(repo, 'README.md'));
    await h.endTurn(turnId, 'completed');
    return { repo, base };
  } finally {
    await h.close();
  }
}

/** Runs `args` in a CLI process that is SIGKILLed (with its git child) while `git read-tree` runs. */
function killDuringReadTree(repo: string, args: string[]): void {
  const unslow = slowGit(repo, 'read-tree');
  const trace = path.join(repo, '.git', 'avh-trace2.json');
  const run = spawnSync(process.execPath, [TEST_BUILD_CLI, ...args], {
    cwd: repo,
    env: {
      ...testGitEnv(),
      AVH_FAILPOINT: 'git:read-tree:during',
      AVH_FAILPOINT_DELAY_MS: '150',
      GIT_TRACE2_EVENT: trace,
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  unslow();
  assert.equal(run.signal, 'SIGKILL', `the CLI restore was killed (${run.stderr})`);
  assert.ok(
    killedWhileRunning(trace, 'read-tree'),
    `the kill landed while git read-tree ran: ${fs
      .readFileSync(trace, 'utf8')
      .split('\n')
      .filter((l) => l.includes('cmd_name'))
      .join(' ')}`,
  );
  fs.rmSync(trace, { force: true });
}

/** What the long-lived process sees right after the crash, before it does anything: a restore still in flight. */
async function assertRestoreInFlight(h: VersionHistory): Promise<void> {
  assert.notEqual((await h.status()).operation, null, 'the dead restore is still recorded as in flight');
}

describe('reconcile before every mutation (a long-lived VersionHistory after a CLI restore died mid read-tree)', function () {
  this.timeout(180_000);
  afterEach(() => cleanupTempDirs());

  it('beginTurn settles the dead restore first and never snapshots the half-restored tree', async () => {
    const { repo, base } = await repoWithTurn();
    const oldHead = head(repo);
    const trees = new Set([tree(repo), tree(repo, base)]);
    const h = await VersionHistory.open(repo);
    try {
      const before = contentInventory(repo);
      killDuringReadTree(repo, ['undo', '--json']);
      await assertRestoreInFlight(h);
      const baseRefsBefore = git(repo, 'for-each-ref', 'refs/agent-versions/base/');
      let began: { baseCommit: string } | null = null;
      try {
        began = await h.beginTurn({ chatId: 'c2', prompt: 'next turn' });
      } catch (error) {
        assert.ok(
          isAvhError(error, 'recovery-required') || isAvhError(error, 'index-locked'),
          `refused for a settled reason, got ${String(error)}`,
        );
      }
      const status = await h.status();
      assert.equal(status.operation, null, 'the dead restore was settled by beginTurn');
      if (status.recovery) assert.equal(began, null, 'recovery latched: the turn is refused');
      if (began) {
        // Allowed only on a settled, consistent tree: the old state (rolled back) or the target (rolled forward).
        assert.ok(
          trees.has(tree(repo, began.baseCommit)),
          'the base snapshot is the old or the restored tree, never a half-restored one',
        );
      } else {
        assert.equal(
          git(repo, 'for-each-ref', 'refs/agent-versions/base/'),
          baseRefsBefore,
          'no base snapshot was written',
        );
      }
      assert.ok(
        status.recovery || head(repo) === oldHead || trees.has(tree(repo)),
        'old state, new state or recovery required',
      );
      assertNothingLost(repo, before);
    } finally {
      await h.close();
    }
  });

  it('endTurn settles the dead restore first and never commits the half-restored tree as an [Agent] version', async () => {
    const { repo, base } = await repoWithTurn();
    const oldTree = tree(repo);
    const h = await VersionHistory.open(repo);
    try {
      // A turn is running in the long-lived process (nothing written yet) when the CLI restore starts and dies.
      const { turnId } = await h.beginTurn({ chatId: 'c2', prompt: 'running turn' });
      const before = contentInventory(repo);
      const headBefore = head(repo);
      killDuringReadTree(repo, ['restore', base, '--yes', '--json']);
      await assertRestoreInFlight(h);
      const ended = await h.endTurn(turnId, 'completed');
      const status = await h.status();
      assert.equal(status.operation, null, 'the dead restore was settled by endTurn');
      if (ended.version !== null) {
        assert.equal(status.recovery, null);
        assert.ok(
          [oldTree, tree(repo, base)].includes(tree(repo, ended.version)),
          'a version holds a settled tree only',
        );
      } else {
        assert.notEqual(ended.reason, 'restore-in-progress', 'not refused for the dead restore: it was settled first');
        if (status.recovery) assert.equal(ended.reason, 'recovery-required');
        assert.ok(
          head(repo) === headBefore || git(repo, 'log', '-1', '--format=%s').startsWith('[Restore]'),
          'no [Agent] version was made',
        );
      }
      assertNothingLost(repo, before);
    } finally {
      await h.close();
    }
  });

  it('Remove Stale Lock: the index.lock of the killed read-tree is offered with its age, removes exactly that file, then recovery completes', async () => {
    const { repo } = await repoWithTurn();
    const before = contentInventory(repo);
    killDuringReadTree(repo, ['undo', '--json']);
    const lock = path.join(repo, '.git', 'index.lock');
    assert.ok(fs.existsSync(lock), 'the killed git child left its index.lock');
    // Before any reconciliation the dead operation is still in flight: nothing is offered yet.
    const h = await VersionHistory.open(repo); // opening reconciles (like every CLI command)
    try {
      const offered = await findStaleGitLocks(contextOf(h));
      assert.deepEqual(
        offered.map((l) => l.file),
        ['index.lock'],
      );
      assert.ok(offered[0].ageMs >= 0);
      // While a live process holds our repository lease, nothing is offered.
      const held = tryAcquireLock(leasePath(h.repository), 'restore');
      assert.ok(held);
      try {
        assert.deepEqual(await findStaleGitLocks(contextOf(h)), []);
        const refused = runCliProcess(['recover', 'remove-stale-lock'], { cwd: repo });
        assert.equal(refused.code, 1, refused.stderr);
        assert.ok(fs.existsSync(lock), 'not removed while our lease is held');
      } finally {
        held.release();
      }
    } finally {
      await h.close();
    }
    const gitFiles = () => listFiles(path.join(repo, '.git')).filter((f) => !f.startsWith('objects/'));
    const filesBefore = gitFiles();
    const checked = JSON.parse(runCliProcess(['recover', 'check', '--json'], { cwd: repo }).stdout) as {
      staleLocks?: { file: string; ageMs: number }[];
    };
    assert.deepEqual(
      checked.staleLocks?.map((l) => l.file),
      ['index.lock'],
      'recover check names the stale lock',
    );
    const removed = runCliProcess(['recover', 'remove-stale-lock', '--json'], { cwd: repo });
    assert.ok(removed.code === 0 || removed.code === 3, removed.stderr);
    const out = JSON.parse(removed.stdout) as { removed: { file: string; ageMs: number }[]; recovery: string };
    assert.deepEqual(
      out.removed.map((l) => l.file),
      ['index.lock'],
    );
    assert.deepEqual(
      filesBefore.filter((f) => !gitFiles().includes(f)),
      ['index.lock'],
      'exactly that file was removed',
    );
    assertNothingLost(repo, before);
    // Recovery (if the read-tree left the tree half-written) now completes: Use current version / Save changes.
    if (out.recovery === 'required') {
      const check = JSON.parse(runCliProcess(['recover', 'check', '--json'], { cwd: repo }).stdout) as {
        assessment: { kind: string };
      };
      const settled = cliJson<{ result: string }>(
        ['recover', check.assessment.kind === 'dirty' ? 'save-and-accept' : 'accept'],
        { cwd: repo },
      );
      assert.equal(settled.result, 'accepted');
    }
    assert.equal(cliJson<{ recovery: unknown }>(['status'], { cwd: repo }).recovery, null);
    const undo = cliJson<{ result: string }>(['undo'], { cwd: repo });
    assert.ok(['restored', 'nothing-to-undo', 'no-change'].includes(undo.result));
    assertNothingLost(repo, before);
  });

  it('a fresh git lock (written after the dead restore was settled, as by a git command that runs) is never offered or removed', async () => {
    const { repo } = await repoWithTurn();
    killDuringReadTree(repo, ['undo', '--json']);
    const lock = path.join(repo, '.git', 'index.lock');
    cliJson(['status'], { cwd: repo }); // settles the dead restore
    fs.rmSync(lock);
    // A git command starts now and holds index.lock.
    fs.writeFileSync(lock, '');
    const h = await VersionHistory.open(repo);
    try {
      assert.deepEqual(await findStaleGitLocks(contextOf(h)), []);
    } finally {
      await h.close();
    }
    const refused = runCliProcess(['recover', 'remove-stale-lock'], { cwd: repo });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /No stale Git lock/);
    assert.ok(fs.existsSync(lock), 'the running command’s lock stays');
  });
});

function listFiles(dir: string, prefix = ''): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? listFiles(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
    );
}
