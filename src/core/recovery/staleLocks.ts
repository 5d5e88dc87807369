/**
 * What a crash of ours can leave behind, and the one way out we offer for each (issue 9, items 4 and 10):
 * - git's own lock files (`index.lock`, `HEAD.lock`, the branch's `<ref>.lock`) when our git child was killed
 *   inside read-tree/update-ref: offered for removal (Remove Stale Lock / `recover remove-stale-lock`) only
 *   when provably left by an operation of ours that died, never while any of our operations runs (the one lock
 *   removed without asking is on a branch name a Continue on a New Branch of ours picked free; see
 *   chatContinuation.ts);
 * - our own temp files (temporary index copies, atomic-write temps) whose process is gone: removed by the next
 *   reconciliation.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { leasePath } from '../git/repositoryLease';
import { GitRepository } from '../git/repository';
import { recordedProcessGone, removeOrphanedTemporaryIndexes } from '../git/workingTree';
import { inFlightOperation, latestSettledOperation, OperationRow } from '../operations/operationRecords';
import { OPERATIONS } from '../operations/operationKinds';
import { runIfFree } from '../operations/operationLease';
import { FS_CLOCK_SLACK_MS } from '../store/lockLiveness';
import { readLockHolder } from '../store/pidLock';

export interface StaleGitLock {
  /** Relative to the git dir, with forward slashes (e.g. `index.lock`, `refs/heads/main.lock`). */
  file: string;
  /** How long ago the lock file was last written, in milliseconds. */
  ageMs: number;
  /** The operation whose git child left it (its id). */
  operationId: string;
}

/**
 * git lock files left by an operation of ours that died, read-only. A lock is offered only when all hold:
 * no live process holds our repository lease and no operation of ours is in flight; the newest operation was
 * settled by reconciliation (its process died); and the lock was written while that operation ran, i.e. after
 * it started and before reconciliation found it dead. A lock written later belongs to a git command that runs
 * (or ran) since, and is never offered.
 */
export async function findStaleGitLocks(ctx: RepoContext): Promise<StaleGitLock[]> {
  if (readLockHolder(leasePath(ctx.repo))?.alive) return [];
  return staleLocksLeftByDeadOperation(ctx);
}

/** findStaleGitLocks for a caller holding the repository lease (or having checked nobody does). */
async function staleLocksLeftByDeadOperation(ctx: RepoContext): Promise<StaleGitLock[]> {
  const { inFlight, died } = await ctx.store.read((r) => ({
    inFlight: inFlightOperation(r) !== undefined,
    died: latestSettledOperation(r),
  }));
  // attempts > 1: a reconciliation (not the process that started it) settled the operation.
  if (inFlight || !died || died.attempts < 2) return [];
  const now = Date.now();
  const found: StaleGitLock[] = [];
  for (const file of candidateLocks(died)) {
    const stat = statOrNull(path.join(ctx.repo.gitDir, file));
    if (!stat || !stat.isFile()) continue;
    if (stat.mtimeMs < died.started_at - FS_CLOCK_SLACK_MS || stat.mtimeMs > died.updated_at) continue;
    found.push({ file, ageMs: Math.max(0, now - stat.mtimeMs), operationId: died.id });
  }
  return found;
}

/** The lock files a restore's git children take: the index, HEAD, packed refs and the branch it moved. */
function candidateLocks(op: OperationRow): string[] {
  return ['index.lock', 'HEAD.lock', 'packed-refs.lock', `refs/heads/${op.source_branch}.lock`];
}

/**
 * Remove Stale Lock: under the repository lease (so no operation of ours can start meanwhile), re-checks which
 * locks findStaleGitLocks offers and removes exactly those (or exactly `expected`, the ones the user was shown).
 * When nothing is offered, or one of `expected` no longer is, it is refused with a specific message and nothing
 * is removed. Returns the locks removed.
 */
export async function removeStaleGitLocks(ctx: RepoContext, expected?: readonly string[]): Promise<StaleGitLock[]> {
  return runIfFree(
    ctx.repo,
    OPERATIONS.staleLockRemoval,
    () => removeOfferedLocks(ctx, expected),
    () => {
      throw new AvhError(
        'restore-in-progress',
        'Agent Version History is working in this repository right now, so no lock was removed. Try again when it ' +
          'has finished.',
      );
    },
  );
}

async function removeOfferedLocks(ctx: RepoContext, expected: readonly string[] | undefined): Promise<StaleGitLock[]> {
  const offered = await staleLocksLeftByDeadOperation(ctx);
  const chosen = expected === undefined ? offered : offered.filter((lock) => expected.includes(lock.file));
  if (chosen.length === 0 || (expected !== undefined && chosen.length !== expected.length)) {
    throw new AvhError(
      'index-locked',
      'No stale Git lock left by an interrupted restore was found (a lock of a Git command that runs is never ' +
        'removed); nothing was removed.',
    );
  }
  for (const lock of chosen) {
    fs.rmSync(path.join(ctx.repo.gitDir, lock.file));
    ctx.log.warn('recovery.stale-lock-removed', {
      lock: lock.file === 'index.lock' ? 'index' : 'ref',
      ageMs: Math.round(lock.ageMs),
    });
  }
  return chosen;
}

/** "3 minutes", "2 hours": a lock's age for the notice and the CLI. */
export function describeAge(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return `${Math.max(1, Math.round(ms / 1000))} second${Math.round(ms / 1000) === 1 ? '' : 's'}`;
  if (minutes < 120) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} hours`;
  return `${Math.floor(hours / 24)} days`;
}

const ATOMIC_TEMP = /\.tmp-(\d+)$/;

/**
 * Housekeeping run by every reconciliation: temporary index copies in `<stateDir>/tmp` and atomic-write temps
 * (`<file>.tmp-<pid>`) in the state directory whose process is gone. Returns how many files it removed.
 */
export function removeLeftoverTempFiles(repo: GitRepository): number {
  let removed = removeOrphanedTemporaryIndexes(repo);
  let names: string[];
  try {
    names = fs.readdirSync(repo.stateDir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const match = ATOMIC_TEMP.exec(name);
    if (!match || !recordedProcessGone(Number(match[1]), '')) continue;
    fs.rmSync(path.join(repo.stateDir, name), { force: true });
    removed++;
  }
  return removed;
}

function statOrNull(p: string): fs.Stats | null {
  try {
    return fs.statSync(p);
  } catch {
    return null;
  }
}
