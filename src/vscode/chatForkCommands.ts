import * as vscode from 'vscode';
import { forkTurnConversation, type TurnConversationFork } from '../cli/conversations/forkTurn';
import { NOTHING_CREATED } from '../cli/conversations/mechanism';
import { conversationMechanismOf, NO_MECHANISM } from '../cli/conversations/registry';
import { CliError } from '../cli/exitCodes';
import { AvhError, isAvhError, safeMessage } from '../core/errors';
import type { EventLog } from '../core/log';
import type { ConversationTurn } from '../core/chats/turnAnchors';
import { relativeTime } from '../core/history/wording';
import type { RepositoryController } from './repositoryController';
import type { RepositoryRegistry } from './repositoryRegistry';
import { literalPickText } from './pickText';

/** Issue 32 in VS Code: the commands' titles (also the Undo toast's button and the view's menu items). */
export const CONTINUE_CHAT = 'Continue Chat from Before This Turn';
export const UNDO_WITH_CONVERSATION = 'Undo Turn and Its Conversation';
export const CONTINUE_CHAT_COMMAND = 'agentVersions.continueChat';
export const UNDO_WITH_CONVERSATION_COMMAND = 'agentVersions.undoWithConversation';

/** Whether a turn's conversation can be forked: its agent has a mechanism and its hook recorded the anchor. */
export type Continuability = { ok: true; displayName: string } | { ok: false; message: string };

/**
 * What the extension knows before forking: the agent has no mechanism (NO_MECHANISM, the CLI's words), or the
 * turn's place in its conversation is unknown. The fork itself checks everything again (forkTurnConversation).
 */
export function continuabilityOf(turn: Pick<ConversationTurn, 'agent' | 'anchorAgent'>): Continuability {
  const mechanism = conversationMechanismOf(turn.agent);
  if (!mechanism) return { ok: false, message: NO_MECHANISM };
  if (turn.anchorAgent !== mechanism.agent)
    return {
      ok: false,
      message:
        `Where this turn sits in its ${mechanism.displayName} conversation is unknown: its hook did not name it ` +
        '(recorded before this version, or by `turn begin`).',
    };
  return { ok: true, displayName: mechanism.displayName };
}

/** The message of a fork that did not happen: the CLI's own refusal (content-free), or ours. */
function forkFailure(error: unknown): string {
  if (error instanceof CliError || isAvhError(error)) return error.message;
  return `${safeMessage(error)} while forking the conversation. ${NOTHING_CREATED}`;
}

/** How Undo Turn and Its Conversation begins its message when the Undo ran and the fork did not. */
export const UNDO_STANDS = 'The turn was undone (that stands), but its conversation was not continued:';
/** What replaces the fork's "Nothing was created." there: the Undo did create a version. */
export const NO_FORK_MADE = 'No fork was made; the original conversation was left untouched.';

/**
 * Undo Turn and Its Conversation's message when the Undo ran but the fork did not: the Undo stands, and exactly what
 * did not happen. The fork's "Nothing was created." would read as if the Undo made nothing either, so it becomes
 * NO_FORK_MADE; a refusal that left something behind (it names it instead) is kept as it is.
 */
export function undoStandsMessage(forkMessage: string): string {
  const what = forkMessage.endsWith(NOTHING_CREATED)
    ? `${forkMessage.slice(0, -NOTHING_CREATED.length)}${NO_FORK_MADE}`
    : forkMessage;
  return `${UNDO_STANDS} ${what}`;
}

/**
 * Continue Chat from Before This Turn and Undo Turn and Its Conversation (issue 32,
 * docs/design/conversation-rollback.md): the fork the CLI's `chat fork` makes (the same code), then a terminal in
 * the fork's folder running the agent's resume command. Failures are shown as the fork's message; nothing throws.
 */
export class ChatForkUi {
  constructor(private readonly log: EventLog) {}

  /** Whether the turn applies (read from the store; an unknown turn id is the core's refusal). */
  async continuability(controller: RepositoryController, turnId: string): Promise<Continuability> {
    const turn = await controller.history.turnAnchor(turnId);
    return continuabilityOf({ agent: turn.agent, anchorAgent: turn.anchor?.agent ?? null });
  }

  /**
   * Forks and opens the terminal; on failure shows the fork's message (`afterUndo`: as undoStandsMessage). Returns
   * the fork, or null when none was made.
   */
  async continueChat(
    controller: RepositoryController,
    turnId: string,
    options: { afterUndo?: boolean } = {},
  ): Promise<TurnConversationFork | null> {
    let fork: TurnConversationFork;
    try {
      fork = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `${CONTINUE_CHAT}…` },
        () => forkTurnConversation(controller.history, turnId, process.env, controller.root),
      );
    } catch (error) {
      this.log.warn('chat.fork-failed', {
        reason: error instanceof CliError ? `exit-${error.exitCode}` : isAvhError(error) ? error.reason : 'unexpected',
      });
      const message = forkFailure(error);
      void vscode.window.showErrorMessage(
        `Agent Version History: ${options.afterUndo ? undoStandsMessage(message) : message}`,
      );
      return null;
    }
    this.log.info('chat.forked', { agent: fork.agent, turnId: fork.turnId, forkId: fork.forkId });
    const terminal = vscode.window.createTerminal({
      name: `${fork.displayName} — continued chat`,
      cwd: fork.resume.cwd,
      iconPath: new vscode.ThemeIcon('comment-discussion'),
    });
    terminal.show();
    terminal.sendText(fork.resume.command, true);
    void vscode.window.showInformationMessage(
      `Continued the ${fork.displayName} conversation from just before this turn in a new terminal ` +
        '(a fork: the original conversation is kept).',
    );
    return fork;
  }

  /** Continue Chat with a turn already known to apply or not: the refusal is shown as an error, never silent. */
  async continueIfPossible(controller: RepositoryController, turnId: string): Promise<void> {
    let can: Continuability;
    try {
      can = await this.continuability(controller, turnId);
    } catch (error) {
      void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
      return;
    }
    if (!can.ok) {
      this.log.info('chat.fork-not-offered', {});
      void vscode.window.showErrorMessage(`Agent Version History: ${can.message} ${NOTHING_CREATED}`);
      return;
    }
    await this.continueChat(controller, turnId);
  }
}

/** The palette's pick: the recent turns on this branch, newest first; those that cannot continue say why. */
async function pickTurn(controller: RepositoryController, title: string): Promise<ConversationTurn | undefined> {
  const turns = await controller.history.conversationTurns();
  if (turns.length === 0) throw new AvhError('invalid-input', 'There is no agent turn on this branch.');
  const now = Date.now() / 1000;
  const picked = await vscode.window.showQuickPick(
    turns.map((t) => {
      const can = continuabilityOf(t);
      return {
        label: literalPickText(t.summary),
        description: [
          literalPickText(t.chatTitle ?? `Chat ${t.chatId.slice(0, 8)}`),
          t.agent ?? 'agent',
          ...(t.undone ? ['undone'] : []),
          relativeTime(now - t.createdAt / 1000),
          ...(can.ok ? [] : ['cannot continue this agent’s chat']),
        ].join(' · '),
        turn: t,
      };
    }),
    {
      title: `${title} — which turn?`,
      placeHolder: 'Pick the turn; the conversation continues from just before it (the original is kept)',
      matchOnDescription: true,
    },
  );
  return picked?.turn;
}

/** The two commands; with a turn id argument (the view's rows, the Undo toast) they skip the pick. */
export function registerChatForkCommands(
  context: vscode.ExtensionContext,
  registry: RepositoryRegistry,
  ui: ChatForkUi,
  undo: (controller: RepositoryController, turnId: string) => Promise<{ undone: boolean }>,
): void {
  const turnArgument = async (
    arg: unknown,
    title: string,
  ): Promise<{ controller: RepositoryController; turnId: string } | undefined> => {
    if (typeof arg === 'string') return { controller: await ownerOf(registry, arg), turnId: arg };
    const controller = await registry.forAction();
    const turn = await pickTurn(controller, title);
    return turn ? { controller, turnId: turn.turnId } : undefined;
  };
  context.subscriptions.push(
    vscode.commands.registerCommand(CONTINUE_CHAT_COMMAND, async (arg?: unknown) => {
      let target;
      try {
        target = await turnArgument(arg, CONTINUE_CHAT);
      } catch (error) {
        void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
        return;
      }
      if (target) await ui.continueIfPossible(target.controller, target.turnId);
    }),
    vscode.commands.registerCommand(UNDO_WITH_CONVERSATION_COMMAND, async (arg?: unknown) => {
      let target;
      let can: Continuability;
      try {
        target = await turnArgument(arg, UNDO_WITH_CONVERSATION);
        if (!target) return;
        can = await ui.continuability(target.controller, target.turnId);
      } catch (error) {
        void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
        return;
      }
      // Known beforehand: the conversation cannot follow, so the files are not undone alone under this name.
      if (!can.ok) {
        void vscode.window.showErrorMessage(
          `Agent Version History: ${can.message} Nothing was undone (Undo Agent Turn undoes the files alone).`,
        );
        return;
      }
      const { undone } = await undo(target.controller, target.turnId);
      if (!undone) return; // declined, refused or nothing to do: the Undo said so
      await ui.continueChat(target.controller, target.turnId, { afterUndo: true });
    }),
  );
}

/** The open repository whose store has the turn; else the default one (which refuses the id clearly). */
async function ownerOf(registry: RepositoryRegistry, turnId: string): Promise<RepositoryController> {
  for (const controller of await registry.all()) if (await controller.history.knowsTurn(turnId)) return controller;
  return registry.defaultController();
}
