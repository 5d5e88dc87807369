import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import {
  guessBranchTip,
  inspectHealthPastIndexLock,
  operationsInProgress,
  type RepositoryHealth,
} from '../git/healthProbe';
import { subjectsSince } from '../git/history';
import { commitTreeOf } from '../git/looseObject';
import { factsFromHealth, passGate, passUndoGate } from '../git/repositoryGate';
import { ZERO_OID } from '../git/workingTree';
import type { CommitRange } from '../git/reverseMerge';
import { type TreeChange, treeChanges } from '../git/worktreeUpdate';
import type { PreservationReason, UndoScope } from '../store/schema';
import { kindOfSubject } from '../domain/promptSummary';
import { getTurn, openTurns, type TurnRow } from '../turns/turnRecords';
import { undoableTurns } from './historyCounts';
import {
  type PrewrittenCommit,
  prewriteRestoreCommit,
  refuseWritesThatCannotLand,
  type RestoreContent,
} from './restoreEffects';
import type { RestoreRequest } from './restoreRequest';
import { anyLaterWork, checkUndoTree, type LaterWork, type UndoTree } from './revertPlan';
import type { TurnChange } from '../blame/undoChange';
import { checkChangeTree } from './changePlan';
import {
  lookUp,
  type NothingToDo,
  type Settled,
  settled,
  type TargetLookup,
  unwrap,
  wholeTargetChanges,
} from './targetLookup';

/** Everything a restore will do, decided under the lease before the saga runs (or for a preview, without it). */
export interface Plan {
  request: RestoreRequest;
  branch: string;
  head: string;
  /**
   * The working tree is clean; for an Undo in place (`inPlace`), only the paths it writes matter and read-tree checks
   * them.
   */
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
  /** Redo and Restore over a running or stopped turn's partial work (targetLookup.ts): the turn. */
  partial: TurnRow | null;
  userCommits: number;
  nestedRepositories: string[];
  scope: UndoScope;
  scopePath: string | null;
  /** Undo This Change: the one hunk of the turn taken back (scope 'file', scopePath its file in the turn's commit). */
  change: TurnChange | null;
  later: LaterWork | null;
  /** The commits since the turn began, as `later` was counted from (null when git was not asked: revertPlan.ts). */
  listed: CommitRange | null;
  /** Undo that keeps later work: the tree to commit, computed from HEAD (or the working tree saved as an object). */
  undoTree: UndoTree | null;
  /** The restore commit of the whole target, written ahead on the guessed branch tip (runRestore only). */
  prewritten: PrewrittenCommit | null;
  /** Whether the update can land (`refuseWritesThatCannotLand`), checked ahead on the changes it names (runRestore). */
  landing: LandingCheck | null;
}

/**
 * The read-only checks that an update can land whole, run while the probe still scans the working tree, on what the
 * lookups on the guessed branch tip say it writes: their outcome counts only for that same list of changes.
 */
export interface LandingCheck {
  changes: readonly TreeChange[];
  checked: Promise<Settled<void>>;
}

/** Whether `plan`'s update can land: the check made ahead when it looked at the same changes, else checked now. */
export async function assertLandable(ctx: RepoContext, plan: Plan): Promise<void> {
  if (plan.landing?.changes === plan.changes) unwrap(await plan.landing.checked);
  else await refuseWritesThatCannotLand(ctx, plan.changes);
}

/** The operation a restore will admit, named before planning so its restore commit can be written ahead. */
export interface AheadOperation {
  id: string;
  startedAt: number;
}

/**
 * Plans a restore (read-only, but a restore's — not a preview's — lookups write objects ahead and promote an
 * archived turn): the target, what it writes, what landed after the turn, through the one gate.
 */
export async function makePlan(
  ctx: RepoContext,
  request: RestoreRequest,
  ahead?: AheadOperation,
  options: { inPlace?: false } = {},
): Promise<Plan | NothingToDo> {
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
  // The main thread waits for the probe meanwhile: the landing checks (stats, rarely a git command) run in that wait.
  let landing: LandingCheck | null = null;
  void early?.then((looked) => {
    if (!ahead || !looked.ok || 'nothing' in looked.value) return;
    const { changes, reverse } = looked.value;
    const written = changes ?? (reverse?.ok ? reverse.value.changes : null);
    if (written) landing = { changes: written, checked: settled(refuseWritesThatCannotLand(ctx, written)) };
  });
  if (
    ahead &&
    guess &&
    early &&
    options.inPlace !== false &&
    isOnlyThisTurn(request) &&
    (await committedAfterTurn(ctx, request, guess))
  ) {
    const inPlace = await inPlacePlan(
      ctx,
      request,
      guess,
      await early,
      () => prewritten,
      () => landing,
    );
    if (inPlace) return inPlace;
  }
  if (ahead && guess && early && options.inPlace !== false && request.kind === 'redo') {
    const inPlace = await inPlaceRedoPlan(
      ctx,
      request,
      guess,
      await early,
      () => prewritten,
      () => landing,
    );
    if (inPlace) return inPlace;
  }
  let health: RepositoryHealth;
  let gate: { branch: string; head: string };
  try {
    health = await inspectHealthPastIndexLock(ctx.repo); // an editor's index.lock: waited for, bounded
    // Under the restore lease: a recovery latch and an in-flight restore were already settled or refused. Undo
    // passes on an unborn branch too (a cancelled first turn in an empty folder): HEAD is then ZERO_OID.
    const facts = factsFromHealth(health);
    gate = request.kind === 'undo' ? unbornAsZero(passUndoGate(facts, 'retry')) : passGate(facts, 'retry');
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
    change: null,
    later: null,
    undoTree: null,
    prewritten,
    landing,
  };
  const whole = () => wholeChanges ?? wholeTargetChanges(ctx, head, plan.target);
  if (request.kind !== 'undo' || !plan.turn) return wholeTargetPlan(ctx, plan, null, await whole());
  const turn = plan.turn;
  // A cancelled turn's own partial work in the tree is not "later work": Undo saves it either way.
  plan.later = later ? { ...later, uncommitted: !(health.clean || plan.preservation !== 'none') } : null;
  let nothingAfter = plan.later ? !anyLaterWork(plan.later) : turn.version_commit === null && head === turn.base_head;
  // Restores after the version ([Restore], [Interrupted]) are no turn and no commit of the user's, yet they may have
  // written anything (a Redo of another chat's turn, the user's saved edits): nothing landed only when HEAD still holds
  // the version's tree (fuzz seed 6: Undo Only This Turn took a redone turn's README away as "everything").
  if (nothingAfter && request.only === 'turn' && turn.version_commit !== null && head !== turn.version_commit)
    nothingAfter = (await commitTreeOf(ctx.repo, head)) === (await commitTreeOf(ctx.repo, turn.version_commit));
  // Nothing landed after the turn: Undo Only This Turn is exactly today's Undo.
  const scope: UndoScope =
    request.path !== undefined || request.change !== undefined
      ? 'file'
      : request.only === 'turn' && !nothingAfter
        ? 'turn'
        : 'everything';
  // laterWorkAfter counted the user's commits since the HEAD the turn began on, as countUserCommits would.
  if (scope === 'everything')
    return wholeTargetPlan(ctx, plan, plan.later ? plan.later.userCommits : null, await whole());
  if (!plan.later && turn.version_commit) {
    throw new AvhError(
      'invalid-input',
      "This turn's version is no longer in the history of this branch, so its own changes cannot be told apart " +
        'from the rest. Nothing was changed.',
    );
  }
  if (request.change !== undefined) {
    const { undo, change } = await checkChangeTree(ctx, turn, request.change, head, health.clean);
    return {
      ...plan,
      scope,
      scopePath: change.path,
      change,
      undoTree: undo,
      userCommits: 0,
      preservation: 'none',
      changes: health.clean ? await treeChanges(ctx.repo, head, undo.tree) : [],
    };
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
  request.kind === 'undo' && request.only === 'turn' && request.path === undefined && request.change === undefined;

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

/**
 * Above this many paths an Undo Only This Turn is planned in full (its cheap postcondition checks at most this many).
 */
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
  landing: () => LandingCheck | null,
): Promise<Plan | null> {
  if (!looked.ok || 'nothing' in looked.value) return null;
  const { later, reverse, target, turn, preservation, listed } = looked.value;
  const undo = reverse?.ok ? reverse.value : null;
  if (!turn || !later || !undo || undo.changes === null || preservation !== 'none') return null;
  const committedAfter = { ...later, uncommitted: false };
  if (!anyLaterWork(committedAfter) || undo.changes.length === 0 || undo.changes.length > MAX_IN_PLACE_PATHS)
    return null;
  if (gitBusy(ctx)) return null;
  // Another turn's partial work may be in the tree: its version would then take this Undo's writes for its own.
  if (await ctx.store.read((r) => openTurns(r).some((t) => t.id !== turn.id))) return null;
  return {
    ...inPlaceFields(request, tip, target, undo.changes, prewritten, landing),
    turn,
    preservation,
    later: committedAfter,
    listed,
    undoTree: undo.undo,
  };
}

/** A git operation or index.lock is in the way (marker files only): an in-place plan is not made. */
function gitBusy(ctx: RepoContext): boolean {
  return operationsInProgress(ctx.repo.gitDir).length > 0 || fs.existsSync(path.join(ctx.repo.gitDir, 'index.lock'));
}

/** What every in-place plan (Undo Only This Turn, the Redo of one) holds: clean, paths-only, scope 'turn'. */
function inPlaceFields(
  request: RestoreRequest,
  tip: { branch: string; head: string },
  target: string,
  changes: TreeChange[],
  prewritten: () => PrewrittenCommit | null,
  landing: () => LandingCheck | null,
): Plan {
  return {
    request,
    branch: tip.branch,
    head: tip.head,
    clean: true,
    inPlace: true,
    nestedRepositories: [],
    target,
    turn: null,
    preservation: 'none',
    partial: null,
    changes,
    userCommits: 0,
    scope: 'turn',
    scopePath: null,
    change: null,
    later: null,
    listed: null,
    undoTree: null,
    prewritten: prewritten(),
    landing: landing(),
  };
}

/**
 * Redo of an Undo that kept later work (Undo Only This Turn, Undo This File: their operation's scope is not
 * 'everything'), in place like that Undo: it wrote only the turn's paths and left the user's uncommitted edits
 * elsewhere as they were (the in-place Undo saved nothing), so the Redo writes back only the paths that differ from
 * the tree it replaced and leaves those edits too, instead of refusing them as uncommitted work (issue 33). The plan
 * scope is 'turn' (the saga's paths-only update, postcondition and crash classification); its content is still the
 * whole target (sagaPhases.ts, restoreContent). Null when it does not apply: the full plan decides. Read-only.
 */
async function inPlaceRedoPlan(
  ctx: RepoContext,
  request: RestoreRequest,
  tip: { branch: string; head: string },
  looked: Settled<Awaited<ReturnType<typeof lookUp>>>,
  prewritten: () => PrewrittenCommit | null,
  landing: () => LandingCheck | null,
): Promise<Plan | null> {
  if (!looked.ok || 'nothing' in looked.value) return null;
  const { target, partial, changes } = looked.value;
  if (partial || !changes || changes.length === 0 || changes.length > MAX_IN_PLACE_PATHS) return null;
  if (gitBusy(ctx)) return null;
  const redone = await ctx.store.read((r) => {
    if (openTurns(r).length > 0) return null; // a turn's partial work may be in the tree
    return (
      r.get<{ scope: UndoScope; redo_target: string }>(
        'SELECT o.scope AS scope, e.redo_target AS redo_target FROM redo_entries e JOIN operations o ON o.id = ' +
          'e.op_id WHERE e.branch = ? AND e.result_commit = ? ORDER BY e.position DESC LIMIT 1',
        [tip.branch, tip.head],
      ) ?? null
    );
  });
  if (!redone || redone.scope === 'everything' || redone.redo_target !== target) return null;
  return inPlaceFields(request, tip, target, changes, prewritten, landing);
}

function unbornAsZero(passed: { branch: string; head: string | null }): { branch: string; head: string } {
  return { branch: passed.branch, head: passed.head ?? ZERO_OID };
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

/**
 * Commits after `since` on HEAD's history that no agent turn or restore of ours made (docs/product-contract.md §5.3,
 * confirmation).
 */
async function countUserCommits(ctx: RepoContext, since: string): Promise<number> {
  return (await subjectsSince(ctx.repo, since)).filter((s) => kindOfSubject(s) === 'user').length;
}
