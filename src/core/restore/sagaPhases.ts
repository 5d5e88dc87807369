import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { failpoint } from '../failpoints';
import { operationsInProgress } from '../git/healthProbe';
import { passGate } from '../git/repositoryGate';
import { type TreeChange, treeChanges } from '../git/worktreeUpdate';
import { emptyTree, ZERO_OID } from '../git/workingTree';
import { queueChatNotes } from '../chats/chatNotes';
import { getTurn } from '../turns/turnRecords';
import { applyTurnStoreMutation, getOperation, type OperationRow, recordCommits } from '../operations/operationRecords';
import { PostconditionError, postconditionHolds } from './postcondition';
import {
  baseOf,
  moveBranchBack,
  type PrewrittenCommit,
  preserveDirtyTree,
  refuseWritesThatCannotLand,
  type RestoreContent,
  restoredPathsMatch,
  updateBranch,
  updateWorktree,
  wholeTargetContent,
  writeRestoreCommit,
} from './restoreEffects';
import type { EffectInput } from './restoreMachine';
import type { EffectPhaseName } from '../domain/restorePhases';
import { conflictError, revertSubject, undoTree } from './revertPlan';
import { changeContent, storedChange } from './changePlan';

/** One run of the saga in this process: what its effects know beyond the persisted operation. */
export interface SagaRun {
  readonly ctx: RepoContext;
  readonly opId: string;
  /** The operation as persisted plus the phase this process is in (the admitted row, or read once). */
  op(): Promise<OperationRow>;
  /** What the worktree update writes (known only to the process that runs the effects, not to reconciliation). */
  touched: TreeChange[] | null;
  /** Whether this process proved, while it moved the branch, that the worktree holds exactly what the update wrote. */
  proven: boolean;
  /** Whether the worktree update moved the branch too (an Undo that keeps later work). */
  branchMoved: boolean;
  /** The tree planning computed for an Undo that keeps later work, on a clean tree. */
  readonly plannedTree: string | null;
  /** The restore commit written ahead during planning, used if it is still the one needed. */
  readonly prewritten: PrewrittenCommit | null;
}

/** A phase's effect on the operation (as persisted, plus its phase), given the commits carried so far. */
type PhaseEffect = (run: SagaRun, op: OperationRow, carried: EffectInput) => Promise<string | void>;

/**
 * The effect of every phase that runs one (restorePhases.ts): each is safe to run twice. Keyed by phase, so a phase
 * added to the registry without its effect does not compile.
 */
export const PHASE_EFFECTS: Readonly<Record<EffectPhaseName, PhaseEffect>> = {
  preflight: async ({ ctx }, o) => {
    // The plan passed the gate under this same lease; a git operation or index.lock that appeared since (marker
    // files only) is refused here through the same gate. A commit made meanwhile is caught by read-tree's own
    // checks and the branch's compare-and-set.
    passGate(
      {
        exists: true,
        operations: operationsInProgress(ctx.repo.gitDir),
        indexLocked: fs.existsSync(path.join(ctx.repo.gitDir, 'index.lock')),
        unmerged: false,
        detached: false,
        unborn: false,
        head: o.source_head,
        branch: o.source_branch,
      },
      'retry',
    );
  },
  'preserve-dirty-tree': async ({ ctx, opId }, o) => {
    const commit = await preserveDirtyTree(ctx, o);
    ctx.log.info('restore.preserved', { operation: opId, reason: o.preservation });
    return commit;
  },
  'write-restore-commit': async (run, o) => {
    const { ctx } = run;
    const content = await restoreContent(ctx, o, o.preserve_commit ? null : run.plannedTree);
    // After a preservation commit the update starts from it, not from the HEAD the plan compared.
    if (o.preserve_commit) {
      run.touched = await treeChanges(ctx.repo, o.preserve_commit, content.tree);
      await refuseWritesThatCannotLand(ctx, run.touched);
    }
    return writeRestoreCommit(ctx, o, content, run.prewritten);
  },
  'update-worktree': async (run, o) => {
    const { ctx } = run;
    const restoreCommit = requireRestoreCommit(o);
    if (o.scope === 'everything') return updateWorktree(ctx, o, restoreCommit);
    // An Undo that keeps later work writes only the paths its reverse changes, and classification tells every
    // state of those paths and the branch apart (disposition.ts), so the branch moves while read-tree writes.
    // read-tree refusing before its first write puts the branch back: nothing changed.
    const moving = updateBranch(ctx, o, restoreCommit).then(() => failpoint('update-worktree:branch-moved'));
    const [written, moved] = await Promise.allSettled([updateWorktree(ctx, o, restoreCommit), moving]);
    if (written.status === 'rejected') {
      if (moved.status === 'fulfilled') await moveBranchBack(ctx, o, restoreCommit);
      throw written.reason;
    }
    if (moved.status === 'rejected') throw moved.reason;
    run.branchMoved = true;
  },
  'update-branch': async (run, o) => {
    const { ctx } = run;
    const moving = run.branchMoved ? Promise.resolve() : updateBranch(ctx, o, requireRestoreCommit(o));
    // While git moves the branch: the worktree is already final (read-tree wrote it), so what it wrote is
    // checked now, on this thread, instead of after. The answer counts only if the branch then moved.
    let pathsMatch = false;
    try {
      pathsMatch = run.touched !== null && restoredPathsMatch(ctx, o, run.touched);
    } catch {
      // Unreadable now: not proven, so the full probe decides after the branch moved.
    }
    await moving;
    run.proven = pathsMatch;
  },
  // The last phase's effect is itself one store transaction, so the phase and its effect are written together.
  'turn-store-mutation': async (run, o, carried) => {
    const { ctx } = run;
    const restoreCommit = carried.restoreCommit ?? requireRestoreCommit(o);
    // Postcondition: the working tree equals the target exactly. Right after this process moved the branch,
    // checking what the update wrote can prove it cheaply; anything it cannot prove, one full probe decides.
    if (!(run.proven && o.phase === 'update-branch') && !(await postconditionHolds(ctx, o, restoreCommit, run.touched)))
      throw new PostconditionError();
    // What the agents of this branch's chats saw before, and no longer find (their note: chats/chatNotes.ts).
    const paths = (await changedPaths(run, o, carried.preserved ?? o.preserve_commit, restoreCommit)).map(
      (c) => c.path,
    );
    await ctx.store.transaction((tx) => {
      if (getOperation(tx, o.id)?.status === 'in-flight') queueChatNotes(tx, o, paths, Date.now());
      recordCommits(tx, o.id, {
        restore_commit: restoreCommit,
        ...(carried.preserved ? { preserve_commit: carried.preserved } : {}),
      });
      applyTurnStoreMutation(
        tx,
        { ...o, restore_commit: restoreCommit, preserve_commit: carried.preserved ?? o.preserve_commit },
        restoreCommit,
      );
    });
  },
};

/** The paths the worktree update wrote: known to the process that ran it, else the commits' difference. */
async function changedPaths(
  run: SagaRun,
  op: OperationRow,
  preserved: string | null,
  restoreCommit: string,
): Promise<TreeChange[]> {
  if (run.touched) return run.touched;
  const from = preserved ?? op.source_head;
  return treeChanges(run.ctx.repo, from === ZERO_OID ? await emptyTree(run.ctx.repo) : from, restoreCommit);
}

/**
 * The restore commit's tree and subject. An Undo that keeps later work takes the turn (or one file of it) back
 * from the commit the restore builds on — the planned tree when that is still HEAD, else computed again on top
 * of the preservation commit; a reverse that no longer applies cleanly is refused before anything moves.
 */
async function restoreContent(ctx: RepoContext, op: OperationRow, plannedTree: string | null): Promise<RestoreContent> {
  // A Redo in place (restorePlan.ts, inPlaceRedoPlan) writes only the paths that differ, but its content is the
  // whole target all the same.
  if (op.scope === 'everything' || op.kind !== 'undo') return wholeTargetContent(op);
  const turn = op.turn_id ? await ctx.store.read((r) => getTurn(r, op.turn_id!)) : undefined;
  if (!turn) throw new AvhError('store-unavailable', 'The turn this Undo takes back is no longer recorded.');
  const change = storedChange(op);
  if (change) return changeContent(ctx, turn, change, baseOf(op), plannedTree);
  let tree = plannedTree;
  if (tree === null) {
    const computed = await undoTree(ctx, turn, op.scope, baseOf(op), op.scope_path);
    if (computed.conflicts.length > 0) throw conflictError(computed.conflicts);
    tree = computed.tree;
  }
  return { tree, subject: revertSubject(turn, op) };
}

function requireRestoreCommit(op: OperationRow): string {
  if (!op.restore_commit) throw new AvhError('store-unavailable', 'The restore commit was not recorded.');
  return op.restore_commit;
}
