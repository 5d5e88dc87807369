import * as path from 'node:path';
import type { GitRepository } from './repository';

/**
 * The repository lease's file, in the worktree's state folder: every process that moves a branch, the index or the
 * working tree of this repository holds it (operations/operationLease.ts takes it; stale once its holder is gone).
 */
export function leasePath(repo: GitRepository): string {
  return path.join(repo.stateDir, 'repository.lease');
}
