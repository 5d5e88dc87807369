/**
 * The hook fast path's plans (fastHook.ts): what a begin or an end records, decided from the facts and the event's one
 * status under the lease, as the full path would decide it. A plan writes nothing but a dirty begin's base snapshot
 * ref (which fastHook.ts deletes again when its append declines); any doubt declines.
 */
import { insertTurnAnchorStatement, type TurnAnchor } from '../../core/chats/turnAnchors';
import type { GitRepository } from '../../core/git/repository';
import type { GatePassed } from '../../core/operations/operationGate';
import type { JournalStatement } from '../../core/store/journal';
import { DEFAULT_COMPACT_EVERY } from '../../core/store/storeLayout';
import { randomUuid } from '../../core/randomId';
import { failpoint } from '../../core/failpoints';
import { guessBranchTip, type RepositoryHealth } from '../../core/git/healthProbe';
import { commitTreeOf, historyRewritten } from '../../core/git/looseObject';
import { factsFromHealth, turnGate } from '../../core/git/repositoryGate';
import { inspectHealthDirect } from '../../core/git/statusProbe';
import { commitWorkingTree, type WorkingTreeCommitRequest } from '../../core/git/workingTree';
import { baseSnapshotRequest } from '../../core/turns/baseSnapshot';
import { type CheckpointInput, takeCheckpoint } from '../../core/turns/checkpointSnapshot';
import type { HookChatFacts, HookFacts, HookRunningTurn } from '../../core/turns/hookFacts';
import { agentSubject } from '../../core/domain/promptSummary';
import {
  cancellationOrder,
  cleanTreeBase,
  endOfChat,
  unchangedSinceBase,
  versionStateAtEnd,
} from '../../core/turns/turnDecisions';
import {
  insertTurnStatement,
  touchChatStatement,
  turnRunningStatement,
  turnTerminalStatement,
  turnVersionStatement,
} from '../../core/turns/turnRecords';
import { versionCommitRequest } from '../../core/turns/versionCommit';
import { changedSince } from '../../core/turns/workingChanges';
import type { HookEvent } from './hookEvent';
import type { HookResult } from './hookInput';

/** Everything decided before the lease: the event, its repository, the facts and the event's one status. */
export interface Prepared {
  event: HookEvent;
  json: boolean;
  repo: GitRepository;
  facts: HookFacts;
  chatId: string;
  chat: HookChatFacts;
  /**
   * The one status of the event, memoized: the one the entry started (earlyProbe.ts), or one started when first
   * asked for. The gate's probe and every decision of the event (changedSince) read this same output.
   */
  status: () => Promise<string>;
  /** What this event learned for the next one's facts: the tree of the commit now at HEAD. */
  seen: { commitTree?: { commit: string; tree: string } };
}

/** A decline: the caller runs the full path (the reason is for tests and `--verbose`). */
export class Decline {
  constructor(readonly reason: string) {}
}

export function decline(reason: string): never {
  throw new Decline(reason);
}

export interface Planned {
  statements: JournalStatement[];
  result: HookResult;
  /** The chat's facts once the record is applied. */
  chat: HookChatFacts;
  /** The ref made before the append (a begin's base snapshot): deleted again when the append declines. */
  made?: MadeRef;
  /** The turns the record ends, in the order it ends them: each folds its agent's reports once it is acknowledged. */
  ended: readonly HookRunningTurn[];
  /** A completed turn's version, committed once the record (its terminal write) is acknowledged. */
  version?: PlannedVersion;
}

export interface PlannedVersion {
  turnId: string;
  request: WorkingTreeCommitRequest;
}

export interface MadeRef {
  ref: string;
  commit: string;
  /** A checkpoint's saved ignored files, removed with the ref. */
  savedDir?: string | null;
}

/**
 * A begin on the chat's own branch, as beginTurn records it: on a clean tree HEAD is the base (no snapshot commit); on
 * a dirty one the base snapshot is made first, by beginTurn's own request (baseSnapshotRequest), and the one record
 * then holds what beginTurn's two transactions write. The ref is the only thing written before the append: a
 * declined append deletes it again (append()), so a declined event leaves nothing.
 */
export async function planBegin(
  prepared: Prepared,
  prompt: string,
  opened: GatePassed<string | null>,
  anchor?: TurnAnchor,
): Promise<Planned> {
  const { chat, chatId, event, repo } = prepared;
  const { branch, head, health } = onBranchToRecord(opened);
  if (chat.branch !== null && chat.branch !== branch) decline('other-branch');
  const now = Date.now();
  const turnId = randomUuid();
  // The still-running turns end cancelled first, oldest turn number first (cancelOpenTurnsOfChat), then the new
  // turn begins. Whether each changed anything is decided from the status the gate decided on, before the snapshot.
  const cancelled = cancellationOrder(chat.running);
  const seq = chat.maxSeq + 1;
  const ends = await cancelledEnds(prepared, cancelled, now);
  let base = cleanTreeBase(head);
  let made: MadeRef | undefined;
  if (!health.clean) {
    // The notices this may find (secrets excluded, files too large) are beginTurn's too, and the hook's result
    // never carries them (runHook.ts applyHookEvent): the full path prints exactly this result.
    const request = {
      ...baseSnapshotRequest(turnId, chatId, head, health),
      parentTree: await headTreeOf(prepared, head),
    };
    const snapshot = await commitWorkingTree(repo, request);
    if (snapshot.commit !== null) made = { ref: request.ref, commit: snapshot.commit };
    base = { baseHead: head, baseCommit: snapshot.commit ?? head, baseTree: snapshot.tree };
  }
  const statements = [
    ...ends,
    touchChatStatement(chatId, null, event.agent, now),
    insertTurnStatement({ id: turnId, chatId, seq, prompt, agent: event.agent, branch, head, now }),
    turnRunningStatement(turnId, base.baseHead, base.baseCommit, base.baseTree),
    ...(anchor ? [insertTurnAnchorStatement(turnId, event.agent, anchor, now)] : []),
  ];
  const turn: HookRunningTurn = { id: turnId, seq, createdAt: now, subject: agentSubject(prompt), ...base };
  return {
    statements,
    result: { agent: event.agent, event: event.event, action: 'began', turnId, cancelled: cancelled.map((t) => t.id) },
    chat: { branch: chat.branch, maxSeq: seq, running: [turn], notes: 0 },
    made,
    ended: cancelled,
  };
}

/**
 * The newest running turn gets the event's outcome, older ones end cancelled (endOfChat, as the full path). A
 * completed turn whose tree is unchanged since its base (unchangedSinceBase) records 'no-changes' with no version, as
 * endTurn would; any other completed turn gets its version (planVersion). A turn that did not complete records
 * whether it changed anything (cancelledEnds). No recovery is latched here: the facts said so, and the journal is
 * still exactly their state.
 */
export async function planEnd(prepared: Prepared, outcome: 'completed' | 'cancelled' | 'errored'): Promise<Planned> {
  const { repo, chat, event, status } = prepared;
  const { last, older } = endOfChat(chat.running) ?? decline('no-running-turn');
  let version: PlannedVersion | undefined;
  if (outcome === 'completed') {
    // As endTurn's commit: its own probe and turn gate, under the lease.
    const health = await inspectHealthDirect(repo, status());
    const gate = turnGate(factsFromHealth(health), 'retry');
    if (!gate.ok) decline('gate');
    const { branch, head } = onBranchToRecord({ health, branch: gate.branch, head: gate.head });
    if (!health.clean || !unchangedSinceBase(last, head))
      version = await planVersion(prepared, last, branch, head, health);
  }
  const now = Date.now();
  const lastEnd =
    outcome === 'completed'
      ? [turnTerminalStatement(last.id, outcome, versionStateAtEnd(outcome, false), now)]
      : await cancelledEnds(prepared, [last], now, outcome);
  const statements = [
    ...(await cancelledEnds(prepared, older, now)),
    ...lastEnd,
    ...(outcome === 'completed' && !version ? [turnVersionStatement(last.id, null, 'no-changes')] : []),
  ];
  return {
    statements,
    result: {
      agent: event.agent,
      event: event.event,
      action: 'ended',
      turnId: last.id,
      outcome,
      version: null,
      cancelled: older.map((t) => t.id),
    },
    chat: { ...chat, running: [] },
    ended: [...older, last],
    version,
  };
}

/**
 * A checkpoint before the chat's running turn's destructive command (issue 34), as checkpointBeforeCommand takes it:
 * the same sequence (takeCheckpoint) from the status the gate decided on, HEAD's tree from the facts when they know
 * it. Null when there is nothing to record: no running turn (the command is the user's), or nothing the command can
 * destroy. The ref and the saved files are the only things written before the append: a declined append removes
 * them again (fastHook.ts unmake).
 */
export async function planCheckpoint(
  prepared: Prepared,
  found: Omit<CheckpointInput, 'chatId' | 'command'>,
  command: string,
  opened: GatePassed<string | null>,
): Promise<Planned | null> {
  const { chat, chatId, event, repo } = prepared;
  const turn = endOfChat(chat.running)?.last;
  if (!turn) return null;
  const { head, health } = onBranchToRecord(opened);
  const input = { ...found, chatId, command };
  const at = { turnId: turn.id, head, headTree: await headTreeOf(prepared, head), health };
  const taken = await takeCheckpoint(repo, at, input, Date.now());
  if (!taken) return null;
  return {
    statements: [taken.statement],
    result: {
      agent: event.agent,
      event: event.event,
      action: 'checkpoint',
      turnId: turn.id,
      checkpointId: taken.id,
      command: found.label,
      files: taken.savedFiles,
    },
    chat,
    made: { ref: taken.ref, commit: taken.commit, savedDir: taken.savedDir },
    ended: [],
  };
}

/**
 * The version of a completed turn that changed something, as endTurn's commit (commitTurnVersion) makes it: the
 * same request (versionCommitRequest) from the same trees. Declines, with nothing written, whatever that commit
 * would do that the fast path does not: another chat's running turn (its reported writes shape the version), HEAD
 * or the branch moved since the status, no room in the journal for both records.
 */
async function planVersion(
  prepared: Prepared,
  turn: HookRunningTurn,
  branch: string,
  head: string,
  health: Pick<RepositoryHealth, 'listed'>,
): Promise<PlannedVersion> {
  const { repo, facts, chat, chatId } = prepared;
  if (facts.openTurns !== chat.running.length) decline('other-chat-running');
  if (chat.branch !== null && chat.branch !== branch) decline('other-branch');
  // The terminal record and the version record both land before a compaction is due (journalAppend.ts).
  if (facts.journal.lastSeq + 2 - facts.journal.baseSeq >= DEFAULT_COMPACT_EVERY) decline('compaction-due');
  const tip = guessBranchTip(repo.gitDir);
  if (tip?.branch !== branch || tip.head !== head) decline('head-moved');
  const headTree = await headTreeOf(prepared, head);
  const baseCommitTree =
    turn.baseTree === null && turn.baseCommit ? await commitTreeOf(repo, turn.baseCommit) : undefined;
  const request = versionCommitRequest(
    { id: turn.id, chatId, subject: turn.subject, baseTree: turn.baseTree },
    { branch, head, headTree, baseCommitTree },
    [],
    (name) => failpoint(`turn-commit:${name}`),
  );
  // The event's one status listed every changed and new path: the version stages exactly those (issue 36).
  return { turnId: turn.id, request: { ...request, listed: health.listed } };
}

/**
 * The tree of `head`: the facts' when they name that commit (a commit's tree never changes; history rewritten by
 * replace refs or grafts is git's to tell), else read (its loose object, else git). Remembered for the next event.
 */
async function headTreeOf(prepared: Prepared, head: string): Promise<string> {
  const { facts, repo } = prepared;
  const tree =
    facts.commitTree?.commit === head && !historyRewritten(repo)
      ? facts.commitTree.tree
      : await commitTreeOf(repo, head);
  prepared.seen.commitTree = { commit: head, tree };
  return tree;
}

/**
 * The terminal records of turns that end without completing: each records whether it changed anything, decided
 * from the same status and comparison as the full path's end (changedSince).
 */
async function cancelledEnds(
  { repo, status }: Prepared,
  turns: readonly HookRunningTurn[],
  now: number,
  outcome: 'cancelled' | 'errored' = 'cancelled',
): Promise<JournalStatement[]> {
  const ends: JournalStatement[] = [];
  const shared = turns.length > 0 ? status() : undefined;
  for (const t of turns) {
    const changed = t.baseCommit === null ? true : await changedSince(repo, t.baseCommit, shared);
    ends.push(turnTerminalStatement(t.id, outcome, versionStateAtEnd(outcome, false, changed), now));
  }
  return ends;
}

/**
 * Past the turn gate: on a branch with a commit (a first turn makes its `[Base]` commit, a first version the branch's
 * root: the full path's), no nested repository to name (the full path records that it named it), no entry status
 * cannot see (issue 25).
 */
function onBranchToRecord({ health, branch, head }: GatePassed<string | null>): {
  branch: string;
  head: string;
  health: GatePassed<string | null>['health'];
} {
  if (head === null) decline('gate');
  if (health.nestedRepositories.length > 0) decline('nested');
  if (health.hiddenEntries > 0) decline('hidden');
  return { branch, head, health };
}
