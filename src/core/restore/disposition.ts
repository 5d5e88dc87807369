import type { RepoContext } from '../context';
import { inspectRepositoryHealth } from '../git/healthProbe';
import { RESTORE_PHASES, type RestorePhase, type ResumablePhase } from '../domain/restorePhases';
import type { OperationRow } from '../operations/operationRecords';
import { pathsHold, treeChanges, worktreeMatches } from '../git/worktreeUpdate';
import { isOwnPreserveCommit } from './restoreEffects';
import { ZERO_OID } from '../git/workingTree';

/** What a failed or interrupted operation means for the repository (docs/product-contract.md §5.4). */
export type Disposition =
  /** Failed before any git mutation: an ordinary failure, no recovery state. */
  | { kind: 'ordinary' }
  /** The repository is at its old state; `preserved` is the [Interrupted] commit if partial work was saved. */
  | { kind: 'rolled-back'; preserved: string | null }
  /** The target state is (partly) in place and provably ours: finish from `resume`. */
  | {
      kind: 'roll-forward';
      resume: ResumablePhase;
      preserved: string | null;
    }
  /** Ambiguous: fail closed. */
  | {
      kind: 'recovery-required';
      reason: 'repository-missing' | 'branch-changed' | 'head-moved' | 'worktree-partially-restored';
    };

const at = (phase: RestorePhase) => RESTORE_PHASES.indexOf(phase);

/**
 * Classifies an operation from its last persisted phase AND a probe of the repository. Used both for a live
 * failure (while the lease is still held) and for reconciliation after a crash. Read-only.
 */
export async function classifyOperation(
  ctx: RepoContext,
  op: OperationRow,
  options: { worktreeUntouched?: boolean } = {},
): Promise<Disposition> {
  if (at(op.phase) <= at('preflight')) return { kind: 'ordinary' };
  const health = await inspectRepositoryHealth(ctx.repo);
  if (!health.exists) return { kind: 'recovery-required', reason: 'repository-missing' };
  if (health.detached || health.branch !== op.source_branch)
    return { kind: 'recovery-required', reason: 'branch-changed' };
  const head = health.unborn ? ZERO_OID : health.head; // an Undo of a first turn starts from an unborn branch
  let preserved = op.preserve_commit;
  // A crash between the preservation commit's ref update and recording it: recognise our own commit by its trailer.
  // (The restore commit has the same parent and trailer: it is told apart by its recorded oid.)
  if (
    !preserved &&
    head &&
    head !== op.source_head &&
    head !== op.restore_commit &&
    at(op.phase) >= at('preserve-dirty-tree') &&
    (await isOwnPreserveCommit(ctx, op, head))
  ) {
    preserved = head;
  }
  const base = preserved ?? op.source_head;
  if (
    op.scope !== 'everything' &&
    op.restore_commit &&
    head === op.restore_commit &&
    at(op.phase) >= at('update-worktree')
  ) {
    // An Undo that keeps later work moves its branch while read-tree writes (sagaPhases.ts, update-worktree): the
    // branch may be there before the files are.
    const changes = await treeChanges(ctx.repo, base, op.restore_commit);
    if (await pathsHold(ctx.repo, op.restore_commit, changes, 'new'))
      return { kind: 'roll-forward', resume: 'turn-store-mutation', preserved };
    if (await pathsHold(ctx.repo, base, changes, 'old'))
      return { kind: 'roll-forward', resume: 'update-worktree', preserved };
    return { kind: 'recovery-required', reason: 'worktree-partially-restored' };
  }
  if (op.restore_commit && head === op.restore_commit)
    return { kind: 'roll-forward', resume: 'turn-store-mutation', preserved };
  if (head !== base && head !== op.source_head) return { kind: 'recovery-required', reason: 'head-moved' };
  if (head === op.source_head && preserved && op.preserve_commit)
    return { kind: 'recovery-required', reason: 'head-moved' };
  if (at(op.phase) < at('update-worktree') || options.worktreeUntouched) {
    // Only objects (and possibly the preservation commit) were written; the working tree is untouched by us
    // (or read-tree refused before its first write).
    return { kind: 'rolled-back', preserved: head === preserved ? preserved : null };
  }
  if (op.scope !== 'everything' && op.restore_commit) {
    // An Undo that keeps later work writes only the paths its reverse changes, and the rest of the tree may hold
    // the user's own edits (docs/design.md, "Undo Only This Turn in place"): those paths alone decide.
    const changes = await treeChanges(ctx.repo, base, op.restore_commit);
    if (await pathsHold(ctx.repo, op.restore_commit, changes, 'new'))
      return { kind: 'roll-forward', resume: 'update-branch', preserved };
    if (await pathsHold(ctx.repo, base, changes, 'old')) return { kind: 'rolled-back', preserved };
    return { kind: 'recovery-required', reason: 'worktree-partially-restored' };
  }
  if (op.restore_commit && (await worktreeMatches(ctx.repo, op.restore_commit)))
    return { kind: 'roll-forward', resume: 'update-branch', preserved };
  if (health.clean) return { kind: 'rolled-back', preserved };
  return { kind: 'recovery-required', reason: 'worktree-partially-restored' };
}
