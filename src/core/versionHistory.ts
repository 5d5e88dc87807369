import type { RepoContext } from './context';
import { AvhError } from './errors';
import { inspectRepositoryHealth, readSymbolicHead, RepositoryHealth } from './git/healthProbe';
import { GitRepository, resolveRepository } from './git/repository';
import { EventLog, silentLog } from './log';
import { readRecovery, RecoveryLatch, setRecovery } from './operations/recoveryLatch';
import {
  AcceptOptions,
  acceptCurrentVersion,
  checkRepository,
  RecoveryAssessment,
  RecoverySettlement,
  saveAndAcceptCurrentVersion,
} from './recovery/recoveryActions';
import { findStaleGitLocks, removeStaleGitLocks, StaleGitLock } from './recovery/staleLocks';
import { recordHookFacts } from './turns/hookFacts';
import { dropHandedNotes } from './chats/chatNotes';
import {
  historyCounts,
  HistoryCounts,
  turnOfVersion,
  UndoableTurn,
  undoableTurnsWithChats,
} from './restore/historyCounts';
import { inFlightOperation } from './operations/operationRecords';
import { previewRestore } from './restore/confirmation';
import type { RestoreOptions, RestorePreview, RestoreRequest, RestoreResult } from './restore/restoreRequest';
import { runRestore } from './restore/restoreService';
import { reconcileOperations, settleUnderLease } from './recovery/reconciliation';
import { DurableStore } from './store/durableStore';
import type { StoreReader } from './store/readOnlyGuard';
import { secretsInTrackedFiles } from './git/secretExclusion';
import { attachSecretChoices, ignoreInGitignore, includeInVersions } from './secrets/secretChoices';
import type { SecretFinding } from './git/secretScanner';
import { archivedCounts } from './store/archive';
import { rebuildFromTrailers } from './turns/rebuildFromTrailers';
import { countTurns, getTurn, openTurns } from './turns/turnRecords';
import { type ConversationTurn, conversationTurnsOf, type StoredTurnAnchor, turnAnchorOf } from './chats/turnAnchors';
import {
  bringBackSavedFiles,
  checkpointBeforeCommand,
  checkpointById,
  type CheckpointInput,
  type CheckpointRow,
  type CheckpointResult,
  checkpointsOf,
} from './turns/commandCheckpoints';
import { type CheckpointStep, checkpointSteps } from './turns/checkpointSteps';
export type { CheckpointStep } from './turns/checkpointSteps';
import {
  beginTurn,
  BeginTurnResult,
  cancelOpenTurnsOfChat,
  endTurn,
  EndTurnResult,
  reEndLatestTurnOfChat,
  settlePendingTurns,
} from './turns/turnLedger';
import { validateBeginTurn, validateChatId, validateOutcome, validateTurnId } from './turns/validation';
import { workingChanges } from './turns/workingChanges';
import { branchNotices, ChatStatus, chatStatus, forgetBranchAnswers, restoreChatBranch } from './chats/chatBranches';
import { continueOnNewBranch, ContinueResult, settleChatContinuations } from './chats/chatContinuation';
import { listVersions, VersionInfo } from './turns/versions';
import { buildVersionsView } from './history/versionsView';
import { ChangedFile, changedFilesOf, readBlobAt } from './git/versionLog';
import type { VersionsView } from './domain/versionsModel';
import { FULL_OID } from './git/objectId';
import { storeFacts } from './blame/attributionFacts';
import { attributeFile, type FileAttribution } from './blame/lineAttribution';
import {
  attributionRequest,
  type AttributeOptions,
  changeRequest,
  type OwnedLines,
  ownedLines,
  turnAtLine,
} from './blame/blameRequests';

export interface OpenOptions {
  log?: EventLog;
  /** How long turns and restores wait for another process's repository lease (default 10 s). */
  leaseWaitMs?: number;
}

/** Something the user must be told once after opening (the CLI prints it; the extension shows a warning). */
export interface StartupNotice {
  kind: 'state-rebuilt';
  message: string;
  movedTo: string;
  turnsRecovered: number;
}

export interface RunningTurnInfo {
  turnId: string;
  chatId: string;
  agent: string | null;
  startedAt: number;
}

export interface StatusReport {
  root: string;
  /** Without the paths the status listed (internal to snapshots; thousands in a big repository, never reported). */
  health: Omit<RepositoryHealth, 'listed'>;
  runningTurns: RunningTurnInfo[];
  counts: { turns: number; runningTurns: number };
  recovery: RecoveryLatch | null;
  /** A restore in flight (in this or another process), if any. */
  operation: { id: string; kind: string; phase: string } | null;
}

/**
 * Recovery latch reason after a damaged state file was rebuilt: what it held (a latch, a restore in flight) is unknown.
 */
export const STATE_REBUILT_REASON = 'state-rebuilt';

/**
 * One repository's Agent Version History: the façade the CLI and the extension share. Inputs from outside
 * (API callers, CLI arguments, hook events) are validated here before they reach the core.
 */
/** A checkpoint taken before a destructive command of an agent (no command text: checkpointCommand reads it). */
export interface CheckpointInfo {
  id: string;
  turnId: string;
  chatId: string;
  label: string;
  commit: string;
  savedFiles: number;
  createdAt: number;
}

/** A checkpoint's id: a UUID as commandCheckpoints.ts makes them. */
const CHECKPOINT_ID = /^[0-9a-f-]{36}$/;

function checkpointInfo(c: CheckpointRow): CheckpointInfo {
  return {
    id: c.id,
    turnId: c.turn_id,
    chatId: c.chat_id,
    label: c.label,
    commit: c.commit_oid,
    savedFiles: c.saved_files,
    createdAt: c.created_at,
  };
}

export class VersionHistory {
  private constructor(
    private readonly ctx: RepoContext,
    readonly notices: readonly StartupNotice[],
  ) {}

  static async open(folder: string, options: OpenOptions = {}): Promise<VersionHistory> {
    const repo = await resolveRepository(folder);
    return VersionHistory.openRepository(repo, options);
  }

  static async openRepository(repo: GitRepository, options: OpenOptions = {}): Promise<VersionHistory> {
    const log = options.log ?? silentLog;
    const { store, quarantined } = await DurableStore.open(repo.stateDir);
    const ctx: RepoContext = { repo, store, log, leaseWaitMs: options.leaseWaitMs ?? 10_000, settle: settleUnderLease };
    attachSecretChoices(ctx);
    const notices: StartupNotice[] = [];
    if (quarantined) {
      const turnsRecovered = await rebuildFromTrailers(ctx);
      // Fail closed: the damaged file may have held a recovery latch or a restore in flight, and the rebuilt
      // store cannot know. The repository is checked (recover check / Use current version) before any restore.
      await store.transaction((tx) => setRecovery(tx, null, STATE_REBUILT_REASON, null, Date.now()));
      log.warn('store.quarantined', { reason: quarantined.reason, turnsRecovered });
      notices.push({
        kind: 'state-rebuilt',
        movedTo: quarantined.movedTo,
        turnsRecovered,
        message:
          `Agent Version History found its state file damaged, moved it aside (${quarantined.movedTo}) and ` +
          `rebuilt ${turnsRecovered} turn(s) from commit trailers. Check the repository before restoring (Use ` +
          `current version, or \`agent-versions recover check\`).`,
      });
    }
    // Every open (each CLI command, each activation) settles a restore that a crashed process left unfinished.
    await reconcileOperations(ctx);
    // ...and a turn a crashed process left between "completed" and its commit.
    await settlePendingTurns(ctx);
    // ...and a chat continuation a crashed process left between its new branch and the chat's update.
    await settleChatContinuations(ctx);
    return new VersionHistory(ctx, notices);
  }

  get repository(): GitRepository {
    return this.ctx.repo;
  }

  /**
   * Begins a turn (input validated): persists it and captures the base snapshot. `handNotes` (a prompt hook): the
   * chat's notes are handed to the turn in the same write; drop them with dropHandedNotes once printed.
   */
  async beginTurn(input: unknown, options: { handNotes?: boolean } = {}): Promise<BeginTurnResult> {
    const valid = validateBeginTurn(input);
    return beginTurn(this.ctx, valid, options);
  }

  /** The notes handed to `turnId` were printed to its agent: they are gone (chats/chatNotes.ts). */
  dropHandedNotes(turnId: string): Promise<void> {
    return this.ctx.store.transaction((tx) => dropHandedNotes(tx, turnId));
  }

  /** Ends a turn with its outcome (input validated). */
  async endTurn(turnId: unknown, outcome: unknown): Promise<EndTurnResult> {
    return endTurn(this.ctx, validateTurnId(turnId), validateOutcome(outcome));
  }

  /**
   * An end event that found no running turn of the chat: re-ends the chat's latest turn when the rule allows it (an
   * error right after a cancel of the same turn, nothing else since: turnDecisions.ts reEnds); null otherwise, and
   * nothing changes then.
   */
  reEndLatestTurnOfChat(chatId: string, outcome: unknown): Promise<EndTurnResult | null> {
    return reEndLatestTurnOfChat(this.ctx, validateChatId(chatId), validateOutcome(outcome));
  }

  /** Ends every running turn of the chat as cancelled; returns their ids. */
  cancelRunningTurnsOfChat(chatId: string): Promise<string[]> {
    return cancelOpenTurnsOfChat(this.ctx, chatId);
  }

  runningTurnsOfChat(chatId: string): Promise<RunningTurnInfo[]> {
    return this.ctx.store.read((r) =>
      openTurns(r)
        .filter((t) => t.chat_id === chatId)
        .map(toRunningInfo),
    );
  }

  getVersions(limit = 100, skip = 0): Promise<VersionInfo[]> {
    return listVersions(this.ctx, limit, skip);
  }

  /**
   * The Version History view's model: the first `limit` versions of the branch joined with their turns (one git
   * process).
   */
  versionsView(limit: number): Promise<VersionsView> {
    return buildVersionsView(this.ctx, limit);
  }

  /** Files a version changed against its first parent. Read-only. */
  async changedFiles(oid: string): Promise<{ parent: string | null; files: ChangedFile[] }> {
    assertFullOid(oid);
    return changedFilesOf(this.ctx.repo.root, oid);
  }

  /**
   * A turn's changes so far (Show Changes of a running or stopped turn): its base snapshot and the files where the
   * working tree differs from it now. Read-only: no object is written.
   */
  async turnChangesSoFar(turnId: unknown): Promise<{ base: string; files: ChangedFile[] }> {
    const id = validateTurnId(turnId);
    const turn = await this.ctx.store.read((r) => getTurn(r, id));
    if (!turn) throw new AvhError('turn-unknown', 'No turn with this id exists in this repository.');
    if (!turn.base_commit)
      throw new AvhError('invalid-input', 'This turn has no base snapshot (it stopped before it started).');
    const { changes } = await workingChanges(this.ctx.repo, [turn.base_commit]);
    return { base: turn.base_commit, files: changes.get(turn.base_commit) ?? [] };
  }

  /** A file's text as it was in a version (null when the version has no such file). Read-only. */
  async fileAt(oid: string, path: string): Promise<string | null> {
    assertFullOid(oid);
    return readBlobAt(this.ctx.repo.root, oid, path);
  }

  async status(): Promise<StatusReport> {
    const [health, state] = await Promise.all([
      inspectRepositoryHealth(this.ctx.repo),
      this.ctx.store.read((r) => ({
        running: openTurns(r),
        counts: countTurns(r),
        archived: archivedCounts(r).rows,
        recovery: readRecovery(r),
        operation: inFlightOperation(r),
      })),
    ]);
    const { listed: _listed, ...shown } = health;
    return {
      root: this.ctx.repo.root,
      health: shown,
      runningTurns: state.running.map(toRunningInfo),
      counts: { turns: state.counts.total + state.archived, runningTurns: state.counts.open },
      recovery: state.recovery,
      operation: state.operation
        ? { id: state.operation.id, kind: state.operation.kind, phase: state.operation.phase }
        : null,
    };
  }

  /**
   * Undo a turn (default: the latest not yet undone on the current branch). `only: 'everything'` restores its base
   * snapshot; `only: 'turn'` takes back only the turn's own changes and keeps what landed after it. Unset: today's
   * Undo (everything), refused unconfirmed when later turns or user commits would go with it.
   */
  async undo(turnId?: unknown, options: RestoreOptions & { only?: unknown } = {}): Promise<RestoreResult> {
    const { only, ...rest } = options;
    if (only !== undefined && only !== 'turn' && only !== 'everything')
      throw new AvhError('invalid-input', "only must be 'turn' or 'everything'.");
    return runRestore(
      this.ctx,
      { kind: 'undo', ...(turnId === undefined ? {} : { turnId: validateTurnId(turnId) }), ...(only ? { only } : {}) },
      rest,
    );
  }

  /**
   * Undo This File: puts one path the turn changed back to its pre-turn content as a new commit; the rest of the turn
   * stays.
   */
  async undoFile(turnId: unknown, path: unknown, options: RestoreOptions = {}): Promise<RestoreResult> {
    if (typeof path !== 'string' || path.length === 0)
      throw new AvhError('invalid-input', 'Undo This File needs the path of a file the turn changed.');
    return runRestore(this.ctx, { kind: 'undo', turnId: validateTurnId(turnId), path }, options);
  }

  /**
   * Undo This Change (issue 26): takes back the one hunk of a turn that holds `line` of `path` (the file as saved;
   * absolute or repository-relative) as a `[Revert]` commit, keeping everything else; refused, naming the lines, when
   * later work changed the same lines. `turnId`: the turn the caller saw on that line (else the line's turn now).
   */
  async undoChange(
    path: unknown,
    line: unknown,
    options: RestoreOptions & { turnId?: unknown } = {},
  ): Promise<RestoreResult> {
    const { turnId, ...rest } = options;
    const change = changeRequest(this.ctx.repo, path, line);
    const turn =
      turnId === undefined
        ? await turnAtLine(this.ctx.repo, this.ctx.store, change.path, change.line)
        : validateTurnId(turnId);
    return runRestore(this.ctx, { kind: 'undo', turnId: turn, change }, rest);
  }

  /**
   * Which turn wrote each line of a file (issue 26): as of `rev`, else the working tree copy (or `contents`, an
   * editor's unsaved text). Read-only: never touches refs, the index or the working tree.
   */
  attributeFile(path: unknown, options: AttributeOptions = {}): Promise<FileAttribution> {
    return attributeFile({
      repo: this.ctx.repo,
      facts: storeFacts(this.ctx.store),
      ...attributionRequest(path, options),
    });
  }

  /** The lines a turn still owns in the working tree, per file (the Version History row's action). Read-only. */
  linesOwnedBy(turnId: unknown): Promise<OwnedLines> {
    return ownedLines(this.ctx.repo, this.ctx.store, validateTurnId(turnId));
  }

  /** The turn whose version commit is `oid` (Undo This File from the turn's diff), or null. */
  turnOfVersion(oid: string): Promise<string | null> {
    return this.ctx.store.read((r) => turnOfVersion(r, oid), { history: true });
  }

  /**
   * Turns of this branch that Undo can still take back, newest first, with their chat's title and agent (for the chat
   * picker).
   */
  undoableTurns(): Promise<UndoableTurn[]> {
    return undoableTurnsWithChats(this.ctx);
  }

  /** Redo the last undo, while nothing new happened since. */
  async redo(options: RestoreOptions = {}): Promise<RestoreResult> {
    return runRestore(this.ctx, { kind: 'redo' }, options);
  }

  /** Restore the working tree to a chosen commit, as a new `[Restore]` commit. */
  async restore(target: unknown, options: RestoreOptions = {}): Promise<RestoreResult> {
    if (typeof target !== 'string' || target.length === 0)
      throw new AvhError('invalid-input', 'restore needs a commit id.');
    return runRestore(this.ctx, { kind: 'restore', target }, options);
  }

  /**
   * A checkpoint just before the chat's running turn runs a destructive command (issue 34): null when the chat has
   * no running turn. The command text is kept with the turn like its prompt.
   */
  checkpointBeforeCommand(input: CheckpointInput): Promise<CheckpointResult | null> {
    return checkpointBeforeCommand(this.ctx, input);
  }

  /** The checkpoints taken before commands, of one turn or of all, oldest first (no command text). */
  async checkpoints(turnId?: unknown): Promise<CheckpointInfo[]> {
    const id = turnId === undefined ? undefined : validateTurnId(turnId);
    const rows = await this.ctx.store.read((r) => checkpointsOf(r, id));
    return rows.map(checkpointInfo);
  }

  /** One checkpoint (no command text), or null when this repository has none with that id (any input). */
  async checkpoint(id: unknown): Promise<CheckpointInfo | null> {
    if (typeof id !== 'string' || !CHECKPOINT_ID.test(id)) return null;
    const c = await this.ctx.store.read((r) => checkpointById(r, id));
    return c ? checkpointInfo(c) : null;
  }

  /**
   * The checkpoints of turns that ended at or after `since` (milliseconds), oldest first, each with the files that
   * were there before its command and are changed or gone at the turn's end (its version, else the working tree
   * now): what the extension's end-of-turn notice tells. Hot turns only.
   */
  async stepsOfEndedTurns(since: number): Promise<CheckpointStep[]> {
    const ended = await this.ctx.store.read((r) =>
      r.all<{ id: string; version_commit: string | null }>(
        `SELECT DISTINCT t.id, t.version_commit FROM turns t JOIN command_checkpoints c ON c.turn_id = t.id
         WHERE t.ended_at IS NOT NULL AND t.ended_at >= ?`,
        [since],
      ),
    );
    const steps = await checkpointSteps(
      this.ctx,
      ended.map((t) => ({ turnId: t.id, end: t.version_commit })),
    );
    return [...steps.values()].flat().sort((a, b) => a.createdAt - b.createdAt);
  }

  /** The command a checkpoint was taken before (shown to the user who asks; never logged). */
  async checkpointCommand(id: string): Promise<string | null> {
    return (await this.ctx.store.read((r) => checkpointById(r, id)))?.command ?? null;
  }

  /**
   * Restore to Before This Command: the checkpoint's snapshot restored through the one saga (a `[Restore]` commit;
   * a running turn's work since is saved as `[Interrupted]` first), then its saved ignored files that are missing
   * are written back.
   */
  async restoreBeforeCommand(
    checkpointId: unknown,
    options: RestoreOptions = {},
  ): Promise<RestoreResult & { broughtBack: number }> {
    if (typeof checkpointId !== 'string' || !CHECKPOINT_ID.test(checkpointId))
      throw new AvhError('invalid-input', 'A checkpoint id is 36 characters (agent-versions checkpoints lists them).');
    const row = await this.ctx.store.read((r) => checkpointById(r, checkpointId));
    if (!row) throw new AvhError('invalid-input', 'No checkpoint with this id exists in this repository.');
    const result = await runRestore(this.ctx, { kind: 'restore', target: row.commit_oid }, options);
    const broughtBack =
      result.result === 'restored' || result.result === 'no-change'
        ? bringBackSavedFiles(this.ctx.repo.stateDir, this.ctx.repo.root, row.id).length
        : 0;
    if (broughtBack > 0) this.ctx.log.info('restore.checkpoint-files', { checkpoint: row.id, files: broughtBack });
    return { ...result, broughtBack };
  }

  /** What a restore would do (user commits it would undo), without doing it. */
  async preview(request: RestoreRequest): Promise<RestorePreview> {
    return previewRestore(this.ctx, request);
  }

  /** Settle an unfinished restore left by a crashed process (also run on every open). */
  reconcile(): Promise<boolean> {
    return reconcileOperations(this.ctx);
  }

  /** The stored prompt of a turn, for "Copy prompt" after an Undo (never logged). */
  async promptOf(turnId: string): Promise<string | null> {
    return this.ctx.store.read(
      (r) => r.get<{ prompt: string }>('SELECT prompt FROM turns WHERE id = ?', [turnId])?.prompt ?? null,
    );
  }

  /**
   * A turn and where it sits in its agent's own conversation (issue 32): null anchor when its hook named none.
   * An archived turn counts (its anchor row stays hot: the history archive moves only `turns`), read from the
   * archive only when the hot table lacks it. Read-only.
   */
  async turnAnchor(
    turnId: unknown,
  ): Promise<{ turnId: string; agent: string | null; chatId: string; anchor: StoredTurnAnchor | null }> {
    const id = validateTurnId(turnId);
    const read = (r: StoreReader) => {
      const turn = getTurn(r, id);
      return turn ? { turnId: id, agent: turn.agent, chatId: turn.chat_id, anchor: turnAnchorOf(r, id) } : null;
    };
    const found = (await this.ctx.store.read(read)) ?? (await this.ctx.store.read(read, { history: true }));
    if (!found) throw new AvhError('turn-unknown', 'No turn with this id exists in this repository.');
    return found;
  }

  /** The newest turns on the current branch (50 at most), for the palette's Continue Chat pick (issue 32). */
  async conversationTurns(): Promise<ConversationTurn[]> {
    const ref = readSymbolicHead(this.ctx.repo.gitDir);
    if (!ref) return [];
    const branch = ref.slice('refs/heads/'.length);
    return this.ctx.store.read((r) => conversationTurnsOf(r, branch, 50));
  }

  /**
   * Whether this repository recorded the turn (the extension finds a turn's repository after a reload); an archived
   * turn counts (the archive is read only when the hot table lacks the turn).
   */
  async knowsTurn(turnId: string): Promise<boolean> {
    const known = (r: StoreReader) => getTurn(r, turnId) !== undefined;
    return (await this.ctx.store.read(known)) || this.ctx.store.read(known, { history: true });
  }

  /** `undo:N redo:M` for the status bar. */
  historyCounts(): Promise<HistoryCounts> {
    return historyCounts(this.ctx);
  }

  /**
   * "Include in Versions" for a file left out as a likely secret: remembered for the path; the next version takes it.
   */
  includeSecretFile(relPath: unknown): Promise<void> {
    return includeInVersions(this.ctx, relPath);
  }

  /** "Add to .gitignore" for a file left out as a likely secret. */
  gitignoreSecretFile(relPath: unknown): Promise<void> {
    return ignoreInGitignore(this.ctx, relPath);
  }

  /** Secret rule matches among tracked files (never excluded; for `doctor` to report). */
  secretsInTrackedFiles(): Promise<SecretFinding[]> {
    return secretsInTrackedFiles(this.ctx.repo);
  }

  /**
   * `chat status`: the chat's branch classified now (ok, on-remote, lost, unknown with its reason) and its warning
   * entries.
   */
  chatStatus(chatId: unknown): Promise<ChatStatus> {
    return chatStatus(this.ctx, validateChatId(chatId));
  }

  /**
   * Continue on a New Branch (docs/design/branch-loss.md): only when the chat's branch is confirmed lost; idempotent.
   */
  async continueChatOnNewBranch(chatId: unknown): Promise<ContinueResult> {
    const result = await continueOnNewBranch(this.ctx, validateChatId(chatId));
    forgetBranchAnswers(this.ctx);
    return result;
  }

  /** Recreates a chat's branch deleted locally from the remote that still has it (nothing else changes). */
  async restoreChatBranch(chatId: unknown): Promise<{ branch: string; remote: string; commit: string }> {
    const result = await restoreChatBranch(this.ctx, validateChatId(chatId));
    forgetBranchAnswers(this.ctx);
    return result;
  }

  /** Warning entries of the current branch and chats whose branch is gone (the view's branch notices). Read-only. */
  async branchNotices(fresh = false): Promise<Awaited<ReturnType<typeof branchNotices>>> {
    const ref = readSymbolicHead(this.ctx.repo.gitDir);
    return branchNotices(this.ctx, ref ? ref.slice('refs/heads/'.length) : null, { fresh });
  }

  /** Asks the remotes again on the next view refresh (Try again). */
  forgetBranchAnswers(): void {
    forgetBranchAnswers(this.ctx);
  }

  /** The recovery latch while recovery is required, else null (the durable truth the UI follows). Read-only. */
  recoveryLatch(): Promise<RecoveryLatch | null> {
    return this.ctx.store.read((r) => readRecovery(r));
  }

  /** Recovery's read-only check of the repository (`recover check`, the notice's assessment). Changes nothing. */
  checkRepository(): Promise<RecoveryAssessment> {
    return checkRepository(this.ctx);
  }

  /** Use current version: clears recovery when the repository checks healthy; never changes git. */
  acceptCurrentVersion(options?: AcceptOptions): Promise<RecoverySettlement> {
    return acceptCurrentVersion(this.ctx, options);
  }

  /** Save changes & use current version: commits a dirty tree as `[Recovery]`, then clears recovery. */
  saveAndAcceptCurrentVersion(options?: AcceptOptions): Promise<RecoverySettlement> {
    return saveAndAcceptCurrentVersion(this.ctx, options);
  }

  /** Git locks a killed restore of ours left behind (older than it, nothing of ours running). Read-only. */
  findStaleGitLocks(): Promise<StaleGitLock[]> {
    return findStaleGitLocks(this.ctx);
  }

  /** Remove Stale Lock: removes exactly those stale locks (re-checked under the lease; `expected` if given). */
  removeStaleGitLocks(expected?: readonly string[]): Promise<StaleGitLock[]> {
    return removeStaleGitLocks(this.ctx, expected);
  }

  /** Writes the hook fast path's facts file for these chats (after the full path recorded an event). */
  recordHookFacts(chatIds: readonly string[]): Promise<void> {
    return recordHookFacts(this.ctx, chatIds);
  }

  close(): Promise<void> {
    return this.ctx.store.close();
  }
}

function assertFullOid(oid: string): void {
  if (!FULL_OID.test(oid)) throw new AvhError('invalid-input', 'A version is named by its full commit id.');
}

function toRunningInfo(t: { id: string; chat_id: string; agent: string | null; created_at: number }): RunningTurnInfo {
  return { turnId: t.id, chatId: t.chat_id, agent: t.agent, startedAt: t.created_at };
}
