import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { guessBranchTip, inspectRepositoryHealth } from '../git/healthProbe';
import { pathsHold, type TreeChange, treeChanges } from '../git/worktreeUpdate';
import type { OperationRow } from '../operations/operationRecords';
import { baseOf, currentHead } from './restoreEffects';

/** The restored files do not match the target: the saga latches recovery (worktree-partially-restored). */
export class PostconditionError extends AvhError {
  constructor() {
    super('git-failed', 'The restored files do not match the target version.');
  }
}

/**
 * The restore's postcondition when the cheap proof (restoredPathsMatch) could not give it: HEAD is the restore
 * commit on the source branch, and the working tree is the target — all of it for a restore of the whole target;
 * for an Undo that keeps later work, the paths its update wrote (the rest may hold the user's own edits). Read-only.
 */
export async function postconditionHolds(
  ctx: RepoContext,
  op: OperationRow,
  restoreCommit: string,
  touched: TreeChange[] | null,
): Promise<boolean> {
  if (op.scope === 'everything') {
    const health = await inspectRepositoryHealth(ctx.repo);
    return health.head === restoreCommit && health.branch === op.source_branch && health.clean;
  }
  const tip = guessBranchTip(ctx.repo.gitDir);
  if (tip?.branch !== op.source_branch || (await currentHead(ctx)) !== restoreCommit) return false;
  return pathsHold(ctx.repo, restoreCommit, touched ?? (await treeChanges(ctx.repo, baseOf(op), restoreCommit)), 'new');
}
