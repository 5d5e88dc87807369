import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type PhaseDeclaration, RESTORE_PHASE_REGISTRY } from '../../src/core/domain/restorePhases';
import { CLI, cliJson, TEST_BUILD_CLI } from './cliProcess';
import { assertNothingLost, cleanupTempDirs, contentInventory, git, head, testGitEnv } from './gitFixtures';
import { killedWhileRunning, slowGit } from './slowGit';

/**
 * The SIGKILL sweep shared by the restore-saga fault suites: a real CLI process runs one operation with
 * AVH_FAILPOINT naming a phase boundary or a point inside an effect, and SIGKILLs itself there (or kills git
 * mid-command). A new process then reconciles (every CLI command does) and the invariants are checked:
 * (1) nothing lost; (2) old state, new state, or recovery required; (3) store and repository agree; (4) lease released.
 */

export interface CrashScenario {
  name: string;
  /** Builds the repository; returns the CLI arguments of the operation and the tree it targets. */
  setup: () => Promise<{ repo: string; args: string[]; targetTree: string }>;
  /** The operation leaves uncommitted edits in files it does not write as they are (Undo Only This Turn in place). */
  keepsUncommitted?: boolean;
}

const PHASES: readonly PhaseDeclaration[] = RESTORE_PHASE_REGISTRY;

/**
 * Every crash point a restore passes, from the saga's phase registry (a phase added there is swept here): each phase
 * boundary and step inside its effect, in order, then a kill while each git command a phase runs is inside it.
 */
export const RESTORE_CRASH_POINTS = [
  ...PHASES.flatMap((p) => {
    const boundaries = p.boundaries ?? (p.run ? ['before', 'after'] : []);
    const points = [
      ...boundaries.filter((b) => b === 'before'),
      ...(p.steps ?? []),
      ...boundaries.filter((b) => b === 'after'),
    ];
    return points.map((at) => `${p.name}:${at}`);
  }),
  ...PHASES.flatMap((p) => (p.killedDuring ?? []).map((command) => `git:${command}:during`)),
];

/** An Undo that keeps later work moves its branch while read-tree writes: killed once the branch moved. */
export const KEEPS_LATER_CRASH_POINTS = PHASES.flatMap((p) => (p.keepsLaterSteps ?? []).map((at) => `${p.name}:${at}`));

const DURING = /^git:(.+):during$/;

export const treeOf = (repo: string, rev = 'HEAD') => git(repo, 'rev-parse', `${rev}^{tree}`).trim();

/** git's own lock files (`index.lock`, `<ref>.lock`, `HEAD.lock`) left under .git by a killed git process. */
function staleGitLocks(repo: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.lock')) found.push(full);
    }
  };
  walk(path.join(repo, '.git', 'refs'));
  for (const name of ['HEAD.lock', 'index.lock']) {
    if (fs.existsSync(path.join(repo, '.git', name))) found.push(path.join(repo, '.git', name));
  }
  return found;
}

export interface SweepTally {
  ran: number;
  skipped: number;
  fired: Set<string>;
  outcomes: { 'new state': number; 'old state': number; 'recovery required': number };
}

export function newTally(): SweepTally {
  return { ran: 0, skipped: 0, fired: new Set(), outcomes: { 'new state': 0, 'old state': 0, 'recovery required': 0 } };
}

/** Runs `scenario` once per crash point and returns the failures (empty when every invariant held). */
export async function sweepCrashPoints(
  scenario: CrashScenario,
  points: readonly string[],
  tally: SweepTally,
): Promise<string[]> {
  const failures: string[] = [];
  for (const point of points) {
    const { repo, args, targetTree } = await scenario.setup();
    const before = contentInventory(repo);
    const oldHead = head(repo);
    const oldTree = git(repo, 'write-tree').trim();
    const during = DURING.exec(point);
    const unslow = during ? slowGit(repo, during[1]) : null;
    const trace = path.join(repo, '.git', 'avh-trace2.json');
    const run = spawnSync(process.execPath, [TEST_BUILD_CLI, ...args], {
      cwd: repo,
      // The kill comes 300 ms after git starts: inside the second-long filter or hook, after git's start-up.
      env: {
        ...testGitEnv(),
        AVH_FAILPOINT: point,
        ...(during ? { GIT_TRACE2_EVENT: trace, AVH_FAILPOINT_DELAY_MS: '300' } : {}),
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    unslow?.();
    if (during && run.signal === 'SIGKILL' && !killedWhileRunning(trace, during[1])) {
      failures.push(`${point}: the kill landed after git ${during[1]} had exited, not during it`);
    }
    fs.rmSync(trace, { force: true });
    if (run.signal === 'SIGKILL') tally.fired.add(point);
    if (run.signal !== 'SIGKILL') {
      // The point is not on this scenario's path (e.g. no preservation when the tree is clean).
      assert.equal(run.status, 0, `${point}: ${run.stderr}`);
      tally.skipped++;
      cleanupTempDirs();
      continue;
    }
    tally.ran++;
    try {
      // A new process: every command reconciles first.
      const status = cliJson<{ recovery: unknown; operation: unknown; health: { head: string; clean: boolean } }>(
        ['status'],
        { cwd: repo },
      );
      assertNothingLost(repo, before);
      assert.equal(status.operation, null, 'no operation left in flight');
      assert.equal(
        fs.existsSync(path.join(repo, '.git', 'agent-versions', 'repository.lease')),
        false,
        'lease released',
      );
      const nowTree = treeOf(repo);
      const atNew = nowTree === targetTree && (scenario.keepsUncommitted === true || status.health.clean);
      const atOld =
        status.health.head === oldHead || git(repo, 'log', '-1', '--format=%s', 'HEAD').startsWith('[Interrupted]');
      tally.outcomes[status.recovery ? 'recovery required' : atNew ? 'new state' : 'old state']++;
      if (status.recovery) {
        // Fail-closed: everything preserved (checked above); turns and restores are blocked with exit code 3.
        const blocked = spawnSync(process.execPath, [CLI, 'undo'], { cwd: repo, env: testGitEnv(), encoding: 'utf8' });
        assert.equal(blocked.status, 3, 'recovery blocks undo with exit code 3');
      } else if (atNew) {
        const ops = cliJson<unknown>(['versions', '--limit', '1'], { cwd: repo }) as { kind: string }[];
        assert.equal(ops[0].kind, 'restore', 'new state is recorded as a [Restore] (or [Revert]) version');
      } else {
        assert.ok(atOld, `neither old nor new state at ${point}`);
        const gitLocks = staleGitLocks(repo);
        if (gitLocks.length > 0) {
          // git itself was killed inside read-tree/update-ref and left its own lock file: the retry is refused
          // with the specific message and changes nothing; the user removes the stale lock, as git says to.
          const refused = spawnSync(process.execPath, [CLI, ...args], {
            cwd: repo,
            env: testGitEnv(),
            encoding: 'utf8',
          });
          assert.equal(refused.status, 1, `a held git lock refuses the retry at ${point}`);
          assert.match(refused.stderr, /index\.lock is held|git lock file for a branch is held/);
          assertNothingLost(repo, before);
          for (const lock of gitLocks) fs.rmSync(lock, { force: true });
        }
        if (status.health.head === oldHead)
          assert.equal(git(repo, 'write-tree').trim(), oldTree, 'old state has the old index');
        // The store agrees: the operation is settled and Undo/Redo stay usable.
        const again = spawnSync(process.execPath, [CLI, ...args], { cwd: repo, env: testGitEnv(), encoding: 'utf8' });
        assert.equal(again.status, 0, `retry after rollback at ${point}: ${again.stderr}`);
        assert.equal(treeOf(repo), targetTree, `retry reaches the target at ${point}`);
        assertNothingLost(repo, before);
      }
    } catch (error) {
      failures.push(`${point}: ${(error as Error).message}`);
    }
    cleanupTempDirs();
  }
  return failures;
}
