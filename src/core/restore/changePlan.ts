import { storeFacts } from '../blame/attributionFacts';
import { changeAtLine, changeSubject, changeTree, conflictOf, partialWork, type TurnChange } from '../blame/undoChange';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { FULL_OID } from '../domain/objectId';
import { workingTreeCommit } from '../git/reverseMerge';
import { agentSubject } from '../domain/promptSummary';
import type { TurnRow } from '../turns/turnRecords';
import type { OperationRow } from '../operations/operationRecords';
import type { RestoreContent } from './restoreEffects';
import type { ChangeAtLineRequest } from './restoreRequest';
import { refuseWhileAnotherTurnRuns, type UndoTree } from './revertPlan';

/**
 * Undo This Change (issue 26) in the restore saga: an Undo of scope 'file' narrowed to one hunk of the turn. Planning
 * finds the change the line is in and checks its reverse before anything moves; the operation persists the change
 * (operations.scope_change), so the saga computes the same reverse again on top of the saved working tree, and a
 * crash is classified like any Undo that keeps later work (disposition.ts). Redo restores the HEAD before it.
 */

/**
 * The change holding the line and the tree with it taken back from `head` (or from the working tree saved as an
 * object when it is dirty). Refuses, changing nothing: a line no turn's version wrote or no longer this turn's
 * ('not-a-turn-change'), later work over the same lines (UndoChangeConflict, naming them), another turn running over
 * uncommitted edits. Writes only objects.
 */
export async function checkChangeTree(
  ctx: RepoContext,
  turn: TurnRow,
  request: ChangeAtLineRequest,
  head: string,
  clean: boolean,
): Promise<{ undo: UndoTree; change: TurnChange }> {
  if (turn.recovery !== 'terminal') throw partialWork();
  await refuseWhileAnotherTurnRuns(ctx, turn, clean);
  const ours = clean ? head : await workingTreeCommit(ctx.repo, head);
  const facts = storeFacts(ctx.store);
  const found = await changeAtLine({
    repo: ctx.repo,
    facts,
    ours,
    path: request.path,
    line: request.line,
    expectedTurn: turn.id,
    oursIsWorkingTree: !clean,
  });
  const result = await changeTree(ctx.repo, found.change, ours);
  if (result.conflicts.length > 0)
    throw await conflictOf(ctx.repo, facts, found.change, result, ours, {
      attribution: found.attribution,
      oursIsWorkingTree: !clean,
    });
  return { undo: { tree: result.tree, conflicts: [] }, change: found.change };
}

/** The change an operation takes back (operations.scope_change), or null for every other restore. */
export function storedChange(op: Pick<OperationRow, 'scope_change'>): TurnChange | null {
  if (!op.scope_change) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(op.scope_change);
  } catch {
    parsed = null;
  }
  const c = parsed as Partial<TurnChange> | null;
  if (
    !c ||
    typeof c.turnId !== 'string' ||
    typeof c.commit !== 'string' ||
    !FULL_OID.test(c.commit) ||
    typeof c.path !== 'string' ||
    typeof c.line !== 'number' ||
    !Number.isInteger(c.line) ||
    c.line < 1 ||
    typeof c.pre !== 'string' ||
    (c.prePath !== null && typeof c.prePath !== 'string')
  )
    throw new AvhError('store-unavailable', 'The change this Undo takes back is not recorded readably.');
  return c as TurnChange;
}

/** What the operation persists of the change (read back by storedChange). */
export const changeColumn = (change: TurnChange | null): string | null => (change ? JSON.stringify(change) : null);

/**
 * The `[Revert]` commit's content for Undo This Change: the planned tree when the restore still builds on HEAD, else
 * the change taken back again from `ours` (the saved working tree); refused before anything moves when it no longer
 * applies cleanly. Writes only objects.
 */
export async function changeContent(
  ctx: RepoContext,
  turn: TurnRow,
  change: TurnChange,
  ours: string,
  plannedTree: string | null,
): Promise<RestoreContent> {
  const subject = changeSubject(change.path, agentSubject(turn.prompt).slice('[Agent] '.length));
  if (plannedTree !== null) return { tree: plannedTree, subject };
  const result = await changeTree(ctx.repo, change, ours);
  if (result.conflicts.length > 0)
    throw await conflictOf(ctx.repo, storeFacts(ctx.store), change, result, ours, { oursIsWorkingTree: true });
  return { tree: result.tree, subject };
}
