import * as fs from 'node:fs';
import { AvhError } from '../errors';
import type { GitRepository } from '../git/repository';
import { leasePath } from '../git/repositoryLease';
import { acquireLock, type LockHandle, readLockHolder, tryAcquireLock } from '../store/pidLock';
import { type IfFreeKind, LEASE_HOLDERS, type LeaseHolder, type OperationLease } from './operationKinds';

export const RESTORE_IN_PROGRESS_MESSAGE =
  'Another restore is in progress for this repository. Wait for it to finish, then try again.';
const BUSY_MESSAGE = 'Agent Version History is busy recording a turn in this repository. Try again in a moment.';

function holderOf(purpose: string | undefined): LeaseHolder | undefined {
  return purpose !== undefined && Object.hasOwn(LEASE_HOLDERS, purpose)
    ? LEASE_HOLDERS[purpose as keyof typeof LEASE_HOLDERS]
    : undefined;
}

/**
 * Takes the cross-process repository lease for an operation (every process that moves a branch, the index or the
 * working tree of this repository holds it; stale once its holder's process is gone). Waits up to `waitMs`, or
 * fails fast behind a holder that is not brief when the lease says so; a refusal names what the holder is doing.
 */
export async function takeLease(repo: GitRepository, lease: OperationLease, waitMs: number): Promise<LockHandle> {
  fs.mkdirSync(repo.stateDir, { recursive: true });
  const file = leasePath(repo);
  if (lease.acquire === 'wait-for-brief') {
    const quick = tryAcquireLock(file, lease.purpose);
    if (quick) return quick;
    const holder = readLockHolder(file);
    if (holder?.alive && !holderOf(holder.purpose)?.brief)
      throw new AvhError('restore-in-progress', RESTORE_IN_PROGRESS_MESSAGE);
  }
  try {
    return await acquireLock(file, { timeoutMs: waitMs, purpose: lease.purpose });
  } catch (error) {
    if (!(error instanceof AvhError && error.reason === 'lock-timeout')) throw error;
    if (holderOf(readLockHolder(file)?.purpose)?.waiterReads === 'restore-in-progress')
      throw new AvhError('restore-in-progress', RESTORE_IN_PROGRESS_MESSAGE);
    throw new AvhError('lock-timeout', BUSY_MESSAGE);
  }
}

/**
 * Runs `fn` under the repository lease when it is free right now, else returns `busy()` without waiting (a live
 * holder is never settled or interfered with). For the 'if-free' kinds: reconciliation, stale lock removal.
 */
export async function runIfFree<T>(
  repo: GitRepository,
  kind: IfFreeKind,
  fn: () => Promise<T>,
  busy: () => T,
): Promise<T> {
  const lease = tryAcquireLock(leasePath(repo), kind.lease.purpose);
  if (!lease) return busy();
  try {
    return await fn();
  } finally {
    lease.release();
  }
}
