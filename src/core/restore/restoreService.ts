import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createActor, fromPromise, toPromise } from 'xstate';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { guessBranchTip, inspectRepositoryHealth, operationsInProgress, RepositoryHealth } from '../git/healthProbe';
import { resolveCommit, subjectsSince } from '../git/history';
import { factsFromHealth, passGate, passTurnGate } from '../git/repositoryGate';
import { ignoredPathsInTheWay, pathsHold, TreeChange, treeChanges } from '../git/worktreeUpdate';
import { acquireRepositoryLease, leasePath } from '../git/repositoryLease';
import { assertNoRecovery, readRecovery, setRecovery } from '../recovery/recoveryLatch';
import type { LockHandle } from '../store/pidLock';
import { readLockHolder, tryAcquireLock } from '../store/pidLock';
import type { PreservationReason } from '../store/schema';
import type { StoreTx } from '../store/durableStore';
import { kindOfSubject } from '../turns/promptSummary';
import { getTurn, nestedNotice, openTurns, TurnRow } from '../turns/turnRecords';
import { endTurnUnderLease } from '../turns/turnLedger';
import { classifyOperation, Disposition } from './disposition';
import { failpoint } from '../failpoints';
import { promoteUndoTarget, redoStack, undoableTurns, undoTargetIsHot } from './historyCounts';
import {
  admitOperation,
  finishOperation,
  getOperation,
  inFlightOperation,
  OperationRow,
  recordCommits,
  setPhase,
} from './operationRecords';
import { restoreMachine } from './restoreMachine';
import {
  anyLaterWork,
  checkUndoTree,
  conflictError,
  describeLaterWork,
  LaterWork,
  laterCommits,
  laterWorkAfter,
  revertSubject,
  undoTree,
  UndoTree,
} from './revertPlan';
import type { CommitRange } from '../git/reverseMerge';
import { preservationFor } from './targetOutcome';
import { assertTurnBranchUsable } from '../chats/chatBranches';
import { removeLeftoverTempFiles } from '../recovery/staleLocks';
import {
  clearOwnStaleIndexLock,
  emptyTree,
  indexRepairPending,
  repairRecordedIndex,
  ZERO_OID,
} from '../git/workingTree';
import {
  baseOf,
  currentHead,
  moveBranchBack,
  PrewrittenCommit,
  prewriteRestoreCommit,
  preserveDirtyTree,
  RestoreContent,
  restoredPathsMatch,
  updateBranch,
  updateWorktree,
  wholeTargetContent,
  WorktreeUpdateRefused,
  writeRestoreCommit,
} from './restoreEffects';
import type { RestorePhase, UndoScope } from '../store/schema';

/** Undo's choice when work landed after the turn: only the turn's own changes, or everything since its base. */
export type UndoOnly = 'turn' | 'everything';

export type RestoreRequest =
  /**
   * `only` unset: today's Undo (everything since the turn's base), refused with 'confirmation-required' when it
   * would take away later agent turns or user commits unconfirmed. `path`: Undo This File (one path of the turn).
   */
  | { kind: 'undo'; turnId?: string; only?: UndoOnly; path?: string }
  | { kind: 'redo' }
  | { kind: 'restore'; target: string };

export interface RestoreOptions {
  /** The user agreed to undo commits they made themselves after the target (palette modal / CLI --yes). */
  confirmUserCommits?: boolean;
  /**
   * The fingerprint of the preview the user confirmed. When the plan differs under the lease (a new turn, a
   * commit since), the restore is refused with 'confirmation-required' (details.planChanged) and nothing changes,
   * so the caller asks again instead of running something that was never confirmed.
   */
  expectedPlan?: string;
  /** Told when Undo ends a still-running turn as cancelled (the API forwards it to the agent). */
  onTurnCancelled?: (turn: { turnId: string; chatId: string }) => void;
}

export interface RestoreResult {
  result: 'restored' | 'nothing-to-undo' | 'nothing-to-redo' | 'no-change';
  operationId?: string;
  restoreCommit?: string;
  /** The `[Interrupted]` commit holding partial changes saved before restoring. */
  preserved?: string;
  target?: string;
  turnId?: string;
  /** Said once per folder: nested repositories the restore left untouched (Version History does not version them). */
  notice?: string;
  /** Undo: what it took back (everything since the turn, only the turn's changes, or one file of them). */
  scope?: UndoScope;
}

export interface RestorePreview {
  kind: RestoreRequest['kind'];
  nothing?: 'nothing-to-undo' | 'nothing-to-redo';
  target?: string;
  turnId?: string;
  /** Commits the user made themselves after the target that this restore undoes (they stay in history). */
  userCommits: number;
  /** Undo: what this Undo would take back as planned. */
  scope?: UndoScope;
  /**
   * Undo of a turn whose version is in HEAD's history: what landed after it. When anything did (anyLaterWork),
   * the UI offers Undo Only This Turn next to Restore Everything (which takes all of it away).
   */
  later?: LaterWork;
  /** When work landed after the turn: whether Undo Only This Turn applies cleanly, and the files it conflicts in. */
  onlyTurn?: { conflicts: string[] };
  /** Names exactly what would run (branch, HEAD, target, turn, user commits): pass it back as `expectedPlan`. */
  fingerprint: string;
}

interface Plan {
  request: RestoreRequest;
  branch: string;
  head: string;
  /** The working tree is clean; for an Undo in place (`inPlace`), only the paths it writes matter and read-tree checks them. */
  clean: boolean;
  /**
   * Undo Only This Turn in place: planned without scanning the working tree; uncommitted edits elsewhere stay as they
   * are. A refusal by read-tree (a path it writes has changes of its own) falls back to the full plan.
   */
  inPlace: boolean;
  target: string;
  /** What moving from HEAD to the target writes (empty: the target's tree is HEAD's). */
  changes: TreeChange[];
  turn: TurnRow | null;
  preservation: PreservationReason;
  userCommits: number;
  nestedRepositories: string[];
  scope: UndoScope;
  scopePath: string | null;
  later: LaterWork | null;
  /** Undo that keeps later work: the tree to commit, computed from HEAD (or the working tree saved as an object). */
  undoTree: UndoTree | null;
  /** The restore commit of the whole target, written ahead on the guessed branch tip (runRestore only). */
  prewritten: PrewrittenCommit | null;
}

/** The operation a restore will admit, named before planning so its restore commit can be written ahead. */
interface AheadOperation {
  id: string;
  startedAt: number;
}

/** Read-only: what a restore would do, for the UI's confirmation. Takes no lease and changes nothing. */
export async function previewRestore(ctx: RepoContext, request: RestoreRequest): Promise<RestorePreview> {
  const plan = await makePlan(ctx, request);
  if ('nothing' in plan)
    return { kind: request.kind, nothing: plan.nothing, userCommits: 0, fingerprint: planFingerprint(plan) };
  const onlyTurn =
    plan.request.kind === 'undo' && !plan.request.path && anyLaterWork(plan.later)
      ? {
          conflicts: (plan.undoTree ?? (await checkUndoTree(ctx, plan.turn!, 'turn', plan.head, plan.clean, null)))
            .conflicts,
        }
      : undefined;
  return {
    kind: request.kind,
    target: plan.target,
    ...(plan.turn ? { turnId: plan.turn.id } : {}),
    userCommits: plan.userCommits,
    ...(request.kind === 'undo' ? { scope: plan.scope } : {}),
    ...(plan.later ? { later: plan.later } : {}),
    ...(onlyTurn ? { onlyTurn } : {}),
    fingerprint: planFingerprint(plan),
  };
}

/** What a confirmation confirms: the same request on the same branch and HEAD, to the same target, undoing the same user commits. */
function planFingerprint(plan: Plan | { nothing: string }): string {
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
          plan.scope,
          plan.scopePath ?? '',
        ];
  return crypto.createHash('sha256').update(JSON.stringify(named)).digest('hex').slice(0, 16);
}

/**
 * Undo, Redo or Restore as one durable saga (SPEC §5). Nothing is lost: partial work of a cancelled turn is
 * committed before anything moves; a dirty tree otherwise fails before anything is touched; any ambiguity after a
 * destructive step latches recovery. Holds the repository lease throughout.
 */
export async function runRestore(
  ctx: RepoContext,
  request: RestoreRequest,
  options: RestoreOptions = {},
): Promise<RestoreResult> {
  await assertNoRecovery(ctx.store);
  const lease = await acquireRestoreLease(ctx);
  try {
    await settleUnderLease(ctx);
    await assertNoRecovery(ctx.store);
    const inPlace = await planAndRun(ctx, request, options, {});
    if (inPlace !== IN_PLACE_REFUSED) return inPlace;
    // A path Undo Only This Turn writes holds changes of its own: planned in full, its edits are saved first.
    ctx.log.info('restore.in-place-declined');
    return (await planAndRun(ctx, request, options, { inPlace: false })) as RestoreResult;
  } finally {
    lease.release();
  }
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
  if (options.expectedPlan !== undefined && planFingerprint(plan) !== options.expectedPlan) {
    throw new AvhError(
      'confirmation-required',
      'What this restore would do changed since it was confirmed (a new turn or a commit). Confirm again; nothing was changed.',
      { planChanged: true, count: 'nothing' in plan ? 0 : plan.userCommits },
    );
  }
  if ('nothing' in plan) return { result: plan.nothing };
  if (plan.undoTree && plan.undoTree.conflicts.length > 0) throw conflictError(plan.undoTree.conflicts);
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
    throw new AvhError(
      'confirmation-required',
      `Work landed after this turn: ${describeLaterWork(plan.later!)}. Choose Undo Only This Turn (keeps it) or Restore Everything to Before This Turn (takes it away too; it stays in history). Nothing was changed.`,
      { count: laterTurns, choice: true },
    );
  }
  if (plan.userCommits > 0 && !options.confirmUserCommits) {
    throw new AvhError(
      'confirmation-required',
      `This restore undoes ${plan.userCommits} commit${plan.userCommits === 1 ? '' : 's'} you made yourself after that version (they stay reachable in history). Confirm to continue; nothing was changed.`,
      { count: plan.userCommits },
    );
  }
  if (plan.turn && plan.turn.recovery !== 'terminal') {
    // Undo of a running turn ends it cancelled first, then re-reads everything under the same lease.
    await endTurnUnderLease(ctx, plan.turn.id, 'cancelled');
    options.onTurnCancelled?.({ turnId: plan.turn.id, chatId: plan.turn.chat_id });
    const replanned = await makePlan(
      ctx,
      {
        kind: 'undo',
        turnId: plan.turn.id,
        ...(plan.request.kind === 'undo' && plan.request.only ? { only: plan.request.only } : {}),
      },
      ahead,
      { inPlace: false },
    );
    if ('nothing' in replanned) return { result: replanned.nothing };
    plan = { ...replanned, preservation: 'active-cancel' };
  }
  if (plan.clean && plan.changes.length === 0) {
    ctx.log.info('restore.no-change', { kind: request.kind });
    return { result: 'no-change', target: plan.target, ...(plan.turn ? { turnId: plan.turn.id } : {}) };
  }
  // An Undo that keeps later work saves uncommitted edits first (they are part of the "current" it merges with).
  const keepsLater = plan.scope !== 'everything';
  if (!plan.clean && plan.preservation === 'none' && !keepsLater) {
    throw new AvhError(
      'dirty-conflict',
      `You have uncommitted changes that are not from a cancelled agent turn. Commit or stash them, then try again${plan.later ? ' (or choose Undo Only This Turn, which keeps them)' : ''}. Nothing was changed.`,
    );
  }
  if (plan.clean) await refuseIgnoredFilesInTheWay(ctx, plan.changes); // a dirty tree is checked once it is preserved
  const op: OperationRow = {
    id: ahead.id,
    kind: request.kind,
    phase: 'preparing',
    status: 'in-flight',
    turn_id: plan.turn?.id ?? null,
    source_branch: plan.branch,
    source_head: plan.head,
    target_commit: plan.target,
    scope: plan.scope,
    scope_path: plan.scopePath,
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
  const output = await runMachine(
    ctx,
    op.id,
    { needsPreserve: op.preservation !== 'none' || (keepsLater && !plan.clean) },
    plan.changes,
    plan.clean ? (plan.undoTree?.tree ?? null) : null,
    plan.prewritten,
    op,
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
      ...(request.kind === 'undo' ? { scope: plan.scope } : {}),
    };
  }
  if (output.status === 'recovery-required') {
    throw new AvhError(
      'recovery-required',
      'Version restore needs attention — Agent Version History could not verify the restore. Your files are kept; resolve the recovery notice to continue.',
      { operation: op.id },
    );
  }
  const error = output.error;
  if (output.preserved) {
    // Rolled back after the partial work was committed: say where it is, whatever stopped the restore.
    const why =
      error instanceof AvhError
        ? ` (${error.message.replace(/\s*Nothing was changed\.?$|; nothing was changed\.?$/i, '')})`
        : '';
    throw new AvhError(
      error instanceof AvhError ? error.reason : 'git-failed',
      `The restore did not complete${why}. Your partial changes were saved as an Interrupted version (${output.preserved.slice(0, 7)}) in Version History; nothing else changed.`,
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

/** Finishes or settles an operation left unfinished by a crashed process (SPEC §5.4). Idempotent; never sleeps. */
export async function reconcileOperations(ctx: RepoContext): Promise<boolean> {
  const cleaned = removeLeftoverTempFiles(ctx.repo); // only files whose process is gone: needs no lease
  if (cleaned > 0) ctx.log.info('reconcile.temp-files-removed', { count: cleaned });
  const op = await ctx.store.read((r) => inFlightOperation(r));
  const holder = readLockHolder(leasePath(ctx.repo));
  if (!op && !indexRepairPending(ctx.repo) && (!holder || holder.alive)) return false;
  // An unfinished operation, or a lease left by a process that died: settle it under the lease.
  const lease = tryAcquireLock(leasePath(ctx.repo), 'reconcile');
  if (!lease) return false; // its owner is alive and still working on it, or another process is reconciling
  try {
    return await settleUnderLease(ctx);
  } finally {
    lease.release();
  }
}

/**
 * The first step of every mutation (beginTurn, endTurn, restores, recovery actions), under the repository lease
 * the caller just took (possibly by breaking a dead holder's): whatever a crashed process left unfinished is
 * settled before anything is snapshotted or committed, so no turn ever records a half-restored tree. An
 * operation in flight is finished, rolled back or latched as recovery; our own stale index.lock and temp files
 * of dead processes go. Cheap when nothing is left over (one store read, a few file checks). Returns whether
 * it settled anything.
 */
export async function settleUnderLease(ctx: RepoContext): Promise<boolean> {
  if (clearOwnStaleIndexLock(ctx.repo)) ctx.log.warn('restore.stale-index-lock-removed');
  return reconcileUnderLease(ctx);
}

async function reconcileUnderLease(ctx: RepoContext): Promise<boolean> {
  // A branch moved by one of our commits whose index could not follow: make the index HEAD's tree first.
  const repaired = await repairRecordedIndex(ctx.repo);
  if (repaired) ctx.log.warn('restore.index-repaired');
  const op = await ctx.store.read((r) => inFlightOperation(r));
  if (!op) return repaired;
  await ctx.store.transaction((tx) => tx.run('UPDATE operations SET attempts = attempts + 1 WHERE id = ?', [op.id]));
  const output = await runMachine(ctx, op.id, {
    needsPreserve: false,
    reconcile: true,
    preserved: op.preserve_commit,
    restoreCommit: op.restore_commit,
  });
  ctx.log.info('restore.reconcile', {
    operation: op.id,
    lastPhase: op.phase,
    result: output.status,
    disposition: output.disposition?.kind,
  });
  return true;
}

async function acquireRestoreLease(ctx: RepoContext): Promise<LockHandle> {
  fs.mkdirSync(ctx.repo.stateDir, { recursive: true });
  const quick = tryAcquireLock(leasePath(ctx.repo), 'restore');
  if (quick) return quick;
  const holder = readLockHolder(leasePath(ctx.repo));
  if (holder?.alive && holder.purpose !== 'turn') {
    throw new AvhError(
      'restore-in-progress',
      'Another restore is in progress for this repository. Wait for it to finish, then try again.',
    );
  }
  return acquireRepositoryLease(ctx.repo, 'restore', ctx.leaseWaitMs);
}

async function makePlan(
  ctx: RepoContext,
  request: RestoreRequest,
  ahead?: AheadOperation,
  options: { inPlace?: false } = {},
): Promise<Plan | { nothing: 'nothing-to-undo' | 'nothing-to-redo' }> {
  // The lookups (store, diff-tree, log, the reverse merge of Undo Only This Turn) read only commits or write only
  // objects, so they start on the branch tip the ref files name while the probe scans the working tree; their
  // result counts only when the probe reports the same branch and HEAD, and only after the gate passed (a blocker
  // always wins over a lookup's error). A restore (not a preview) also writes its commit object ahead once its tree
  // is known; the saga uses it only if it is still the commit it needs (writeRestoreCommit compares tree, parent,
  // message and date).
  const guess = guessBranchTip(ctx.repo.gitDir);
  let prewritten: PrewrittenCommit | null = null;
  const prewrite =
    ahead && guess
      ? (found: TargetLookup, content?: RestoreContent) => {
          prewritten = prewriteRestoreCommit(
            ctx,
            {
              id: ahead.id,
              kind: request.kind,
              scope: content ? 'turn' : 'everything',
              turn_id: found.turn?.id ?? null,
              target_commit: found.target,
              preserve_commit: null,
              source_head: guess.head,
              started_at: ahead.startedAt,
            },
            content,
          );
        }
      : undefined;
  // A preview writes nothing: not even an archived turn's copy back to the hot table (it reads the history view).
  const promote = ahead !== undefined;
  const early = guess ? settled(lookUp(ctx, request, guess.branch, guess.head, promote, prewrite)) : null;
  if (
    ahead &&
    guess &&
    early &&
    options.inPlace !== false &&
    isOnlyThisTurn(request) &&
    (await committedAfterTurn(ctx, request, guess))
  ) {
    const inPlace = await inPlacePlan(ctx, request, guess, await early, () => prewritten);
    if (inPlace) return inPlace;
  }
  let health: RepositoryHealth;
  let gate: { branch: string; head: string };
  try {
    health = await inspectRepositoryHealth(ctx.repo);
    // Under the restore lease: a recovery latch and an in-flight restore were already settled or refused. Undo
    // passes on an unborn branch too (a cancelled first turn in an empty folder): HEAD is then ZERO_OID.
    const facts = factsFromHealth(health);
    gate = request.kind === 'undo' ? unbornAsZero(passTurnGate(facts, 'retry')) : passGate(facts, 'retry');
  } catch (error) {
    await early;
    throw error;
  }
  const { branch, head } = gate;
  let looked: Awaited<ReturnType<typeof lookUp>>;
  if (early && guess?.branch === branch && guess.head === head) {
    looked = unwrap(await early);
  } else {
    await early; // read-only; let it finish before looking again on what git reported
    looked = await lookUp(ctx, request, branch, head, promote);
  }
  if ('nothing' in looked) return looked;
  const { later, changes: wholeChanges, reverse, ...found } = looked;
  const plan: Plan = {
    request,
    branch,
    head,
    clean: health.clean,
    inPlace: false,
    nestedRepositories: health.nestedRepositories,
    ...found,
    changes: [],
    userCommits: 0,
    scope: 'everything',
    scopePath: null,
    later: null,
    undoTree: null,
    prewritten,
  };
  const whole = () => wholeChanges ?? wholeTargetChanges(ctx, head, plan.target);
  if (request.kind !== 'undo' || !plan.turn) return wholeTargetPlan(ctx, plan, null, await whole());
  const turn = plan.turn;
  // A cancelled turn's own partial work in the tree is not "later work": Undo saves it either way.
  plan.later = later ? { ...later, uncommitted: !(health.clean || plan.preservation !== 'none') } : null;
  const nothingAfter = plan.later ? !anyLaterWork(plan.later) : turn.version_commit === null && head === turn.base_head;
  // Nothing landed after the turn: Undo Only This Turn is exactly today's Undo.
  const scope: UndoScope =
    request.path !== undefined ? 'file' : request.only === 'turn' && !nothingAfter ? 'turn' : 'everything';
  // laterWorkAfter counted the user's commits since the HEAD the turn began on, as countUserCommits would.
  if (scope === 'everything')
    return wholeTargetPlan(ctx, plan, plan.later ? plan.later.userCommits : null, await whole());
  if (!plan.later && turn.version_commit) {
    throw new AvhError(
      'invalid-input',
      "This turn's version is no longer in the history of this branch, so its own changes cannot be told apart from the rest. Nothing was changed.",
    );
  }
  // On a clean tree the reverse merged on HEAD while the probe ran is exactly what checkUndoTree would compute.
  const reversed = scope === 'turn' && health.clean && reverse?.ok ? reverse.value : null;
  const undo = reversed?.undo ?? (await checkUndoTree(ctx, turn, scope, head, health.clean, request.path ?? null));
  return {
    ...plan,
    scope,
    scopePath: request.path ?? null,
    undoTree: undo,
    userCommits: 0,
    preservation: 'none',
    changes: health.clean ? (reversed?.changes ?? (await treeChanges(ctx.repo, head, undo.tree))) : [],
  };
}

const isOnlyThisTurn = (request: RestoreRequest) =>
  request.kind === 'undo' && request.only === 'turn' && request.path === undefined;

/**
 * Whether the turn an Undo names (or the latest undoable one) ended with a version that is no longer the branch
 * tip: the case Undo in place is for. One read of the hot table, so a request it does not fit starts the probe at
 * once (with nothing after the turn, Undo Only This Turn is today's Undo).
 */
async function committedAfterTurn(
  ctx: RepoContext,
  request: RestoreRequest,
  tip: { branch: string; head: string },
): Promise<boolean> {
  if (request.kind !== 'undo') return false;
  const turn = await ctx.store.read((r) => {
    const id = request.turnId ?? undoableTurns(r, tip.branch)[0]?.id;
    return id ? getTurn(r, id) : undefined;
  });
  return (
    turn !== undefined &&
    turn.recovery === 'terminal' &&
    turn.version_commit !== null &&
    turn.version_commit !== tip.head
  );
}

/** Above this many paths an Undo Only This Turn is planned in full (its cheap postcondition checks at most this many). */
const MAX_IN_PLACE_PATHS = 2000;

/**
 * Undo Only This Turn in place (docs/design.md, "Undo Only This Turn in place"): when commits landed after the turn,
 * no other turn is open and no git operation or index.lock is in the way (marker files), the reverse merged on the
 * branch tip — looked up from the ref files while nothing else ran — is the plan, with no working-tree scan. The
 * saga's two-tree read-tree then writes only the paths the reverse changes, and refuses before its first write when
 * one of them holds changes of its own; uncommitted edits anywhere else are not touched. Null when any of this does
 * not hold: the full plan (probe, and the saved working tree when it is dirty) decides. Read-only.
 */
async function inPlacePlan(
  ctx: RepoContext,
  request: RestoreRequest,
  tip: { branch: string; head: string },
  looked: Settled<Awaited<ReturnType<typeof lookUp>>>,
  prewritten: () => PrewrittenCommit | null,
): Promise<Plan | null> {
  if (!looked.ok || 'nothing' in looked.value) return null;
  const { later, reverse, target, turn, preservation } = looked.value;
  const undo = reverse?.ok ? reverse.value : null;
  if (!turn || !later || !undo || undo.changes === null || preservation !== 'none') return null;
  const committedAfter = { ...later, uncommitted: false };
  if (!anyLaterWork(committedAfter) || undo.changes.length === 0 || undo.changes.length > MAX_IN_PLACE_PATHS)
    return null;
  if (operationsInProgress(ctx.repo.gitDir).length > 0 || fs.existsSync(path.join(ctx.repo.gitDir, 'index.lock')))
    return null;
  // Another turn's partial work may be in the tree: its version would then take this Undo's writes for its own.
  if (await ctx.store.read((r) => openTurns(r).some((t) => t.id !== turn.id))) return null;
  return {
    request,
    branch: tip.branch,
    head: tip.head,
    clean: true,
    inPlace: true,
    nestedRepositories: [],
    target,
    turn,
    preservation,
    changes: undo.changes,
    userCommits: 0,
    scope: 'turn',
    scopePath: null,
    later: committedAfter,
    undoTree: undo.undo,
    prewritten: prewritten(),
  };
}

function unbornAsZero(passed: { branch: string; head: string | null }): { branch: string; head: string } {
  return { branch: passed.branch, head: passed.head ?? ZERO_OID };
}

type TargetLookup = Pick<Plan, 'target' | 'turn' | 'preservation'>;

/** What restoring the whole target writes (`diff-tree` from HEAD, or from the empty tree on an unborn branch). */
async function wholeTargetChanges(ctx: RepoContext, head: string, target: string): Promise<TreeChange[]> {
  return treeChanges(ctx.repo, head === ZERO_OID ? await emptyTree(ctx.repo) : head, target);
}

/**
 * Every lookup planning needs that reads only commits, the git ones side by side: the target, what landed after an
 * undone turn, and either what restoring the whole target writes (`diff-tree`) or, for Undo Only This Turn, the
 * turn's reverse merged on `head` as a clean tree (objects only; `settled`, so its refusal is reported by the
 * planning that runs it again, if it is needed). `onTarget` receives the content of a restore commit worth writing ahead.
 */
async function lookUp(
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
  const keepsLater = request.kind === 'undo' && (request.only === 'turn' || request.path !== undefined);
  const reversible =
    request.kind === 'undo' &&
    request.only === 'turn' &&
    request.path === undefined &&
    !unborn &&
    found.turn?.recovery === 'terminal' &&
    found.turn.version_commit;
  if (!keepsLater) onTarget?.(found);
  const counted = request.kind === 'undo' && found.turn?.recovery === 'terminal' && !unborn;
  const listed = counted ? laterCommits(ctx, found.turn!, head) : null;
  listed?.catch(() => undefined); // its failure is reported by whichever lookup awaits it
  const [later, changes, reverse] = await Promise.all([
    // The uncommitted flag is set from the probe by the caller.
    counted ? laterWorkAfter(ctx, found.turn!, head, true, listed) : null,
    keepsLater ? null : wholeTargetChanges(ctx, head, found.target),
    reversible ? settled(reverseOnHead(ctx, found.turn!, head, (content) => onTarget?.(found, content), listed)) : null,
  ]);
  return { ...found, later, changes, reverse };
}

/** Undo Only This Turn on a clean tree at `head`: the tree, and (when it applies cleanly) what it writes. Objects only. */
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
): Promise<TargetLookup | { nothing: 'nothing-to-undo' | 'nothing-to-redo' }> {
  let target: string;
  let turn: TurnRow | null = null;
  let preservation: PreservationReason = 'none';
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
    await assertTurnBranchUsable(ctx, turn, branch); // SPEC §7: a lost branch is said so, never "check it out"
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
    target = turn.base_commit;
    preservation = found.preservation;
  } else if (request.kind === 'redo') {
    const stack = await ctx.store.read((r) => redoStack(r, branch, head));
    if (stack.length === 0) return { nothing: 'nothing-to-redo' };
    target = stack[0].redo_target;
  } else {
    target = await resolveCommit(ctx.repo, request.target);
  }
  return { target, turn, preservation };
}

/** The whole target's plan: what it writes, and the user's own commits it would undo (none for a Redo). */
async function wholeTargetPlan(
  ctx: RepoContext,
  plan: Plan,
  knownUserCommits: number | null,
  changes: TreeChange[],
): Promise<Plan> {
  const unborn = plan.head === ZERO_OID;
  const userCommits =
    knownUserCommits ??
    (plan.request.kind === 'redo' || unborn ? 0 : await countUserCommits(ctx, plan.turn?.base_head ?? plan.target));
  return { ...plan, changes, userCommits };
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A promise that never rejects (its outcome is read later, or dropped without an unhandled rejection). */
function settled<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

function unwrap<T>(result: Settled<T>): T {
  if (!result.ok) throw result.error;
  return result.value;
}

/** Commits after `since` on HEAD's history that no agent turn or restore of ours made (SPEC §5.3 confirmation). */
async function countUserCommits(ctx: RepoContext, since: string): Promise<number> {
  return (await subjectsSince(ctx.repo, since)).filter((s) => kindOfSubject(s) === 'user').length;
}

/** Refuses (ordinary failure, nothing changed) when the update would overwrite or remove an ignored path. */
async function refuseIgnoredFilesInTheWay(ctx: RepoContext, changes: readonly TreeChange[]): Promise<void> {
  const ignored = (await ignoredPathsInTheWay(ctx.repo, changes)).length;
  if (ignored > 0) {
    throw new AvhError(
      'dirty-conflict',
      `${ignored} ignored file${ignored === 1 ? '' : 's'} (by .gitignore, or left out of versions as a likely secret) would be overwritten by this version. Move ${ignored === 1 ? 'it' : 'them'} aside, then try again. Nothing was changed.`,
      { count: ignored },
    );
  }
}

class PostconditionError extends AvhError {
  constructor() {
    super('git-failed', 'The restored files do not match the target version.');
  }
}

/**
 * The phases whose write-ahead changes what a crash means (disposition.ts tells apart only: up to preflight, from
 * preserve-dirty-tree, from update-worktree). The others (preflight checks; write-restore-commit writes objects
 * only; update-branch classifies as update-worktree does) are persisted only with a commit to record.
 */
const WRITE_AHEAD_PHASES: ReadonlySet<RestorePhase> = new Set<RestorePhase>(['preserve-dirty-tree', 'update-worktree']);

/**
 * Persists `phase` (write-ahead, when WRITE_AHEAD_PHASES says it matters) together with the commits the previous
 * effect produced — one durable write — then runs the effect on the in-memory copy of the operation, which mirrors
 * what was written plus the phase this process is in.
 */
async function withPhase<T>(
  ctx: RepoContext,
  op: OperationRow,
  phase: RestorePhase,
  carried: { preserved: string | null; restoreCommit: string | null },
  effect: (op: OperationRow) => Promise<T>,
): Promise<T> {
  const commits = {
    ...(carried.preserved && carried.preserved !== op.preserve_commit ? { preserve_commit: carried.preserved } : {}),
    ...(carried.restoreCommit && carried.restoreCommit !== op.restore_commit
      ? { restore_commit: carried.restoreCommit }
      : {}),
  };
  if (WRITE_AHEAD_PHASES.has(phase) || Object.keys(commits).length > 0) {
    await ctx.store.transaction((tx) => {
      setPhase(tx, op.id, phase);
      recordCommits(tx, op.id, commits);
    });
  }
  Object.assign(op, commits, { phase });
  failpoint(`${phase}:before`);
  const result = await effect(op);
  failpoint(`${phase}:after`);
  return result;
}

function runMachine(
  ctx: RepoContext,
  opId: string,
  input: { needsPreserve: boolean; reconcile?: boolean; preserved?: string | null; restoreCommit?: string | null },
  changesFromHead: TreeChange[] | null = null,
  plannedTree: string | null = null,
  prewritten: PrewrittenCommit | null = null,
  admitted: OperationRow | null = null,
) {
  const freshOp = async () => {
    const op = await ctx.store.read((r) => getOperation(r, opId));
    if (!op) throw new AvhError('store-unavailable', 'The restore record disappeared.');
    return op;
  };
  // The operation this process just admitted is exactly what was written; reconciliation reads it.
  let current: OperationRow | undefined = admitted ? { ...admitted } : undefined;
  const op = async () => (current ??= await freshOp());
  // What the worktree update writes (known only to the process that runs the effects, not to reconciliation).
  let touched: TreeChange[] | null = changesFromHead;
  // Whether this process proved, while it moved the branch, that the worktree holds exactly what the update wrote.
  let proven = false;
  // Whether the worktree update moved the branch too (an Undo that keeps later work).
  let branchMoved = false;
  const machine = restoreMachine.provide({
    actors: {
      preflight: fromPromise(async ({ input: carried }) =>
        withPhase(ctx, await op(), 'preflight', carried, async (o) => {
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
        }),
      ),
      preserveDirtyTree: fromPromise(async ({ input: carried }) =>
        withPhase(ctx, await op(), 'preserve-dirty-tree', carried, async (o) => {
          const commit = await preserveDirtyTree(ctx, o);
          ctx.log.info('restore.preserved', { operation: opId, reason: o.preservation });
          return commit;
        }),
      ),
      writeRestoreCommit: fromPromise(async ({ input: carried }) =>
        withPhase(ctx, await op(), 'write-restore-commit', carried, async (o) => {
          const content = await restoreContent(ctx, o, o.preserve_commit ? null : plannedTree);
          // After a preservation commit the update starts from it, not from the HEAD the plan compared.
          if (o.preserve_commit) {
            touched = await treeChanges(ctx.repo, o.preserve_commit, content.tree);
            await refuseIgnoredFilesInTheWay(ctx, touched);
          }
          return writeRestoreCommit(ctx, o, content, prewritten);
        }),
      ),
      updateWorktree: fromPromise(async ({ input: carried }) =>
        withPhase(ctx, await op(), 'update-worktree', carried, async (o) => {
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
          branchMoved = true;
        }),
      ),
      updateBranch: fromPromise(async ({ input: carried }) =>
        withPhase(ctx, await op(), 'update-branch', carried, async (o) => {
          const moving = branchMoved ? Promise.resolve() : updateBranch(ctx, o, requireRestoreCommit(o));
          // While git moves the branch: the worktree is already final (read-tree wrote it), so what it wrote is
          // checked now, on this thread, instead of after. The answer counts only if the branch then moved.
          let pathsMatch = false;
          try {
            pathsMatch = touched !== null && restoredPathsMatch(ctx, o, touched);
          } catch {
            // Unreadable now: not proven, so the full probe decides after the branch moved.
          }
          await moving;
          proven = pathsMatch;
        }),
      ),
      // The last phase's effect is itself one store transaction, so the phase and its effect are written together.
      mutateTurnStore: fromPromise(async ({ input: carried }) => {
        const o = await op();
        const restoreCommit = carried.restoreCommit ?? requireRestoreCommit(o);
        failpoint('turn-store-mutation:before');
        // Postcondition: the working tree equals the target exactly. Right after this process moved the branch,
        // checking what the update wrote can prove it cheaply; anything it cannot prove, one full probe decides.
        if (!(proven && o.phase === 'update-branch') && !(await postconditionHolds(ctx, o, restoreCommit, touched)))
          throw new PostconditionError();
        await ctx.store.transaction((tx) => {
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
        failpoint('turn-store-mutation:after');
        ctx.log.info('restore.completed', { operation: opId, kind: o.kind, preservation: o.preservation });
      }),
      classifyFailure: fromPromise(async ({ input }) => {
        current = undefined; // from here on, always re-read what was persisted
        const op = await freshOp();
        const error = input.error;
        const disposition: Disposition =
          error instanceof PostconditionError
            ? { kind: 'recovery-required', reason: 'worktree-partially-restored' }
            : await classifyOperation(ctx, op, { worktreeUntouched: error instanceof WorktreeUpdateRefused });
        if (disposition.kind === 'rolled-back' && disposition.preserved && !op.preserve_commit) {
          await ctx.store.transaction((tx) => recordCommits(tx, opId, { preserve_commit: disposition.preserved! }));
        }
        return disposition;
      }),
      settleRolledBack: fromPromise(async ({ input }) => {
        const reason =
          input.error instanceof AvhError ? input.error.reason : input.error ? 'unexpected' : 'interrupted';
        const status = input.disposition?.kind === 'ordinary' ? 'failed' : 'rolled-back';
        const op = await freshOp();
        await ctx.store.transaction((tx) => finishOperation(tx, opId, status, reason));
        ctx.log.warn('restore.failed', { operation: opId, disposition: status, lastPhase: op.phase, reason });
      }),
      latchRecovery: fromPromise(async ({ input }) => {
        const op = await freshOp();
        const why = input.disposition?.kind === 'recovery-required' ? input.disposition.reason : 'unclassified';
        await ctx.store.transaction((tx) => {
          finishOperation(tx, opId, 'recovery-required', why);
          if (!readRecovery(tx)) setRecovery(tx, opId, why, op.phase, Date.now());
        });
        ctx.log.error('restore.recovery-required', { operation: opId, disposition: why, lastPhase: op.phase });
      }),
    },
  });
  const actor = createActor(machine, { input });
  actor.start();
  return toPromise(actor);
}

/**
 * The restore's postcondition when the cheap proof (restoredPathsMatch) could not give it: HEAD is the restore
 * commit on the source branch, and the working tree is the target — all of it for a restore of the whole target;
 * for an Undo that keeps later work, the paths its update wrote (the rest may hold the user's own edits).
 */
async function postconditionHolds(
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

/**
 * The restore commit's tree and subject. An Undo that keeps later work takes the turn (or one file of it) back
 * from the commit the restore builds on — the planned tree when that is still HEAD, else computed again on top
 * of the preservation commit; a reverse that no longer applies cleanly is refused before anything moves.
 */
async function restoreContent(ctx: RepoContext, op: OperationRow, plannedTree: string | null): Promise<RestoreContent> {
  if (op.scope === 'everything') return wholeTargetContent(op);
  const turn = op.turn_id ? await ctx.store.read((r) => getTurn(r, op.turn_id!)) : undefined;
  if (!turn) throw new AvhError('store-unavailable', 'The turn this Undo takes back is no longer recorded.');
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

/** The restore's single store write: turn undone/redone, redo stack, operation completed. Idempotent. */
function applyTurnStoreMutation(tx: StoreTx, op: OperationRow, restoreCommit: string): void {
  const current = getOperation(tx, op.id);
  if (!current || current.status !== 'in-flight') return;
  const branch = op.source_branch;
  if (op.kind === 'undo') {
    // Undo This File leaves the turn in effect (only one path went back): Redo brings the file back, the turn stays.
    const undoneTurn = op.scope === 'file' ? null : op.turn_id;
    if (undoneTurn) tx.run('UPDATE turns SET undone_by = ? WHERE id = ?', [op.id, undoneTurn]);
    const position =
      (tx.get<{ p: number | null }>('SELECT MAX(position) AS p FROM redo_entries WHERE branch = ?', [branch])?.p ?? 0) +
      1;
    tx.run(
      'INSERT INTO redo_entries (op_id, position, branch, result_commit, redo_target, turn_id) VALUES (?, ?, ?, ?, ?, ?)',
      [op.id, position, branch, restoreCommit, op.preserve_commit ?? op.source_head, undoneTurn],
    );
  } else if (op.kind === 'redo') {
    const top = tx.get<{ op_id: string; turn_id: string | null }>(
      'SELECT op_id, turn_id FROM redo_entries WHERE branch = ? ORDER BY position DESC LIMIT 1',
      [branch],
    );
    if (top) {
      tx.run('DELETE FROM redo_entries WHERE op_id = ?', [top.op_id]);
      if (top.turn_id) tx.run('UPDATE turns SET undone_by = NULL WHERE id = ?', [top.turn_id]);
      // The next undo down the stack now starts from this redo's result (same tree as that undo left).
      tx.run(
        'UPDATE redo_entries SET result_commit = ? WHERE branch = ? AND position = (SELECT MAX(position) FROM redo_entries WHERE branch = ?)',
        [restoreCommit, branch, branch],
      );
    }
  } else {
    tx.run('DELETE FROM redo_entries WHERE branch = ?', [branch]);
  }
  tx.run("UPDATE operations SET phase = 'completed', status = 'completed', updated_at = ? WHERE id = ?", [
    Date.now(),
    op.id,
  ]);
}
