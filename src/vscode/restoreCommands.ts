import * as vscode from 'vscode';
import { AvhError, isAvhError, safeMessage } from '../core/errors';
import type { EventLog } from '../core/log';
import type { BranchLossUi } from './branchLoss';
import type { RepositoryController } from './repositoryController';
import type { RepositoryRegistry } from './repositoryRegistry';
import { RECOVERY_COPY, removeShownStaleLocks } from './recoverySession';
import { UNDO_FILE_COMMAND } from './versionChanges';
import { CONTINUE_CHAT, type ChatForkUi } from './chatForkCommands';
import { pickChatTurn, pickVersion, turnFileRequest } from './restorePicks';
import {
  anyLaterWork,
  ConfirmationRequired,
  describeLaterWork,
  keptUndoResult,
  otherChatsRefusal,
  type RestorePreview,
  type RestoreRequest,
  type RestoreResult,
  revertConflictStatement,
  type UndoOnly,
} from '../core/versionHistory';

export interface TurnCancelledEvent {
  turnId: string;
  chatId: string;
  repository: string;
}

/** How often the modal is shown again when the plan keeps changing before the run (then the refusal is shown). */
const MAX_CONFIRMATIONS = 3;

export type RestoreTitle =
  | 'Undo Agent Turn'
  | 'Redo Agent Turn'
  | 'Restore Version'
  | 'Undo This File'
  | 'Undo This Change'
  | 'Undo Only This Turn'
  | 'Restore to Before This Command';

/**
 * Restore to Before This Command (issue 34): a Restore of the checkpoint's commit through the one saga, then the
 * ignored files it saved that are missing are written back (VersionHistory.restoreBeforeCommand). Its preview and
 * confirmations are a Restore's of that commit.
 */
export interface BeforeCommandRequest {
  kind: 'beforeCommand';
  checkpointId: string;
  commit: string;
  /** What was recognised, content-free (`git reset --hard`): the result message names it. */
  label: string;
}

/** What the runner runs: every restore of the core, and Restore to Before This Command. */
export type RunnerRequest = RestoreRequest | BeforeCommandRequest;
type RunResult = RestoreResult & { broughtBack?: number };

/**
 * The two ways to undo a turn after which other work landed (wording of docs/design/undo-only-this-turn.md; also the
 * buttons).
 */
export const UNDO_ONLY_TURN = 'Undo Only This Turn';
export const RESTORE_EVERYTHING = 'Restore Everything to Before This Turn';

/**
 * The one path every Undo, Redo and Restore takes, from the palette or the Version History view: preview,
 * the modal when user commits would be undone, a progress notification, then the result message. Errors are
 * shown (recovery-required stays with the recovery notice) and never thrown.
 */
export class RestoreRunner {
  constructor(
    private readonly log: EventLog,
    private readonly turnCancelled: vscode.EventEmitter<TurnCancelledEvent>,
    private readonly branchLoss?: BranchLossUi,
    /** Undo's toast offers Continue Chat from Before This Turn where the turn's agent can (issue 32). */
    private readonly chatFork?: ChatForkUi,
  ) {}

  async perform(controller: RepositoryController, request: RunnerRequest, title: RestoreTitle): Promise<void> {
    await this.performFor(controller, request, title);
  }

  /**
   * perform, resolving with the result when it ran (restored or no-change); undefined when it was declined, refused
   * or failed (the failure was shown). `quiet`: no Continue Chat button on the toast (Undo Turn and Its Conversation
   * continues the chat itself).
   */
  async performFor(
    controller: RepositoryController,
    request: RunnerRequest,
    title: RestoreTitle,
    options: { quiet?: boolean } = {},
  ): Promise<RunResult | undefined> {
    try {
      const result = await this.run(controller, request, title);
      if (request.kind === 'beforeCommand') this.reportBeforeCommand(controller, result, request.label);
      else await this.report(controller, result, request.kind, options.quiet === true);
      return result;
    } catch (error) {
      controller.notifyChanged();
      // A chat's branch that is gone (docs/product-contract.md §7): its own notification; Try again runs this same
      // command again.
      if (
        this.branchLoss?.offer(controller, error, async () => {
          await this.perform(controller, request, title);
        })
      )
        return undefined;
      if (await this.offerStaleLockRemoval(controller, request.kind, error)) return undefined;
      this.reportFailure(request.kind, error);
      return undefined;
    }
  }

  /** The Undo toast's extra button when the undone turn's conversation can be continued from before it. */
  private async continueButton(
    controller: RepositoryController,
    turnId: string | undefined,
    quiet: boolean,
  ): Promise<string[]> {
    if (quiet || !this.chatFork || !turnId) return [];
    const can = await this.chatFork.continuability(controller, turnId).catch(() => null);
    return can?.ok ? [CONTINUE_CHAT] : [];
  }

  private offerContinue(controller: RepositoryController, turnId: string | undefined, choice: string | undefined) {
    if (choice === CONTINUE_CHAT && turnId && this.chatFork) void this.chatFork.continueChat(controller, turnId);
  }

  /**
   * A restore refused because a git lock is held: when the lock is one a crashed restore of ours left (no
   * recovery latched, e.g. rolled back), the error says so with its age and offers Remove Stale Lock.
   */
  private async offerStaleLockRemoval(
    controller: RepositoryController,
    kind: RunnerRequest['kind'],
    error: unknown,
  ): Promise<boolean> {
    if (!isAvhError(error, 'index-locked') && !isAvhError(error, 'ref-locked')) return false;
    const locks = await controller.history.findStaleGitLocks().catch(() => []);
    if (locks.length === 0) return false;
    this.log.warn('restore.command-failed', { kind, reason: error.reason, staleLocks: locks.length });
    void vscode.window
      .showErrorMessage(
        `Agent Version History: ${safeMessage(error)} ${RECOVERY_COPY.staleLocks(locks)}`,
        RECOVERY_COPY.removeStaleLock,
      )
      .then((choice) => {
        if (choice === RECOVERY_COPY.removeStaleLock)
          void removeShownStaleLocks(controller, locks, 'Agent Version History: ', 'Try again.');
      });
    return true;
  }

  /** Logs (content-free) and shows a failure; recovery-required stays with the recovery notice, which explains it. */
  reportFailure(kind: RunnerRequest['kind'], error: unknown): void {
    this.log.warn('restore.command-failed', { kind, reason: error instanceof AvhError ? error.reason : 'unexpected' });
    if (error instanceof AvhError && error.reason === 'recovery-required') return;
    void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
  }

  /**
   * Preview → modal (when the restore undoes the user's own commits) → run exactly the confirmed plan. When the
   * plan changed between the modal and the run (a new turn, a commit), the core refuses it untouched and the
   * user is asked again with the new preview; nothing runs that was not confirmed.
   */
  private async run(
    controller: RepositoryController,
    request: RunnerRequest,
    title: string,
  ): Promise<RunResult | undefined> {
    const history = controller.history;
    let chosen = false;
    for (let asked = 0; ; asked++) {
      const preview = await history.preview(
        request.kind === 'beforeCommand' ? { kind: 'restore', target: request.commit } : request,
      );
      if (preview.nothing) return { result: preview.nothing };
      if (
        request.kind === 'undo' &&
        !request.only &&
        !request.path &&
        !request.change &&
        preview.later &&
        anyLaterWork(preview.later)
      ) {
        // Work landed after the turn: the user chooses, and the choice confirms what goes.
        const only = await this.chooseUndo(preview, asked > 0);
        if (!only) return this.declined(request.kind);
        request = { ...request, only };
        chosen = true;
        continue;
      }
      let options: { confirmUserCommits?: boolean; confirmOtherChats?: boolean; expectedPlan?: string } = {};
      if (preview.otherChats && preview.scope !== 'everything') {
        // Another chat wrote files this Undo changes (docs/design/two-chats.md): named and asked, never guessed.
        const { chats, files } = preview.otherChats;
        const choice = await vscode.window.showWarningMessage(
          otherChatsRefusal(chats, files, { choose: '', confirm: 'Continue anyway?' }),
          { modal: true },
          'Continue',
        );
        if (choice !== 'Continue') return this.declined(request.kind);
        options = { confirmOtherChats: true, expectedPlan: preview.fingerprint };
      }
      if (chosen) {
        options = { ...options, confirmUserCommits: true, expectedPlan: preview.fingerprint };
      } else if (preview.userCommits > 0) {
        const n = preview.userCommits;
        const again = asked > 0 ? 'What this restore would do changed since you confirmed it. ' : '';
        const choice = await vscode.window.showWarningMessage(
          `${again}${title} will undo ${n} commit${n === 1 ? '' : 's'} you made yourself after that version.`,
          {
            modal: true,
            detail:
              `Target version ${preview.target?.slice(0, 7) ?? ''}. They stay reachable in Version History; ` +
              'a new [Restore] version is added on top.',
          },
          'Continue',
        );
        if (choice !== 'Continue') return this.declined(request.kind);
        options = { ...options, confirmUserCommits: true, expectedPlan: preview.fingerprint };
      }
      try {
        return await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `${title}…` },
          () => this.execute(controller, request, options),
        );
      } catch (error) {
        if (!(asksAgain(error) && asked < MAX_CONFIRMATIONS)) throw error;
        this.log.info('restore.plan-changed', { kind: request.kind });
        if (request.kind === 'undo' && request.only)
          request = { kind: 'undo', ...(request.turnId ? { turnId: request.turnId } : {}) };
        chosen = false;
      }
    }
  }

  /** The user closed the confirmation without choosing: nothing runs (logged, so a test can see the command ended). */
  private declined(kind: RunnerRequest['kind']): undefined {
    this.log.info('restore.not-confirmed', { kind });
    return undefined;
  }

  private execute(
    controller: RepositoryController,
    request: RunnerRequest,
    options: { confirmUserCommits?: boolean; confirmOtherChats?: boolean; expectedPlan?: string },
  ): Promise<RunResult> {
    const history = controller.history;
    const onTurnCancelled = (t: { turnId: string; chatId: string }) =>
      this.turnCancelled.fire({ ...t, repository: controller.root });
    if (request.kind === 'beforeCommand')
      return history.restoreBeforeCommand(request.checkpointId, { ...options, onTurnCancelled });
    if (request.kind === 'redo') return history.redo(options);
    if (request.kind === 'restore') return history.restore(request.target, options);
    if (request.path !== undefined) return history.undoFile(request.turnId, request.path, options);
    if (request.change !== undefined)
      return history.undoChange(request.change.path, request.change.line, { ...options, turnId: request.turnId });
    return history.undo(request.turnId, {
      ...options,
      ...(request.only ? { only: request.only } : {}),
      onTurnCancelled,
    });
  }

  /**
   * The modal when work landed after the turn: Undo Only This Turn (unless its reverse conflicts: then the files
   * are named) and Restore Everything naming what else goes (unless uncommitted edits are in the way: it would be
   * refused, so it is not offered). When neither can run, the refusal says why and nothing changes.
   */
  private async chooseUndo(preview: RestorePreview, again: boolean): Promise<UndoOnly | undefined> {
    const later = describeLaterWork(preview.later!);
    const conflicts = preview.onlyTurn?.conflicts ?? [];
    // A running or stopped turn made no version of its own: only Restore Everything can undo it.
    const offerOnly = conflicts.length === 0 && !preview.onlyTurn?.noVersion;
    const offerEverything = !preview.later!.uncommitted;
    const conflictText = preview.onlyTurn?.noVersion
      ? `This turn made no version of its own, so ${UNDO_ONLY_TURN} does not apply.`
      : revertConflictStatement(conflicts);
    const everythingText = offerEverything
      ? `${RESTORE_EVERYTHING} also takes away ${later} (it stays reachable in Version History).`
      : `${RESTORE_EVERYTHING} needs a clean working tree: commit or stash your uncommitted changes first.`;
    if (!offerOnly && !offerEverything)
      throw new AvhError('revert-conflict', `${conflictText} ${everythingText} Nothing was changed.`);
    const detail = [
      offerOnly
        ? `${UNDO_ONLY_TURN} takes back only this turn's changes as a new [Revert] version; the later work stays.`
        : conflictText,
      everythingText,
    ].join('\n\n');
    const choice = await vscode.window.showWarningMessage(
      `${again ? 'What this Undo would do changed since you chose. ' : ''}Work landed after this turn: ${later}.`,
      { modal: true, detail },
      ...(offerOnly ? [UNDO_ONLY_TURN] : []),
      ...(offerEverything ? [RESTORE_EVERYTHING] : []),
    );
    return choice === UNDO_ONLY_TURN ? 'turn' : choice === RESTORE_EVERYTHING ? 'everything' : undefined;
  }

  /** The result of Restore to Before This Command: what came back, and what was saved first. */
  private reportBeforeCommand(controller: RepositoryController, result: RunResult | undefined, label: string): void {
    controller.notifyChanged();
    if (!result) return;
    if (result.notice) void vscode.window.showInformationMessage(`Agent Version History: ${result.notice}`);
    const back = result.broughtBack ?? 0;
    const ignored =
      back > 0 ? ` ${back} ignored file${back === 1 ? ' it saved was' : 's it saved were'} written back.` : '';
    if (result.result === 'no-change') {
      void vscode.window.showInformationMessage(
        `The files already match the version before \`${label}\`, so no version was made.${ignored}`,
      );
      return;
    }
    if (result.result !== 'restored') return;
    const saved = result.preserved
      ? ` The work since was saved first as an Interrupted entry (${result.preserved.slice(0, 7)}).`
      : '';
    void vscode.window.showInformationMessage(
      `Restored to before \`${label}\` — a new [Restore] version ${result.restoreCommit?.slice(0, 7) ?? ''} was ` +
        `added.${ignored}${saved}`,
    );
  }

  private async report(
    controller: RepositoryController,
    result: RestoreResult | undefined,
    kind: RestoreRequest['kind'],
    quiet: boolean,
  ): Promise<void> {
    controller.notifyChanged();
    if (!result) return;
    // Nested repositories: once each.
    if (result.notice) void vscode.window.showInformationMessage(`Agent Version History: ${result.notice}`);
    switch (result.result) {
      case 'nothing-to-undo':
        void vscode.window.showInformationMessage('There is no agent turn to undo on this branch.');
        return;
      case 'nothing-to-redo':
        void vscode.window.showInformationMessage('There is nothing to redo.');
        return;
      case 'no-change':
        void vscode.window.showInformationMessage(
          'Nothing changed: the files already match that version, so no version was made.',
        );
        return;
      case 'restored': {
        const target = result.target?.slice(0, 7) ?? '';
        if (result.preserved && result.turnId) {
          const turnId = result.turnId;
          const more = await this.continueButton(controller, turnId, quiet);
          // Not awaited: the command finishes now; the button stays usable as long as the toast is.
          void vscode.window
            .showInformationMessage(
              'Agent turn undone. Its partial changes were saved as an Interrupted entry in Version History ' +
                `(${result.preserved.slice(0, 7)}).`,
              'Copy Prompt',
              ...more,
            )
            .then(async (choice) => {
              this.offerContinue(controller, turnId, choice);
              if (choice !== 'Copy Prompt') return;
              const prompt = await controller.history.promptOf(turnId);
              if (prompt !== null) await vscode.env.clipboard.writeText(prompt);
            });
          return;
        }
        if (result.scope === 'turn' || result.scope === 'file' || result.scope === 'change') {
          const more = result.scope === 'turn' ? await this.continueButton(controller, result.turnId, quiet) : [];
          // The CLI's words, ids of 7. Another chat's files the user confirmed were named in the modal just before;
          // the toast does not repeat them (the CLI, confirmed by --yes, names them in its result).
          const { otherChatFiles: _named, ...kept } = result;
          void vscode.window
            .showInformationMessage(keptUndoResult({ ...kept, scope: result.scope }, 7), ...more)
            .then((choice) => this.offerContinue(controller, result.turnId, choice));
          return;
        }
        const verb = kind === 'undo' ? 'Agent turn undone' : kind === 'redo' ? 'Agent turn redone' : 'Version restored';
        const more = kind === 'undo' ? await this.continueButton(controller, result.turnId, quiet) : [];
        void vscode.window
          .showInformationMessage(`${verb} — restored version ${target} as a new [Restore] version.`, ...more)
          .then((choice) => this.offerContinue(controller, result.turnId, choice));
      }
    }
  }
}

/**
 * A refusal the runner answers by asking again with the new preview; every other confirmation refusal is shown (a
 * plan the runner confirmed is pinned, so only a changed plan can refuse it).
 */
function asksAgain(error: unknown): boolean {
  if (!(error instanceof ConfirmationRequired)) return false;
  switch (error.refusal.kind) {
    case 'plan-changed':
      return true;
    case 'later-work':
    case 'user-commits':
    case 'other-chats':
      return false;
  }
}

/** Undo Agent Turn, Redo Agent Turn and Restore Version… from the palette. */
export function registerRestoreCommands(
  context: vscode.ExtensionContext,
  registry: RepositoryRegistry,
  runner: RestoreRunner,
): void {
  const guarded =
    (
      kind: RestoreRequest['kind'],
      pick: (c: RepositoryController) => Promise<RestoreRequest | undefined>,
      title: RestoreTitle,
    ) =>
    async () => {
      let controller: RepositoryController;
      let request: RestoreRequest | undefined;
      try {
        controller = await registry.forAction(); // a folder without git: offers to Enable Version History
        request = await pick(controller);
      } catch (error) {
        runner.reportFailure(kind, error);
        return;
      }
      if (request) await runner.perform(controller, request, title);
    };

  context.subscriptions.push(
    vscode.commands.registerCommand('agentVersions.undo', guarded('undo', pickChatTurn, 'Undo Agent Turn')),
    vscode.commands.registerCommand(UNDO_FILE_COMMAND, async (uri?: unknown) => {
      let found: { controller: RepositoryController; request: RestoreRequest };
      try {
        found = await turnFileRequest(registry, uri);
      } catch (error) {
        runner.reportFailure('undo', error);
        return;
      }
      await runner.perform(found.controller, found.request, 'Undo This File');
    }),
    vscode.commands.registerCommand(
      'agentVersions.redo',
      guarded('redo', async () => ({ kind: 'redo' }), 'Redo Agent Turn'),
    ),
    vscode.commands.registerCommand('agentVersions.restore', guarded('restore', pickVersion, 'Restore Version')),
  );
}
