import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { resolveCommit } from '../git/history';
import type { CommitRange } from '../git/reverseMerge';
import { emptyTree, ZERO_OID } from '../git/workingTree';
import { type TreeChange, treeChanges } from '../git/worktreeUpdate';
import { assertTurnBranchUsable } from '../chats/chatBranches';
import type { StoreReader } from '../store/durableStore';
import type { PreservationReason } from '../store/schema';
import { changedSomething } from '../domain/turnEffect';
import { getTurn, type TurnRow } from '../turns/turnRecords';
import { promoteUndoTarget, redoStack, undoableTurns, undoTargetIsHot } from './historyCounts';
import type { RestoreContent } from './restoreEffects';
import type { RestoreRequest } from './restoreRequest';
import { laterCommits, laterWorkAfter, revertSubject, undoTree, type UndoTree } from './revertPlan';
import { preservationFor } from './targetOutcome';

/**
 * A restore with nothing to do, known before anything else is looked at: no turn left to undo, nothing to redo, or
 * (`no-change`) an Undo of a turn that changed nothing, which has nothing of its own to take back (its base may hold
 * another turn's partial work: restoring it would bring that back).
 */
export type NothingToDo = { nothing: 'nothing-to-undo' | 'nothing-to-redo' } | { nothing: 'no-change'; turnId: string };

/** The restore's target: the commit it restores, the turn an Undo takes back, and how its partial work is kept. */
export interface TargetLookup {
  target: string;
  turn: TurnRow | null;
  preservation: PreservationReason;
  /**
   * Redo and Restore: the branch's latest turn when it is running, or stopped with its work in the tree and nothing
   * committed since it began. Its partial work is saved as `[Interrupted]` first, as Undo saves it (issue 33).
   */
  partial: TurnRow | null;
}

/** What restoring the whole target writes (`diff-tree` from HEAD, or from the empty tree on an unborn branch). */
export async function wholeTargetChanges(ctx: RepoContext, head: string, target: string): Promise<TreeChange[]> {
  return treeChanges(ctx.repo, head === ZERO_OID ? await emptyTree(ctx.repo) : head, target);
}

/**
 * Every lookup planning needs that reads only commits, the git ones side by side: the target, what landed after an
 * undone turn, and either what restoring the whole target writes (`diff-tree`) or, for Undo Only This Turn, the
 * turn's reverse merged on `head` as a clean tree (objects only; `settled`, so its refusal is reported by the
 * planning that runs it again, if it is needed). `onTarget` receives the content of a restore commit worth writing
 * ahead.
 */
export async function lookUp(
  ctx: RepoContext,
  request: RestoreRequest,
  branch: string,
  head: string,
  promote: boolean,
  onTarget?: (found: TargetLookup, content?: RestoreContent) => void,
) {
  const found = await lookUpTarget(ctx, request, branch, head, promote);
  if ('nothing' in found) return found;
  const unborn = head === ZERO_OID;
  const keepsLater =
    request.kind === 'undo' && (request.only === 'turn' || request.path !== undefined || request.change !== undefined);
  const reversible =
    request.kind === 'undo' &&
    request.only === 'turn' &&
    request.path === undefined &&
    request.change === undefined &&
    !unborn &&
    found.turn?.recovery === 'terminal' &&
    found.turn.version_commit;
  if (!keepsLater) onTarget?.(found);
  // What landed after the turn is counted for every Undo target, with a version or not (a running or stopped turn's
  // Undo asks the same question as a completed one's: issue 25).
  const counted = request.kind === 'undo' && found.turn !== null && !unborn;
  const listed = counted ? laterCommits(ctx, found.turn!, head) : null;
  listed?.catch(() => undefined); // its failure is reported by whichever lookup awaits it
  const [later, changes, reverse] = await Promise.all([
    // The uncommitted flag is set from the probe by the caller.
    counted ? laterWorkAfter(ctx, found.turn!, head, true, listed) : null,
    keepsLater ? null : wholeTargetChanges(ctx, head, found.target),
    reversible ? settled(reverseOnHead(ctx, found.turn!, head, (content) => onTarget?.(found, content), listed)) : null,
  ]);
  return { ...found, later, changes, reverse, listed: listed ? await listed : null };
}

/**
 * Undo Only This Turn on a clean tree at `head`: the tree, and (when it applies cleanly) what it writes. Objects only.
 */
async function reverseOnHead(
  ctx: RepoContext,
  turn: TurnRow,
  head: string,
  onTree: (content: RestoreContent) => void,
  listed: Promise<CommitRange> | null,
): Promise<{ undo: UndoTree; changes: TreeChange[] | null }> {
  const undo = await undoTree(ctx, turn, 'turn', head, null, true, listed);
  if (undo.conflicts.length > 0) return { undo, changes: null };
  onTree({ tree: undo.tree, subject: revertSubject(turn, { scope: 'turn', scope_path: null }) });
  return { undo, changes: await treeChanges(ctx.repo, head, undo.tree) };
}

/** Resolves the absolute target (store and git lookups only: nothing is changed). */
async function lookUpTarget(
  ctx: RepoContext,
  request: RestoreRequest,
  branch: string,
  head: string,
  promote: boolean,
): Promise<TargetLookup | NothingToDo> {
  let target: string;
  let turn: TurnRow | null = null;
  let preservation: PreservationReason = 'none';
  let partial: TurnRow | null = null;
  if (request.kind !== 'undo') {
    const found = await ctx.store.read((r) => partialTurn(r, branch, head));
    if (found) ({ row: partial, preservation } = found);
  }
  if (request.kind === 'undo') {
    // A restore brings an archived turn back to the hot table first, so the saga's writes reach it; a preview
    // reads it through the history view instead and writes nothing.
    const hot = await undoTargetIsHot(ctx, branch, request.turnId);
    if (promote) await promoteUndoTarget(ctx, branch, request.turnId, hot);
    const found = await ctx.store.read(
      (r) => {
        const row = request.turnId
          ? getTurn(r, request.turnId)
          : (() => {
              const latest = undoableTurns(r, branch)[0];
              return latest ? getTurn(r, latest.id) : undefined;
            })();
        return row ? { row, preservation: preservationFor(r, row) } : null;
      },
      { history: !hot && !promote },
    );
    if (!found) {
      if (request.turnId) throw new AvhError('turn-unknown', 'No turn with this id exists in this repository.');
      return { nothing: 'nothing-to-undo' };
    }
    turn = found.row;
    if (turn.undone_by) throw new AvhError('invalid-input', 'This turn was already undone. Use Redo to bring it back.');
    // docs/product-contract.md §7: a lost branch is said so, never "check it out".
    await assertTurnBranchUsable(ctx, turn, branch);
    if (turn.branch !== branch)
      throw new AvhError(
        'invalid-input',
        `This turn was recorded on branch "${turn.branch ?? 'unknown'}". Check out that branch to undo it.`,
      );
    if (!turn.base_commit)
      throw new AvhError(
        'invalid-input',
        'This turn has no base snapshot (it stopped before it started), so it cannot be undone.',
      );
    if (!changedSomething(turn)) return { nothing: 'no-change', turnId: turn.id };
    target = turn.base_commit;
    preservation = found.preservation;
  } else if (request.kind === 'redo') {
    const stack = await ctx.store.read((r) => redoStack(r, branch, head));
    if (stack.length === 0) return { nothing: 'nothing-to-redo' };
    target = stack[0].redo_target;
  } else {
    target = await resolveCommit(ctx.repo, request.target);
  }
  return { target, turn, preservation, partial };
}

/**
 * The branch's latest turn, when its work may be what makes the tree dirty: it is running, or it stopped (or its
 * version was not made) and HEAD is still where it began. Undo saves such work as `[Interrupted]`; Redo and Restore
 * do the same rather than refuse it as the user's (undefined otherwise).
 */
function partialTurn(
  r: StoreReader,
  branch: string,
  head: string,
): { row: TurnRow; preservation: PreservationReason } | undefined {
  const latest = undoableTurns(r, branch)[0];
  const row = latest ? getTurn(r, latest.id) : undefined;
  if (!row || row.base_head !== head) return undefined;
  const preservation = preservationFor(r, row);
  return preservation === 'none' ? undefined : { row, preservation };
}

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A promise that never rejects (its outcome is read later, or dropped without an unhandled rejection). */
export function settled<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/** The value of a settled promise, or its error thrown again. */
export function unwrap<T>(result: Settled<T>): T {
  if (!result.ok) throw result.error;
  return result.value;
}
