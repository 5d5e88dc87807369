import * as vscode from 'vscode';
import { AvhError } from '../core/errors';
import { toPublicError } from '../core/publicError';
import type { TerminalOutcome } from '../core/outcomes';
import type { CheckpointInfo, VersionInfo } from '../core/versionHistory';
import { RepositoryController } from './repositoryController';
import { RepositoryRegistry } from './repositoryRegistry';
import { showSecretNotices } from './secretNotices';
import type { TurnCancelledEvent } from './restoreCommands';
import type { BranchLossUi, ChatContinuedEvent } from './branchLoss';

export interface BeginTurnRequest {
  chatId: string;
  prompt: string;
  agent?: string;
  chatTitle?: string;
  /** The branch a new chat starts from (default: the remote's default branch, else the current branch). */
  baseBranch?: string;
  /** A folder (or file) inside the repository; defaults to the active editor's workspace folder, else the first one. */
  repository?: string;
}

/** What `activate()` returns: the surface agent extensions use (docs/api.md). */
export interface AgentVersionHistoryApi {
  readonly apiVersion: 1;
  beginTurn(request: BeginTurnRequest): Promise<{ turnId: string }>;
  endTurn(
    turnId: string,
    outcome: TerminalOutcome,
  ): Promise<{ turnId: string; outcome: TerminalOutcome; version: string | null }>;
  getVersions(options?: { repository?: string; limit?: number }): Promise<VersionInfo[]>;
  /**
   * Undoes one turn. `only: 'turn'` (default) takes back only the turn's own changes and keeps what landed after it
   * (other chats' turns, the user's commits and edits), as a `[Revert]` version; refused with reason
   * 'revert-conflict' (nothing changed) when that does not apply cleanly. `only: 'everything'` restores the
   * version before the turn, taking the later work away too (it stays in history). With nothing after the turn both
   * are today's Undo. When it would change files another chat wrote after the turn (or may hold that chat's edits:
   * docs/design/two-chats.md) it is refused with reason 'confirmation-required' (`details.otherChats`,
   * `details.files`; nothing changed) until called again with `confirmOtherChats: true`, once the user agreed.
   */
  undoTurn(
    turnId: string,
    options?: { only?: 'turn' | 'everything'; confirmOtherChats?: boolean },
  ): Promise<UndoTurnResult>;
  /**
   * The checkpoints taken just before agents ran destructive commands (issue 34), oldest first; of one turn with
   * `turnId`. No command text (the view shows it).
   */
  getCheckpoints(options?: { repository?: string; turnId?: string }): Promise<CheckpointInfo[]>;
  /**
   * Restore to Before This Command: the checkpoint's working tree as a new `[Restore]` version through the one
   * restore saga (a running turn's work since saved as `[Interrupted]` first), then the ignored files it saved that
   * are missing written back. Refused with reason 'confirmation-required' (nothing changed) when it would undo the
   * user's own commits or change files another chat wrote, until called again with `confirmUserCommits` /
   * `confirmOtherChats: true` once the user agreed; the user's uncommitted edits are refused as for any restore.
   */
  restoreBeforeCommand(
    checkpointId: string,
    options?: { confirmUserCommits?: boolean; confirmOtherChats?: boolean },
  ): Promise<RestoreBeforeCommandResult>;
  readonly onDidChangeVersions: vscode.Event<{ repository: string }>;
  /** Undo ended a still-running turn as cancelled: the agent should stop working on it. */
  readonly onDidCancelTurn: vscode.Event<TurnCancelledEvent>;
  /**
   * A chat whose branch was lost continues on a new branch (the user clicked Continue on a New Branch): old, new and
   * base branch, chat and repository. The chat's resume identity is unchanged; the lost branch's code is not recovered.
   */
  readonly onDidContinueChatOnNewBranch: vscode.Event<ChatContinuedEvent>;
}

export interface UndoTurnResult {
  result: 'restored' | 'no-change';
  /** What was taken back: everything since the turn, or only the turn's own changes. */
  scope: 'everything' | 'turn';
  /** The new `[Restore]` / `[Revert]` commit. */
  version: string | null;
  /** Uncommitted changes (or a cancelled turn's partial work) saved first as an `[Interrupted]` version. */
  preserved: string | null;
}

export interface RestoreBeforeCommandResult {
  result: 'restored' | 'no-change';
  /** The new `[Restore]` commit (null when the files already matched). */
  version: string | null;
  /** A running or stopped turn's work (or uncommitted changes) saved first as an `[Interrupted]` version. */
  preserved: string | null;
  /** Ignored files the checkpoint saved that were missing and are written back. */
  broughtBack: number;
}

export function createApi(
  registry: RepositoryRegistry,
  onDidCancelTurn: vscode.Event<TurnCancelledEvent>,
  branchLoss: BranchLossUi,
): AgentVersionHistoryApi {
  const owners = new Map<string, RepositoryController>();

  const controllerFor = async (repository: unknown, action = false): Promise<RepositoryController> => {
    if (repository !== undefined && (typeof repository !== 'string' || repository.length === 0))
      throw new AvhError('invalid-input', 'repository must be a folder path.');
    // Beginning a turn in a folder without git offers to Enable Version History (issue 13).
    if (action) return registry.forAction(repository);
    return repository === undefined ? registry.defaultController() : registry.forPath(repository);
  };

  const api: AgentVersionHistoryApi = {
    apiVersion: 1,
    async beginTurn(request) {
      if (typeof request !== 'object' || request === null)
        throw new AvhError(
          'invalid-input',
          'beginTurn expects an object { chatId, prompt, agent?, chatTitle?, baseBranch?, repository? }.',
        );
      const { repository, ...input } = request;
      const controller = await controllerFor(repository, true);
      let begun;
      try {
        begun = await controller.history.beginTurn(input);
      } catch (error) {
        // An agent resuming a chat whose branch is gone: the user is told (with the one action that helps); the agent
        // gets the error.
        branchLoss.offer(controller, error);
        throw error;
      }
      const { turnId, excluded, notice } = begun;
      owners.set(turnId, controller);
      showSecretNotices(controller, excluded);
      // Nested repositories, large files: once each.
      if (notice) void vscode.window.showInformationMessage(`Agent Version History: ${notice}`);
      return { turnId };
    },
    async endTurn(turnId, outcome) {
      let controller = typeof turnId === 'string' ? owners.get(turnId) : undefined;
      if (!controller) controller = await findOwner(registry, turnId);
      const result = await controller.history.endTurn(turnId, outcome);
      owners.delete(turnId);
      controller.notifyChanged();
      if (result.message) void vscode.window.showWarningMessage(`Agent Version History: ${result.message}`);
      showSecretNotices(controller, result.excluded);
      if (result.notice) void vscode.window.showInformationMessage(`Agent Version History: ${result.notice}`);
      return { turnId: result.turnId, outcome: result.outcome, version: result.version };
    },
    async getVersions(options = {}) {
      const limit = options.limit ?? 100;
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
        throw new AvhError('invalid-input', 'limit must be a whole number from 1 to 10000.');
      const controller = await controllerFor(options.repository);
      return controller.history.getVersions(limit);
    },
    async undoTurn(turnId, options = {}) {
      if (typeof options !== 'object' || options === null)
        throw new AvhError(
          'invalid-input',
          "undoTurn expects options { only?: 'turn' | 'everything', confirmOtherChats?: boolean }.",
        );
      const confirmOtherChats = options.confirmOtherChats ?? false;
      if (typeof confirmOtherChats !== 'boolean')
        throw new AvhError('invalid-input', 'confirmOtherChats must be true or false.');
      const only = options.only ?? 'turn';
      const controller =
        typeof turnId === 'string'
          ? (owners.get(turnId) ?? (await findOwner(registry, turnId)))
          : await registry.defaultController();
      // The caller chose explicitly: 'everything' confirms taking later turns and commits away.
      const r = await controller.history.undo(turnId, {
        only,
        confirmUserCommits: only === 'everything',
        confirmOtherChats,
      });
      controller.notifyChanged();
      if (r.result !== 'restored' && r.result !== 'no-change')
        throw new AvhError('invalid-input', 'There is no agent turn to undo.');
      return {
        result: r.result,
        scope: r.scope === 'turn' ? 'turn' : 'everything',
        version: r.restoreCommit ?? null,
        preserved: r.preserved ?? null,
      };
    },
    async getCheckpoints(options = {}) {
      if (typeof options !== 'object' || options === null)
        throw new AvhError('invalid-input', 'getCheckpoints expects options { repository?, turnId? }.');
      const controller = await controllerFor(options.repository);
      return controller.history.checkpoints(options.turnId);
    },
    async restoreBeforeCommand(checkpointId, options = {}) {
      if (typeof options !== 'object' || options === null)
        throw new AvhError(
          'invalid-input',
          'restoreBeforeCommand expects options { confirmUserCommits?: boolean, confirmOtherChats?: boolean }.',
        );
      const { confirmUserCommits = false, confirmOtherChats = false } = options;
      if (typeof confirmUserCommits !== 'boolean' || typeof confirmOtherChats !== 'boolean')
        throw new AvhError('invalid-input', 'confirmUserCommits and confirmOtherChats must be true or false.');
      const controller = await checkpointOwner(registry, checkpointId);
      const r = await controller.history.restoreBeforeCommand(checkpointId, { confirmUserCommits, confirmOtherChats });
      controller.notifyChanged();
      if (r.result !== 'restored' && r.result !== 'no-change')
        throw new AvhError('invalid-input', 'Nothing was restored.');
      return {
        result: r.result,
        version: r.restoreCommit ?? null,
        preserved: r.preserved ?? null,
        broughtBack: r.broughtBack,
      };
    },
    onDidChangeVersions: registry.onDidChange,
    onDidCancelTurn,
    onDidContinueChatOnNewBranch: branchLoss.onDidContinueOnNewBranch,
  };
  return {
    ...api,
    beginTurn: (request) => api.beginTurn(request).catch(rejectPublic),
    endTurn: (turnId, outcome) => api.endTurn(turnId, outcome).catch(rejectPublic),
    getVersions: (options) => api.getVersions(options).catch(rejectPublic),
    undoTurn: (turnId, options) => api.undoTurn(turnId, options).catch(rejectPublic),
    getCheckpoints: (options) => api.getCheckpoints(options).catch(rejectPublic),
    restoreBeforeCommand: (checkpointId, options) =>
      api.restoreBeforeCommand(checkpointId, options).catch(rejectPublic),
  };
}

/** Callers get the reason and our message only; git's raw output stays inside (it can name files and remotes). */
function rejectPublic(error: unknown): never {
  throw toPublicError(error);
}

/** The open repository whose store has the checkpoint; else the default one (which refuses the id clearly). */
async function checkpointOwner(registry: RepositoryRegistry, checkpointId: unknown): Promise<RepositoryController> {
  for (const controller of await registry.all()) {
    if (await controller.history.checkpoint(checkpointId)) return controller;
  }
  return registry.defaultController();
}

/** A turn begun before a reload (or by the CLI) is found in whichever open repository knows it. */
async function findOwner(registry: RepositoryRegistry, turnId: unknown): Promise<RepositoryController> {
  const fallback = await registry.defaultController();
  if (typeof turnId !== 'string') return fallback;
  for (const controller of await registry.all()) {
    if (await controller.history.knowsTurn(turnId)) return controller;
  }
  return fallback;
}
