import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../errors';
import { acquireLock, LockHandle, readLockHolder } from '../store/pidLock';
import { GitRepository } from './repository';

export type LeasePurpose = 'turn' | 'restore' | 'recovery' | 'reconcile';

/**
 * The cross-process repository lease: every process that moves a branch, the index or the working tree of this
 * repository (turn recording, restores, recovery) holds it. Stale when its holder's process is gone.
 */
export async function acquireRepositoryLease(
  repo: GitRepository,
  purpose: LeasePurpose,
  timeoutMs: number,
): Promise<LockHandle> {
  fs.mkdirSync(repo.stateDir, { recursive: true });
  const file = leasePath(repo);
  try {
    return await acquireLock(file, { timeoutMs, purpose });
  } catch (error) {
    if (error instanceof AvhError && error.reason === 'lock-timeout') {
      const holder = readLockHolder(file);
      if (holder?.purpose === 'restore' || holder?.purpose === 'reconcile') {
        throw new AvhError(
          'restore-in-progress',
          'Another restore is in progress for this repository. Wait for it to finish, then try again.',
        );
      }
      throw new AvhError(
        'lock-timeout',
        'Agent Version History is busy recording a turn in this repository. Try again in a moment.',
      );
    }
    throw error;
  }
}

/** The repository lease's file, in the worktree's state folder. */
export function leasePath(repo: GitRepository): string {
  return path.join(repo.stateDir, 'repository.lease');
}
