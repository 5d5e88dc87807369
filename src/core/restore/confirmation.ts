// The confirmation policy: what a restore shows before it runs, and what it refuses to run unconfirmed.
import * as crypto from 'node:crypto';
import type { RepoContext } from '../context';
import { ConfirmationRequired } from './refusals';
import { OPERATIONS } from '../operations/operationKinds';
import { runOperation } from '../operations/runOperation';
import { makePlan, type Plan } from './restorePlan';
import type { RestoreOptions, RestorePreview, RestoreRequest } from './restoreRequest';
import { otherChatWritesIn } from './otherChatWrites';
import { anyLaterWork, checkUndoTree, describeLaterWork } from './revertPlan';

/** Read-only: what a restore would do, for the UI's confirmation. Takes no lease and changes nothing. */
export function previewRestore(ctx: RepoContext, request: RestoreRequest): Promise<RestorePreview> {
  return runOperation(ctx, OPERATIONS.restorePreview, () => preview(ctx, request));
}

async function preview(ctx: RepoContext, request: RestoreRequest): Promise<RestorePreview> {
  const plan = await makePlan(ctx, request);
  if ('nothing' in plan)
    return {
      kind: request.kind,
      nothing: plan.nothing,
      ...(plan.nothing === 'no-change' ? { turnId: plan.turnId } : {}),
      userCommits: 0,
      fingerprint: planFingerprint(plan),
    };
  const asked = plan.request.kind === 'undo' && !plan.request.path && !plan.request.change && anyLaterWork(plan.later);
  const onlyTurn = !asked
    ? undefined
    : plan.turn!.version_commit === null
      ? { conflicts: [], noVersion: true as const }
      : {
          conflicts: (plan.undoTree ?? (await checkUndoTree(ctx, plan.turn!, 'turn', plan.head, plan.clean, null)))
            .conflicts,
        };
  // The question Undo Only This Turn / Undo This File asks when another chat wrote files it changes.
  const scope = plan.scope !== 'everything' ? plan.scope : onlyTurn ? 'turn' : null;
  const otherChats =
    request.kind === 'undo' && plan.turn && scope
      ? await otherChatWritesIn(ctx, plan.turn, scope, plan.scopePath, plan.head, plan.listed)
      : null;
  return {
    kind: request.kind,
    target: plan.target,
    ...(otherChats ? { otherChats } : {}),
    ...(plan.turn ? { turnId: plan.turn.id } : {}),
    userCommits: plan.userCommits,
    ...(request.kind === 'undo' ? { scope: plan.change ? 'change' : plan.scope } : {}),
    ...(plan.later ? { later: plan.later } : {}),
    ...(onlyTurn ? { onlyTurn } : {}),
    fingerprint: planFingerprint(plan),
  };
}

/**
 * What a confirmation confirms: the same request on the same branch and HEAD, to the same target, undoing the same user
 * commits.
 */
export function planFingerprint(plan: Plan | { nothing: string }): string {
  const named =
    'nothing' in plan
      ? [plan.nothing]
      : [
          plan.request.kind,
          plan.branch,
          plan.head,
          plan.target,
          plan.turn?.id ?? '',
          plan.userCommits,
          // A Redo's scope says only how it writes (in place or whole: restorePlan.ts), which a preview cannot know.
          plan.request.kind === 'undo' ? plan.scope : '',
          plan.scopePath ?? '',
          ...(plan.change ? [plan.change.commit, plan.change.line] : []),
        ];
  return crypto.createHash('sha256').update(JSON.stringify(named)).digest('hex').slice(0, 16);
}

/**
 * Refuses (nothing changed) a restore whose plan differs under the lease from the preview the user confirmed
 * (`expectedPlan`: a new turn, a commit since): the caller asks again instead of running what was never confirmed.
 */
export function assertConfirmedPlan(plan: Plan | { nothing: string }, options: RestoreOptions): void {
  if (options.expectedPlan !== undefined && planFingerprint(plan) !== options.expectedPlan) {
    throw new ConfirmationRequired({ kind: 'plan-changed', userCommits: 'nothing' in plan ? 0 : plan.userCommits });
  }
}

/**
 * Refuses (nothing changed) an unchosen Undo that would take later turns away with it, and a restore that undoes
 * commits the user made themselves, unless the user confirmed (`confirmUserCommits`).
 */
export function assertConfirmed(plan: Plan, options: RestoreOptions): void {
  // Later turns, and turns undone on their own since, would silently go (or come back) with an unchosen Undo.
  const laterTurns =
    plan.scope === 'everything' && plan.later
      ? plan.later.otherChatTurns + plan.later.sameChatTurns + plan.later.reverts
      : 0;
  if (
    laterTurns > 0 &&
    plan.request.kind === 'undo' &&
    plan.request.only === undefined &&
    !options.confirmUserCommits
  ) {
    throw new ConfirmationRequired({
      kind: 'later-work',
      laterTurns,
      laterWork: describeLaterWork(plan.later!),
      // A turn without a version has no changes of its own to reverse: Restore Everything is the one way (no choice).
      choice: plan.turn?.version_commit !== null,
    });
  }
  if (plan.userCommits > 0 && !options.confirmUserCommits) {
    throw new ConfirmationRequired({ kind: 'user-commits', count: plan.userCommits });
  }
}
