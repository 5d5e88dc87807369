import * as crypto from 'node:crypto';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { failpoint } from '../failpoints';
import { OPERATIONS } from '../operations/operationKinds';
import { runOperation } from '../operations/runOperation';
import { nestedNotice } from '../turns/turnRecords';
import { endTurnUnderLease } from '../turns/turnLedger';
import { assertConfirmed, assertConfirmedPlan } from './confirmation';
import { admitOperation, type OperationRow } from '../operations/operationRecords';
import { assertOtherChatsConfirmed } from './otherChatWrites';
import { dirtyTreeRefusal, WorktreeUpdateRefused } from './restoreEffects';
import { type AheadOperation, assertLandable, makePlan } from './restorePlan';
import type { NothingToDo } from './targetLookup';
import type { RestoreOptions, RestoreRequest, RestoreResult } from './restoreRequest';
import { runSaga } from './restoreSaga';
import { changeColumn } from './changePlan';
import { conflictError } from './revertPlan';

export type { RestoreOptions, RestorePreview, RestoreRequest, RestoreResult, UndoOnly } from './restoreRequest';

/**
 * Undo, Redo or Restore as one durable saga (docs/product-contract.md §5). Nothing is lost: partial work of a cancelled
 * turn is committed before anything moves; a dirty tree otherwise fails before anything is touched; any ambiguity after
 * a destructive step latches recovery. Holds the repository lease throughout.
 */
export function runRestore(
  ctx: RepoContext,
  request: RestoreRequest,
  options: RestoreOptions = {},
): Promise<RestoreResult> {
  return runOperation(ctx, OPERATIONS.restore, async () => {
    const inPlace = await planAndRun(ctx, request, options, {});
    if (inPlace !== IN_PLACE_REFUSED) return inPlace;
    // A path Undo Only This Turn writes holds changes of its own: planned in full, its edits are saved first.
    ctx.log.info('restore.in-place-declined');
    return (await planAndRun(ctx, request, options, { inPlace: false })) as RestoreResult;
  });
}

/** An Undo in place that read-tree refused before writing anything (its operation is settled as rolled back). */
const IN_PLACE_REFUSED = Symbol('in-place-refused');

/** One admitted restore under the caller's lease: plan, confirmations, the saga, and what it means for the caller. */
async function planAndRun(
  ctx: RepoContext,
  request: RestoreRequest,
  options: RestoreOptions,
  planOptions: { inPlace?: false },
): Promise<RestoreResult | typeof IN_PLACE_REFUSED> {
  const ahead: AheadOperation = { id: crypto.randomUUID(), startedAt: Date.now() };
  let plan = await makePlan(ctx, request, ahead, planOptions);
  assertConfirmedPlan(plan, options);
  if ('nothing' in plan) return nothingResult(plan);
  if (plan.undoTree && plan.undoTree.conflicts.length > 0) throw conflictError(plan.undoTree.conflicts);
  assertConfirmed(plan, options);
  // Files another chat wrote that this Undo would change: asked, never guessed (docs/design/two-chats.md).
  const otherChats = await assertOtherChatsConfirmed(ctx, plan, options);
  // A running turn that has written nothing yet is left running under a Redo or Restore (its agent goes on).
  const running = plan.turn ?? (plan.clean ? null : plan.partial);
  if (running && running.recovery !== 'terminal') {
    // Undo of a running turn (or Redo / Restore over one's partial work) ends it cancelled first, then re-reads
    // everything under the same lease. An update that cannot land is refused before the turn is touched.
    if (plan.scope === 'everything') await assertLandable(ctx, plan);
    await endTurnUnderLease(ctx, running.id, 'cancelled');
    options.onTurnCancelled?.({ turnId: running.id, chatId: running.chat_id });
    const again: RestoreRequest =
      plan.request.kind === 'undo'
        ? { kind: 'undo', turnId: running.id, ...(plan.request.only ? { only: plan.request.only } : {}) }
        : plan.request;
    const replanned = await makePlan(ctx, again, ahead, { inPlace: false });
    if ('nothing' in replanned) return nothingResult(replanned);
    plan = { ...replanned, preservation: 'active-cancel' };
  }
  // An Undo whose reverse leaves HEAD's tree as it is (a turn whose version holds what a restore during it had
  // already written) changes nothing on a dirty tree either: nothing is saved, and no empty [Revert] is made.
  const reverseIsEmpty = !plan.clean && plan.undoTree?.unchanged === true;
  if ((plan.clean && plan.changes.length === 0) || reverseIsEmpty) {
    ctx.log.info('restore.no-change', { kind: request.kind });
    return { result: 'no-change', target: plan.target, ...(plan.turn ? { turnId: plan.turn.id } : {}) };
  }
  // An Undo that keeps later work saves uncommitted edits first (they are part of the "current" it merges with).
  const keepsLater = plan.scope !== 'everything';
  if (!plan.clean && plan.preservation === 'none' && !keepsLater) throw await dirtyTreeRefusal(ctx, !!plan.later);
  // A dirty tree is checked again once it is preserved (the update then starts from that commit); what HEAD → target
  // writes is checked before anything is saved, so an ignored file in the way is refused with nothing changed (fuzz
  // seed 65: the refusal came after the running turn's work was saved as [Interrupted]).
  if (plan.clean || !keepsLater) await assertLandable(ctx, plan);
  const op: OperationRow = {
    id: ahead.id,
    kind: request.kind,
    phase: 'preparing',
    status: 'in-flight',
    turn_id: plan.turn?.id ?? (plan.clean ? null : (plan.partial?.id ?? null)),
    source_branch: plan.branch,
    source_head: plan.head,
    target_commit: plan.target,
    scope: plan.scope,
    scope_path: plan.scopePath,
    scope_change: changeColumn(plan.change),
    preservation: plan.clean ? 'none' : plan.preservation,
    preserve_commit: null,
    restore_commit: null,
    attempts: 1,
    last_error: null,
    started_at: ahead.startedAt,
    updated_at: ahead.startedAt, // as admitOperation writes it
  };
  await ctx.store.transaction((tx) => admitOperation(tx, op));
  ctx.log.info('restore.admit', { operation: op.id, kind: op.kind, preservation: op.preservation });
  failpoint('preparing:after');
  const output = await runSaga(
    ctx,
    op.id,
    { needsPreserve: op.preservation !== 'none' || (keepsLater && !plan.clean) },
    {
      changes: plan.changes,
      plannedTree: plan.clean ? (plan.undoTree?.tree ?? null) : null,
      prewritten: plan.prewritten,
      admitted: op,
    },
  );
  if (plan.inPlace && output.status === 'rolled-back' && output.error instanceof WorktreeUpdateRefused)
    return IN_PLACE_REFUSED;
  if (output.status === 'completed') {
    const notice = await nestedNotice(ctx, plan.nestedRepositories);
    return {
      ...(notice ? { notice } : {}),
      result: 'restored',
      operationId: op.id,
      restoreCommit: output.restoreCommit ?? undefined,
      ...(output.preserved ? { preserved: output.preserved } : {}),
      target: plan.target,
      ...(plan.turn ? { turnId: plan.turn.id } : {}),
      ...(request.kind === 'undo' ? { scope: plan.change ? 'change' : plan.scope } : {}),
      // A Redo that wrote back only what its Undo changed (restorePlan.ts, inPlaceRedoPlan).
      ...(request.kind === 'redo' && plan.inPlace ? { scope: 'turn' as const } : {}),
      ...(otherChats ? { otherChatFiles: otherChats.files } : {}),
    };
  }
  if (output.status === 'recovery-required') {
    throw new AvhError(
      'recovery-required',
      'Version restore needs attention — Agent Version History could not verify the restore. Your files are ' +
        'kept; resolve the recovery notice to continue.',
      { operation: op.id },
    );
  }
  const error = output.error;
  if (output.preserved) {
    // Rolled back after the partial work was committed: say where it is, whatever stopped the restore.
    const why = error instanceof AvhError ? ` (${error.statement})` : '';
    throw new AvhError(
      error instanceof AvhError ? error.reason : 'git-failed',
      `The restore did not complete${why}. Your partial changes were saved as an Interrupted version ` +
        `(${output.preserved.slice(0, 7)}) in Version History; nothing else changed.`,
      { operation: op.id, preserved: output.preserved },
      { cause: error },
    );
  }
  if (error instanceof AvhError) throw error;
  throw new AvhError(
    'git-failed',
    'The restore failed and was rolled back; nothing was changed.',
    { operation: op.id },
    { cause: error },
  );
}

function nothingResult(plan: NothingToDo): RestoreResult {
  return plan.nothing === 'no-change' ? { result: 'no-change', turnId: plan.turnId } : { result: plan.nothing };
}
