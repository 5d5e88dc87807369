import * as vscode from 'vscode';
import { AvhError, safeMessage } from '../core/errors';
import type { EventLog } from '../core/log';
import { continuationWarningText } from '../core/history/wording';
import type { RepositoryController } from './repositoryController';
import type { RepositoryRegistry } from './repositoryRegistry';
import type { ContinuationInfo } from '../core/versionHistory';

export const CONTINUE_ON_NEW_BRANCH_COMMAND = 'agentVersions.continueOnNewBranch';
export const CONTINUE_ON_NEW_BRANCH = 'Continue on a New Branch';
export const TRY_AGAIN = 'Try again';
export const restoreFromLabel = (remote: string): string => `Restore from ${remote}`;

/** What API listeners get when a chat continues on a new branch (docs/product-contract.md §7). */
export type ChatContinuedEvent = ContinuationInfo;

const BRANCH_REASONS = new Set(['branch-lost', 'branch-on-remote', 'branch-unavailable']);

/** Whether an error is about a chat's branch not being here (lost, only on the remote, or not checkable). */
export function isBranchProblem(error: unknown): error is AvhError {
  return error instanceof AvhError && BRANCH_REASONS.has(error.reason);
}

/**
 * Branch loss in VS Code (docs/design/branch-loss.md): the error notification with its one action (Continue on a New
 * Branch when the branch is confirmed lost, Restore from <remote> when only the remote has it, Try again when the
 * remote could not be asked). Nothing is replaced until the user clicks; the click re-checks inside the action.
 */
export class BranchLossUi implements vscode.Disposable {
  private readonly continued = new vscode.EventEmitter<ChatContinuedEvent>();
  readonly onDidContinueOnNewBranch = this.continued.event;

  constructor(private readonly log: EventLog) {}

  /**
   * Shows the notification for a branch problem and returns true; false for any other error. `retry` is what
   * Try again runs (default: check the chat's branch again and show what it is now).
   */
  offer(controller: RepositoryController, error: unknown, retry?: () => Promise<void>): boolean {
    if (!isBranchProblem(error)) return false;
    const chatId = typeof error.details.chat === 'string' ? error.details.chat : null;
    const remote = typeof error.details.remote === 'string' ? error.details.remote : null;
    this.log.warn('chat.branch-problem', {
      reason: error.reason,
      remoteFailure: typeof error.details.remoteFailure === 'string' ? error.details.remoteFailure : undefined,
    });
    const action =
      error.reason === 'branch-lost'
        ? error.details.canContinue === true && chatId
          ? CONTINUE_ON_NEW_BRANCH
          : null
        : error.reason === 'branch-on-remote'
          ? remote && chatId
            ? restoreFromLabel(remote)
            : null
          : TRY_AGAIN;
    const buttons = action ? [action] : [];
    void vscode.window.showErrorMessage(`Agent Version History: ${error.message}`, ...buttons).then((choice) => {
      if (!choice || !chatId) return;
      if (choice === CONTINUE_ON_NEW_BRANCH) void this.continueOnNewBranch(controller, chatId);
      else if (choice === TRY_AGAIN) void (retry ? retry() : this.checkAgain(controller, chatId));
      else void this.restoreFromRemote(controller, chatId);
    });
    return true;
  }

  /**
   * Continue on a New Branch for one chat: the core re-checks, creates, checks out and records; the result is told
   * once.
   */
  async continueOnNewBranch(controller: RepositoryController, chatId: string): Promise<ContinuationInfo | undefined> {
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `${CONTINUE_ON_NEW_BRANCH}…` },
        () => controller.history.continueChatOnNewBranch(chatId),
      );
      controller.notifyChanged();
      if (result.result === 'continued') this.continued.fire(result.continuation);
      const c = result.continuation;
      void vscode.window.showWarningMessage(
        `Agent Version History: ${continuationWarningText(c.newBranch, c.oldBranch)} It starts from ${c.baseBranch}.`,
      );
      return c;
    } catch (error) {
      controller.notifyChanged();
      if (!this.offer(controller, error))
        void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
      return undefined;
    }
  }

  /** Try again: asks the remote anew and shows where the chat's branch stands now. */
  async checkAgain(controller: RepositoryController, chatId: string): Promise<void> {
    controller.history.forgetBranchAnswers();
    try {
      const status = await controller.history.chatStatus(chatId);
      controller.notifyChanged();
      if (status.branch === 'ok') {
        void vscode.window.showInformationMessage(
          `Agent Version History: the branch "${status.chatBranch ?? ''}" for this chat is here; you can continue.`,
        );
        return;
      }
      const reason =
        status.branch === 'lost'
          ? 'branch-lost'
          : status.branch === 'on-remote'
            ? 'branch-on-remote'
            : 'branch-unavailable';
      this.offer(
        controller,
        new AvhError(reason, status.message ?? '', { chat: chatId, remote: status.remote, canContinue: true }),
      );
    } catch (error) {
      void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
    }
  }

  async restoreFromRemote(controller: RepositoryController, chatId: string): Promise<void> {
    try {
      const r = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Restoring the branch from the remote…' },
        () => controller.history.restoreChatBranch(chatId),
      );
      controller.notifyChanged();
      void vscode.window.showInformationMessage(
        `Agent Version History: the branch "${r.branch}" was restored from ${r.remote}. ` +
          'Check it out to continue the conversation there.',
      );
    } catch (error) {
      controller.notifyChanged();
      if (!this.offer(controller, error))
        void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
    }
  }

  dispose(): void {
    this.continued.dispose();
  }
}

/** `Continue on a New Branch` from the palette: asks which lost chat when no chat id is given. */
export function registerBranchLoss(
  context: vscode.ExtensionContext,
  registry: RepositoryRegistry,
  log: EventLog,
): BranchLossUi {
  const ui = new BranchLossUi(log);
  context.subscriptions.push(
    ui,
    vscode.commands.registerCommand(CONTINUE_ON_NEW_BRANCH_COMMAND, async (arg?: unknown) => {
      try {
        const given =
          typeof arg === 'object' && arg !== null ? (arg as { chatId?: unknown; repository?: unknown }) : {};
        const controller =
          typeof given.repository === 'string'
            ? await registry.forPath(given.repository)
            : await registry.defaultController();
        let chatId = typeof given.chatId === 'string' ? given.chatId : undefined;
        if (!chatId) {
          const { issues } = await controller.history.branchNotices(true);
          const lost = issues.filter((i) => i.canContinue);
          if (lost.length === 0) {
            void vscode.window.showInformationMessage(
              'Agent Version History: no conversation in this repository has lost its branch.',
            );
            return undefined;
          }
          const picked =
            lost.length === 1
              ? lost[0]
              : (
                  await vscode.window.showQuickPick(
                    lost.map((i) => ({ label: i.chatTitle ?? i.chatId, description: i.branch, issue: i })),
                    {
                      title: CONTINUE_ON_NEW_BRANCH,
                      placeHolder: 'Which conversation continues on a new branch? (its lost code is not recovered)',
                    },
                  )
                )?.issue;
          if (!picked) return undefined;
          chatId = picked.chatId;
        }
        return await ui.continueOnNewBranch(controller, chatId);
      } catch (error) {
        void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
        return undefined;
      }
    }),
  );
  return ui;
}
