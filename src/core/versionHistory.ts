import type { RepoContext } from './context';
import { GitRepository, resolveRepository } from './git/repository';
import { readRecovery, RecoveryLatch } from './operations/recoveryLatch';
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
import { previewRestore } from './restore/confirmation';
import type { RestoreOptions, RestorePreview, RestoreRequest, RestoreResult } from './restore/restoreRequest';
import { runRestore } from './restore/restoreService';
import { reconcileOperations } from './recovery/reconciliation';
import { secretsInTrackedFiles } from './git/secretExclusion';
import { ignoreInGitignore, includeInVersions } from './secrets/secretChoices';
import type { SecretFinding } from './git/secretScanner';
import type { ConversationTurn } from './chats/turnAnchors';
import { checkpointBeforeCommand, type CheckpointInput, type CheckpointResult } from './turns/commandCheckpoints';
import type { CheckpointStep } from './turns/checkpointSteps';
import {
  beginTurn,
  BeginTurnResult,
  cancelOpenTurnsOfChat,
  endTurn,
  EndTurnResult,
  reEndLatestTurnOfChat,
} from './turns/turnLedger';
import { validateBeginTurn, validateChatId, validateOutcome, validateTurnId } from './turns/validation';
import { type branchNotices, ChatStatus, chatStatus, forgetBranchAnswers } from './chats/chatBranches';
import type { ContinueResult } from './chats/chatContinuation';
import { listVersions, VersionInfo } from './turns/versions';
import { buildVersionsView } from './history/versionsView';
import type { ChangedFile } from './git/versionLog';
import type { VersionsView } from './domain/versionsModel';
import { storeFacts } from './blame/attributionFacts';
import { attributeFile, type FileAttribution } from './blame/lineAttribution';
import { attributionRequest, type AttributeOptions, type OwnedLines, ownedLines } from './blame/blameRequests';
import { openContext, type OpenOptions, type StartupNotice } from './facade/opening';
import {
  type CheckpointInfo,
  checkpointInfoOf,
  checkpointList,
  checkpointCommand,
  restoreBeforeCommand,
  stepsOfEndedTurns,
} from './facade/checkpoints';
import { runningTurnsOfChat, type RunningTurnInfo, type StatusReport, statusReport } from './facade/statusReport';
import {
  changedFiles,
  conversationTurns,
  fileAt,
  knowsTurn,
  promptOf,
  turnAnchor,
  type TurnAnchorInfo,
  turnChangesSoFar,
} from './facade/historyReads';
import { continueChatOnNewBranch, currentBranchNotices, restoreBranchOfChat } from './facade/chatActions';
import { restoreTo, undoChange, undoFile, undoTurn } from './facade/restoreActions';

// The façade's types live with the modules it delegates to (src/core/facade/); callers import them from here.
export type { CheckpointStep } from './turns/checkpointSteps';
export { type OpenOptions, STATE_REBUILT_REASON, type StartupNotice } from './facade/opening';
export type { CheckpointInfo } from './facade/checkpoints';
export type { RunningTurnInfo, StatusReport } from './facade/statusReport';
// What the CLI and the extension use besides the class (they never import the core's internals: the rule
// layers/core-through-facade).
export * from './facade/publicSurface';

/**
 * One repository's Agent Version History: the façade the CLI and the extension share. Inputs from outside
 * (API callers, CLI arguments, hook events) are validated here before they reach the core. Groups of its
 * operations live in src/core/facade/ (opening, status, history reads, undo and restore, checkpoints, chat actions):
 * modules of the façade that take its context.
 */
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
    const { ctx, notices } = await openContext(repo, options);
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
    return runningTurnsOfChat(this.ctx, chatId);
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
    return changedFiles(this.ctx, oid);
  }

  /**
   * A turn's changes so far (Show Changes of a running or stopped turn): its base snapshot and the files where the
   * working tree differs from it now. Read-only: no object is written.
   */
  async turnChangesSoFar(turnId: unknown): Promise<{ base: string; files: ChangedFile[] }> {
    return turnChangesSoFar(this.ctx, turnId);
  }

  /** A file's text as it was in a version (null when the version has no such file). Read-only. */
  async fileAt(oid: string, path: string): Promise<string | null> {
    return fileAt(this.ctx, oid, path);
  }

  async status(): Promise<StatusReport> {
    return statusReport(this.ctx);
  }

  /**
   * Undo a turn (default: the latest not yet undone on the current branch). `only: 'everything'` restores its base
   * snapshot; `only: 'turn'` takes back only the turn's own changes and keeps what landed after it. Unset: today's
   * Undo (everything), refused unconfirmed when later turns or user commits would go with it.
   */
  async undo(turnId?: unknown, options: RestoreOptions & { only?: unknown } = {}): Promise<RestoreResult> {
    return undoTurn(this.ctx, turnId, options);
  }

  /**
   * Undo This File: puts one path the turn changed back to its pre-turn content as a new commit; the rest of the turn
   * stays.
   */
  async undoFile(turnId: unknown, path: unknown, options: RestoreOptions = {}): Promise<RestoreResult> {
    return undoFile(this.ctx, turnId, path, options);
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
    return undoChange(this.ctx, path, line, options);
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
    return restoreTo(this.ctx, target, options);
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
    return checkpointList(this.ctx, turnId);
  }

  /** One checkpoint (no command text), or null when this repository has none with that id (any input). */
  async checkpoint(id: unknown): Promise<CheckpointInfo | null> {
    return checkpointInfoOf(this.ctx, id);
  }

  /**
   * The checkpoints of turns that ended at or after `since` (milliseconds), oldest first, each with the files that
   * were there before its command and are changed or gone at the turn's end (its version, else the working tree
   * now): what the extension's end-of-turn notice tells. Hot turns only.
   */
  async stepsOfEndedTurns(since: number): Promise<CheckpointStep[]> {
    return stepsOfEndedTurns(this.ctx, since);
  }

  /** The command a checkpoint was taken before (shown to the user who asks; never logged). */
  async checkpointCommand(id: string): Promise<string | null> {
    return checkpointCommand(this.ctx, id);
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
    return restoreBeforeCommand(this.ctx, checkpointId, options);
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
    return promptOf(this.ctx, turnId);
  }

  /**
   * A turn and where it sits in its agent's own conversation (issue 32): null anchor when its hook named none.
   * An archived turn counts (its anchor row stays hot: the history archive moves only `turns`), read from the
   * archive only when the hot table lacks it. Read-only.
   */
  async turnAnchor(turnId: unknown): Promise<TurnAnchorInfo> {
    return turnAnchor(this.ctx, turnId);
  }

  /** The newest turns on the current branch (50 at most), for the palette's Continue Chat pick (issue 32). */
  async conversationTurns(): Promise<ConversationTurn[]> {
    return conversationTurns(this.ctx);
  }

  /**
   * Whether this repository recorded the turn (the extension finds a turn's repository after a reload); an archived
   * turn counts (the archive is read only when the hot table lacks the turn).
   */
  async knowsTurn(turnId: string): Promise<boolean> {
    return knowsTurn(this.ctx, turnId);
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
    return continueChatOnNewBranch(this.ctx, chatId);
  }

  /** Recreates a chat's branch deleted locally from the remote that still has it (nothing else changes). */
  async restoreChatBranch(chatId: unknown): Promise<{ branch: string; remote: string; commit: string }> {
    return restoreBranchOfChat(this.ctx, chatId);
  }

  /** Warning entries of the current branch and chats whose branch is gone (the view's branch notices). Read-only. */
  async branchNotices(fresh = false): Promise<Awaited<ReturnType<typeof branchNotices>>> {
    return currentBranchNotices(this.ctx, fresh);
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
