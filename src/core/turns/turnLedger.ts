import * as crypto from 'node:crypto';
import type { RepoContext } from '../context';
import { AvhError, isAvhError } from '../errors';
import { failpoint } from '../failpoints';
import { findTurnCommit } from '../git/history';
import { quickGateFacts } from '../git/healthProbe';
import { excludeHeavyFoldersBeforeFirstVersion, largeFileNotice } from '../git/heavyFolders';
import { blockerMessage, GateFacts, turnGate } from '../git/repositoryGate';
import { commitFirstBase, commitWorkingTree } from '../git/workingTree';
import { BASE_REF_PREFIX, baseSnapshotMessage, baseSnapshotRequest } from './baseSnapshot';
import { NO_VERSION_FOR, versionCommitRequest, versionFailureReason } from './versionCommit';
import { assertChatBranchUsable, chatOrigin } from '../chats/chatBranches';
import { type ChatNote, handChatNotes } from '../chats/chatNotes';
import { insertTurnAnchorStatement } from '../chats/turnAnchors';
import type { TerminalOutcome } from '../outcomes';
import type { SecretFinding } from '../git/secretScanner';
import { readRecovery } from '../operations/recoveryLatch';
import { inFlightOperation } from '../operations/operationRecords';
import { OPERATIONS } from '../operations/operationKinds';
import { runIfFree } from '../operations/operationLease';
import { runOperation } from '../operations/runOperation';
import { concurrentVersion, noteOverlap } from './concurrentTurns';
import { agentSubject } from '../domain/promptSummary';
import { mayReEnd, reEnds, versionStateAtEnd } from './turnDecisions';
import { changedSince } from './workingChanges';
import { foldTurnWrites, type TurnWritesRecord } from './toolWrites';
import {
  getChat,
  getTurn,
  insertChatStatement,
  latestTurnOfChat,
  insertTurnStatement,
  markTurnTerminal,
  maxTurnSeq,
  nestedNotice,
  NoVersionReason,
  openTurnsOfChat,
  operationsNaming,
  pendingTurns,
  runStatement,
  setTurnVersion,
  touchChatStatement,
  turnReEndedStatement,
  turnRunningStatement,
  TurnRow,
} from './turnRecords';
import { BeginTurnInput } from './validation';

export { BASE_REF_PREFIX } from './baseSnapshot';

export interface BeginTurnResult {
  turnId: string;
  /**
   * The exact pre-turn state: HEAD itself when the tree was clean, else a private snapshot commit. On an unborn
   * branch: the `[Base]` root commit of the files the folder held, or a private root commit of the empty tree.
   */
  baseCommit: string;
  /**
   * Said once: nested repositories (their own `.git`) Version History does not version; files left out for their size.
   */
  notice?: string;
  /** New files left out because they look like secrets (issue 15); they stay in the working tree. */
  excluded: SecretFinding[];
  /** `handNotes`: the chat's notes, handed to this turn in the transaction that recorded it (chats/chatNotes.ts). */
  notes?: ChatNote[];
}

/**
 * Persists a new turn and captures its base snapshot (docs/product-contract.md §4.1). Never touches HEAD, the index or
 * the working tree; writes nothing to git when the tree is clean. Refused while recovery is required. On an unborn
 * branch (issue 13) the first turn records too: see startFirstTurn.
 */
export function beginTurn(
  ctx: RepoContext,
  input: BeginTurnInput,
  options: { handNotes?: boolean } = {},
): Promise<BeginTurnResult> {
  // A restore another process left unfinished is settled first (it may latch recovery, which the gate then refuses).
  return runOperation(ctx, OPERATIONS.turnBegin, async ({ health, branch, head }) => {
    // An existing chat whose branch is gone (lost, only on the remote, or not checkable) is refused, nothing replaced;
    // a new chat records its branch, base branch and remote (docs/design/branch-loss.md).
    const known = await ctx.store.read((r) => getChat(r, input.chatId) !== undefined);
    if (known) await assertChatBranchUsable(ctx, input.chatId, branch);
    const origin = known ? null : await chatOrigin(ctx.repo, branch, input.baseBranch);
    const turnId = crypto.randomUUID();
    const now = Date.now();
    const notes = await ctx.store.transaction((tx) => {
      const chat = getChat(tx, input.chatId);
      const title = input.chatTitle ?? null;
      const agent = input.agent ?? null;
      runStatement(
        tx,
        chat
          ? touchChatStatement(input.chatId, title, agent, now)
          : insertChatStatement({
              id: input.chatId,
              title,
              agent,
              branch,
              baseBranch: origin?.baseBranch ?? branch,
              remote: origin?.remote ?? null,
              now,
            }),
      );
      const seq = maxTurnSeq(tx, input.chatId) + 1;
      runStatement(
        tx,
        insertTurnStatement({ id: turnId, chatId: input.chatId, seq, prompt: input.prompt, agent, branch, head, now }),
      );
      if (input.anchor && agent !== null) runStatement(tx, insertTurnAnchorStatement(turnId, agent, input.anchor, now));
      // A prompt hook prints the chat's notes (issue 23): they are the turn's from the moment it is recorded.
      return options.handNotes ? handChatNotes(tx, input.chatId, turnId) : [];
    });
    let baseCommit = head;
    let baseHead = head;
    let baseTree: string | null = null;
    let excluded: SecretFinding[] = [];
    let large: string[] = [];
    let nested = health.nestedRepositories;
    if (head === null) {
      const first = await startFirstTurn(ctx, branch, turnId, input.chatId);
      ({ commit: baseCommit, tree: baseTree, excluded, large, nested } = first);
      baseHead = first.onBranch ? first.commit : null;
    } else if (!health.clean || health.hiddenEntries > 0) {
      // A private ref holds the exact pre-turn state (staged tree included); HEAD, the index and files stay as they
      // are. Beside entries status cannot see (issue 25), only a real difference makes a snapshot commit.
      const snapshot = await commitWorkingTree(ctx.repo, baseSnapshotRequest(turnId, input.chatId, head, health));
      baseCommit = snapshot.commit ?? head;
      baseTree = snapshot.tree;
      excluded = snapshot.excluded;
      large = snapshot.large;
    }
    await ctx.store.transaction((tx) => {
      runStatement(tx, turnRunningStatement(turnId, baseHead, baseCommit, baseTree));
    });
    const snapshot = head === null ? 'first' : health.clean ? 'head' : 'commit';
    ctx.log.info('turn.begin', {
      turn: turnId,
      snapshot,
      dirty: health.counts.staged + health.counts.unstaged + health.counts.untracked,
    });
    const notice = joinNotices(await nestedNotice(ctx, nested), largeFileNotice(large));
    return {
      turnId,
      baseCommit: baseCommit!,
      excluded,
      ...(notice ? { notice } : {}),
      ...(notes.length > 0 ? { notes } : {}),
    };
  });
}

/**
 * The first turn of an unborn branch: heavy folders are excluded before the first version (when there is no
 * .gitignore), then the base is made (commitFirstBase: a `[Base]` root commit of the folder's files, or a private
 * empty-tree commit when the folder is empty).
 */
async function startFirstTurn(ctx: RepoContext, branch: string, turnId: string, chatId: string) {
  if (await excludeHeavyFoldersBeforeFirstVersion(ctx.repo))
    ctx.log.info('turn.heavy-folders-excluded', { turn: turnId });
  return commitFirstBase(ctx.repo, branch, `${BASE_REF_PREFIX}${turnId}`, baseSnapshotMessage(turnId, chatId));
}

function joinNotices(...notices: (string | null)[]): string | null {
  const said = notices.filter((n): n is string => n !== null);
  return said.length > 0 ? said.join(' ') : null;
}

export interface EndTurnResult {
  turnId: string;
  outcome: TerminalOutcome;
  /** The `[Agent]` version commit, or null when none was made. */
  version: string | null;
  /** Why no version was made, when one was expected. */
  reason?: NoVersionReason;
  /** A user-facing explanation when the reason is worth telling. */
  message?: string;
  /** Said once per folder: nested repositories (their own `.git`) left out of the version. */
  notice?: string;
  /** New files left out because they look like secrets (issue 15); they stay in the working tree. */
  excluded: SecretFinding[];
}

/**
 * Records the turn's terminal outcome in one durable write, then (completed only) commits the whole tree as
 * one `[Agent]` version when it differs from the base. Ending an unknown or already-ended turn changes nothing.
 */
export function endTurn(ctx: RepoContext, turnId: string, outcome: TerminalOutcome): Promise<EndTurnResult> {
  // Settled first: a half-restored tree left by a dead restore is never committed as this turn's version.
  return runOperation(ctx, OPERATIONS.turnEnd, () => endTurnUnderLease(ctx, turnId, outcome));
}

/** endTurn for a caller that already holds the repository lease (Undo ends a running turn this way). */
export async function endTurnUnderLease(
  ctx: RepoContext,
  turnId: string,
  outcome: TerminalOutcome,
): Promise<EndTurnResult> {
  const ended = Date.now();
  const before = await ctx.store.read((r) => getTurn(r, turnId));
  if (!before) throw new AvhError('turn-unknown', 'No turn with this id exists in this repository.');
  if (before.recovery === 'terminal') return reEndTurn(ctx, before, outcome);
  // A turn that does not complete records, once, whether it changed anything (its end found the tree at its base):
  // one that did not is never Undo's target (docs/design/turns-and-undo.md). In doubt it did.
  const changed =
    outcome === 'completed' || before.base_commit === null
      ? true
      : await changedSince(ctx.repo, before.base_commit).catch(() => true);
  const { turn, recovery } = await ctx.store.transaction((tx) => {
    const row = getTurn(tx, turnId)!;
    if (row.recovery === 'terminal') throw alreadyEnded(row);
    // While recovery is required the repository's state is unverified: record the outcome, commit nothing.
    const latched = readRecovery(tx) !== null;
    markTurnTerminal(tx, turnId, outcome, versionStateAtEnd(outcome, latched, changed), ended);
    return { turn: row, recovery: latched };
  });
  ctx.log.info('turn.end', { turn: turnId, outcome, changed });
  // The files the turn's agent reported writing, folded into the turn's record (docs/design/two-chats.md).
  const own = foldTurnWrites(ctx.repo.stateDir, turn.chat_id, turn.id, turn.created_at);
  if (outcome !== 'completed') return { turnId, outcome, version: null, excluded: [] };
  if (recovery)
    return { turnId, outcome, version: null, reason: 'recovery-required', message: RECOVERY_COPY, excluded: [] };
  failpoint('turn-end:after-outcome');
  const result = await commitTurnVersion(ctx, turn, own);
  await ctx.store.transaction((tx) => setTurnVersion(tx, turnId, result.version, result.reason ?? null));
  ctx.log.info('turn.version', {
    turn: turnId,
    made: result.version !== null,
    reason: result.reason,
    excluded: result.excluded?.length,
  });
  return { turnId, outcome, excluded: [], ...result };
}

function alreadyEnded(row: TurnRow): AvhError {
  return new AvhError(
    'turn-already-ended',
    `This turn already ended (${row.terminal_outcome ?? 'outcome unknown'}); nothing was changed.`,
  );
}

/**
 * An end for a turn that already ended: re-ended `errored` over `cancelled` while nothing happened since (reEnds),
 * else refused as already ended. Only the outcome changes; what its first end recorded about its changes stays.
 */
async function reEndTurn(ctx: RepoContext, ended: TurnRow, outcome: TerminalOutcome): Promise<EndTurnResult> {
  await ctx.store.transaction((tx) => {
    const row = getTurn(tx, ended.id)!;
    const latest = {
      outcome: row.terminal_outcome,
      latestOfChat: maxTurnSeq(tx, row.chat_id) === row.seq,
      actedOnSince: row.undone_by !== null || operationsNaming(tx, row.id),
    };
    if (!reEnds(outcome, latest)) throw alreadyEnded(row);
    runStatement(tx, turnReEndedStatement(row.id, outcome));
  });
  ctx.log.info('turn.re-end', { turn: ended.id, from: ended.terminal_outcome, outcome });
  return { turnId: ended.id, outcome, version: null, excluded: [] };
}

/**
 * The chat's latest turn re-ended with `outcome` when reEnds allows it (an end event that found no running turn);
 * null when it does not, and nothing changes then.
 */
export function reEndLatestTurnOfChat(
  ctx: RepoContext,
  chatId: string,
  outcome: TerminalOutcome,
): Promise<EndTurnResult | null> {
  if (!mayReEnd(outcome)) return Promise.resolve(null);
  return runOperation(ctx, OPERATIONS.turnEnd, async () => {
    const latest = await ctx.store.read((r) => latestTurnOfChat(r, chatId));
    if (!latest || latest.recovery !== 'terminal') return null;
    try {
      return await reEndTurn(ctx, latest, outcome);
    } catch (error) {
      if (isAvhError(error, 'turn-already-ended')) return null;
      throw error;
    }
  });
}

const RECOVERY_COPY =
  'No version was made: Version History needs attention (an earlier restore could not be verified). The changes ' +
  'stay in the working tree; resolve the recovery notice to continue.';
const KEPT = 'No version was made; the changes stay in the working tree.';

const REF_UPDATE_REFUSED =
  'Git refused to move the branch (a reference-transaction hook, a full disk or a permissions problem).';

const FAILURE_COPY: Partial<Record<NoVersionReason, string>> = {
  'ref-moved': `${KEPT} The branch moved while the version was being recorded.`,
  'ref-update-refused': `${KEPT} ${REF_UPDATE_REFUSED}`,
  'git-failed': `${KEPT} Git failed while recording it.`,
};

type VersionOutcome = {
  version: string | null;
  reason?: NoVersionReason;
  message?: string;
  notice?: string;
  excluded?: SecretFinding[];
};

/**
 * Commits the turn's whole tree as one `[Agent]` version on the attached branch, through the one gate and the one
 * commit path.
 */
async function commitTurnVersion(ctx: RepoContext, turn: TurnRow, own: TurnWritesRecord): Promise<VersionOutcome> {
  const { repo } = ctx;
  const { facts, resolved } = await quickGateFacts(repo, [
    'HEAD^{tree}',
    ...(turn.base_tree === null && turn.base_commit ? [`${turn.base_commit}^{tree}`] : []),
  ]);
  const restoreInFlight = await ctx.store.read((r) => inFlightOperation(r) !== undefined);
  const blocked = (known: GateFacts): VersionOutcome | null => {
    const result = turnGate({ ...known, restoreInFlight }, 'turn-end');
    if (result.ok) return null;
    return {
      version: null,
      reason: NO_VERSION_FOR[result.reason] ?? 'git-failed',
      message: `${KEPT} ${result.message}`,
    };
  };
  const refused = blocked(facts);
  if (refused) return refused;
  const [headTree, parsedBaseTree] = resolved;
  // An unborn branch (the first turn in an empty folder): the version is the branch's root commit.
  const head = facts.unborn ? null : facts.head!;
  // Another chat's running turn: what it reported writing (and this turn did not) is not this turn's version.
  const concurrent = await concurrentVersion(ctx, turn, own);
  try {
    const result = await commitWorkingTree(
      repo,
      versionCommitRequest(
        { id: turn.id, chatId: turn.chat_id, subject: agentSubject(turn.prompt), baseTree: turn.base_tree },
        { branch: facts.branch!, head, headTree, baseCommitTree: parsedBaseTree },
        concurrent.fromCommits,
        (name) => failpoint(`turn-commit:${name}`),
      ),
    );
    if (concurrent.fromCommits.length > 0 || concurrent.shellTurns.length > 0 || concurrent.shared.size > 0) {
      // The branch moved: a failure to record the overlap never makes the version look unmade.
      const overlap = result.commit
        ? await noteOverlap(ctx, turn, own, concurrent, headTree, result.tree).catch(() => -1)
        : 0;
      ctx.log.info('turn.concurrent', { turn: turn.id, taken: concurrent.fromCommits.length, overlap });
    }
    const notice = joinNotices(await nestedNotice(ctx, result.nested), largeFileNotice(result.large));
    const nested = { ...(notice ? { notice } : {}), excluded: result.excluded };
    if (!result.indexInstalled && result.commit) ctx.log.warn('turn.index-repair-recorded', { turn: turn.id });
    return result.commit ? { version: result.commit, ...nested } : { version: null, reason: 'no-changes', ...nested };
  } catch (error) {
    if (isAvhError(error, 'unmerged-entries')) return blocked({ ...facts, unmerged: true })!;
    // The turn gate lets a held index.lock pass (the commit path never needs it): a command that still met one says so.
    if (isAvhError(error, 'index-locked'))
      return {
        version: null,
        reason: 'index-locked',
        message: `${KEPT} ${blockerMessage('index-locked', 'turn-end')}`,
      };
    const reason = versionFailureReason(error);
    ctx.log.error('turn.version-failed', { turn: turn.id, reason: isAvhError(error) ? error.reason : 'unexpected' });
    // A cause git named (a file it cannot read, a filter that failed: issue 25) is said the way the table words it.
    const named = isAvhError(error) && typeof error.details.file === 'string' ? `${KEPT} ${error.message}` : null;
    return { version: null, reason, message: named ?? FAILURE_COPY[reason] ?? FAILURE_COPY['git-failed'] };
  }
}

export { readSymbolicHead } from '../git/healthProbe';

/**
 * Reconciliation for turns a crashed process left between "completed" and its commit ('pending'): the commit
 * made (found by its `Agent-Turn` trailer on the turn's branch) is recorded, otherwise the turn is marked as having
 * no version with reason 'interrupted'. Only under the lease, so a live endTurn is never settled under its feet.
 */
export async function settlePendingTurns(ctx: RepoContext): Promise<number> {
  const pending = await ctx.store.read((r) => pendingTurns(r));
  if (pending.length === 0) return 0;
  return runIfFree(
    ctx.repo,
    OPERATIONS.reconcile,
    async () => {
      const settled = await ctx.store.read((r) => pendingTurns(r));
      for (const turn of settled) {
        const version = turn.branch ? await findTurnCommit(ctx.repo, `refs/heads/${turn.branch}`, turn.id) : null;
        await ctx.store.transaction((tx) => setTurnVersion(tx, turn.id, version, version ? null : 'interrupted'));
        ctx.log.warn('turn.pending-settled', { turn: turn.id, made: version !== null });
      }
      return settled.length;
    },
    () => 0,
  );
}

/** Ends every still-running turn of a chat as cancelled (the Claude Code hook sends no Stop on interrupt). */
export async function cancelOpenTurnsOfChat(ctx: RepoContext, chatId: string): Promise<string[]> {
  const open = await ctx.store.read((r) => openTurnsOfChat(r, chatId));
  const ended: string[] = [];
  for (const turn of open) {
    try {
      await endTurn(ctx, turn.id, 'cancelled');
      ended.push(turn.id);
    } catch (error) {
      if (!isAvhError(error, 'turn-already-ended')) throw error;
    }
  }
  return ended;
}
