import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VersionHistory } from '../../src/core/versionHistory';
import { CLI, cliJson, TEST_BUILD_CLI } from '../support/cliProcess';
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
import { CrashScenario, newTally, RESTORE_CRASH_POINTS, sweepCrashPoints } from '../support/crashSweep';

/**
 * Fault injection for the restore saga: Undo/Redo/Restore swept over every crash point (test/support/crashSweep.ts
 * runs the real CLI, SIGKILLs it there, reconciles in a new process and checks the invariants).
 */

const tree = (repo: string, rev = 'HEAD') => git(repo, 'rev-parse', `${rev}^{tree}`).trim();

/** A repository whose last commit adds app.ts (v1). */
function appRepo(): string {
  const repo = makeRepo();
  write(repo, 'app.ts', 'v1\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'app v1');
  return repo;
}

async function completedTurnRepo(): Promise<{ repo: string; base: string; turnId: string }> {
  const repo = appRepo();
  const h = await VersionHistory.open(repo);
  try {
    const base = head(repo);
    const { turnId } = await h.beginTurn({ chatId: 'c', prompt: 'improve app' });
    write(repo, 'app.ts', 'v2 by the agent\n');
    write(repo, 'lib/new.ts', 'new file\n');
    fs.rmSync(path.join(repo, 'README.md'));
    await h.endTurn(turnId, 'completed');
    return { repo, base, turnId };
  } finally {
    await h.close();
  }
}

const SCENARIOS: CrashScenario[] = [
  {
    name: 'undo completed turn',
    setup: async () => {
      const { repo, base } = await completedTurnRepo();
      return { repo, args: ['undo', '--json'], targetTree: tree(repo, base) };
    },
  },
  {
    name: 'undo cancelled turn with dirty tracked + untracked + binary files',
    setup: async () => {
      const repo = appRepo();
      const h = await VersionHistory.open(repo);
      try {
        const { turnId, baseCommit } = await h.beginTurn({ chatId: 'c', prompt: 'stop me' });
        write(repo, 'app.ts', 'half-written by the agent\n');
        write(repo, 'untracked.ts', 'partial new file\n');
        write(repo, 'image.bin', Buffer.from([0, 1, 2, 3, 250, 251, 0, 0, 9]));
        write(repo, 'ignored/cache.txt', 'ignored stays\n');
        await h.endTurn(turnId, 'cancelled');
        return { repo, args: ['undo', '--json'], targetTree: tree(repo, baseCommit) };
      } finally {
        await h.close();
      }
    },
  },
  {
    name: 'restore across user commits',
    setup: async () => {
      const { repo, base } = await completedTurnRepo();
      write(repo, 'mine.txt', 'user commit\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'user commit');
      return { repo, args: ['restore', base, '--yes', '--json'], targetTree: tree(repo, base) };
    },
  },
  {
    name: 'redo',
    setup: async () => {
      const { repo } = await completedTurnRepo();
      const versionTree = tree(repo);
      const r = cliJson<{ result: string }>(['undo'], { cwd: repo });
      assert.equal(r.result, 'restored');
      return { repo, args: ['redo', '--json'], targetTree: versionTree };
    },
  },
];

describe('restore saga fault injection (SIGKILL at every phase boundary and inside effects)', function () {
  this.timeout(600_000);
  const tally = newTally();
  after(() => {
    console.log(
      `      crash points run: ${tally.ran} (not reached in that scenario: ${tally.skipped}); ended at ${JSON.stringify(tally.outcomes)}`,
    );
    cleanupTempDirs();
  });

  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: every crash point reconciles to old state, new state or recovery, losing nothing`, async () => {
      assert.deepEqual(await sweepCrashPoints(scenario, RESTORE_CRASH_POINTS, tally), []);
    });
  }

  it('every named crash point fired in at least one scenario (a point that never fires is a gap, not a skip)', () => {
    const never = RESTORE_CRASH_POINTS.filter((p) => !tally.fired.has(p));
    assert.deepEqual(never, [], `crash points that never fired: ${never.join(', ')}`);
  });

  it('a crash that leaves the working tree half-restored is ambiguous: recovery required, nothing lost, then guided recovery settles it', async () => {
    const { repo, base } = await completedTurnRepo();
    const before = contentInventory(repo);
    // The restore dies right after persisting the update-worktree phase...
    const run = spawnSync(process.execPath, [TEST_BUILD_CLI, 'undo', '--json'], {
      cwd: repo,
      env: { ...testGitEnv(), AVH_FAILPOINT: 'update-worktree:before' },
      encoding: 'utf8',
    });
    assert.equal(run.signal, 'SIGKILL');
    // ...having written only part of the target: one file is back at the base version, the others are not.
    fs.writeFileSync(path.join(repo, 'app.ts'), git(repo, 'show', `${base}:app.ts`));
    const status = cliJson<{ recovery: { lastPhase: string } | null; operation: unknown }>(['status'], { cwd: repo });
    assert.ok(status.recovery, 'neither the old nor the new state: recovery is required');
    assert.equal(status.recovery.lastPhase, 'update-worktree');
    assert.equal(status.operation, null);
    assertNothingLost(repo, before);
    const blocked = spawnSync(process.execPath, [CLI, 'turn', 'begin', '--chat', 'c', '--prompt', 'p'], {
      cwd: repo,
      env: testGitEnv(),
      encoding: 'utf8',
    });
    assert.equal(blocked.status, 3, 'new turns are blocked');
    const check = spawnSync(process.execPath, [CLI, 'recover', 'check', '--json'], {
      cwd: repo,
      env: testGitEnv(),
      encoding: 'utf8',
    });
    assert.equal(check.status, 3);
    assert.equal(JSON.parse(check.stdout).assessment.kind, 'dirty');
    const saved = cliJson<{ result: string; savedCommit: string }>(['recover', 'save-and-accept'], { cwd: repo });
    assert.equal(saved.result, 'accepted');
    assert.equal(
      git(repo, 'log', '-1', '--format=%s').trim(),
      '[Recovery] Saved current changes before continuing Version History',
    );
    assertNothingLost(repo, before);
    assert.equal(cliJson<{ recovery: unknown }>(['status'], { cwd: repo }).recovery, null);
    cleanupTempDirs();
  });
});
