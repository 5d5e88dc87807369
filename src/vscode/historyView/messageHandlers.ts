// What the host does for each message the webview may send: one handler per message type, keyed by the type
// (the mapped types make the compiler ask for a handler when protocol.ts gains a message). Messages arrive
// here validated (host.ts parses them first); requests are answered by the host with one reply or error.
import * as vscode from 'vscode';
import type { RestoreTitle, RestoreRunner, RunnerRequest } from '../restoreCommands';
import type { BranchLossUi } from '../branchLoss';
import type { RepositoryController } from '../repositoryController';
import { AvhError } from '../../core/errors';
import { CONTINUE_CHAT_COMMAND, UNDO_WITH_CONVERSATION, UNDO_WITH_CONVERSATION_COMMAND } from '../chatForkCommands';
import { showVersionChanges } from '../versionChanges';
import { showLinesOwned } from '../blameCommands';
import { beforeCommandRequest, RESTORE_BEFORE_COMMAND } from '../checkpointCommands';
import { showTurnChangesSoFar } from './turnChanges';
import type { ReadmeSection, VersionsView, WebviewCommand, WebviewRequest } from './protocol';

/** Versions sent at first; each "load more" adds five pages. */
export const PAGE = 200;
const MAX_VERSIONS = 10_000;

/** What a handler may use of the host (HistoryViewProvider): its state and the services behind the view. */
export interface ViewHost {
  readonly runner: RestoreRunner;
  readonly branchLoss: BranchLossUi;
  /** How many versions the model holds. */
  limit(): number;
  setLimit(limit: number): void;
  /** The model last sent to the webview. */
  lastView(): VersionsView;
  controller(): Promise<RepositoryController>;
  /** Recomputes the model and sends it. */
  refresh(): Promise<void>;
  /** The webview said it is ready: queued notifications go out. */
  markReady(): void;
  openReadme(section: ReadmeSection): Promise<void>;
  /** The empty state's buttons: *Connect Agent…* for one agent, *Check Agent Connections*, for the view's folder. */
  runAgentCommand(command: 'connect' | 'check', agent?: string): Promise<void>;
  /** Runs `action` with the view busy as `label`, then refreshes; refuses while another action runs. */
  whileBusy(label: string, action: () => Promise<void>): Promise<void>;
}

type HandlerMap<M extends { type: string }, R> = {
  [T in M['type']]: (host: ViewHost, message: Extract<M, { type: T }>) => R;
};

/** Commands get no reply, and run at once (a `ready` flushes the queue before the next message is read). */
export const COMMAND_HANDLERS: HandlerMap<WebviewCommand, void> = {
  ready: (host) => host.markReady(),
  openReadme: (host, { section }) => void host.openReadme(section),
  connectAgent: (host, { agent }) => void host.runAgentCommand('connect', agent),
  checkAgentConnections: (host) => void host.runAgentCommand('check'),
};

/** Requests: the promise settles the reply (resolved → `reply`, rejected → `error` with its safe message). */
export const REQUEST_HANDLERS: HandlerMap<WebviewRequest, Promise<void>> = {
  loadMore: async (host) => {
    host.setLimit(Math.min(host.limit() + PAGE * 5, MAX_VERSIONS));
    await host.refresh();
  },
  checkBranchesAgain: async (host) => {
    (await host.controller()).history.forgetBranchAnswers();
    await host.refresh();
  },
  continueOnNewBranch: async (host, { chatId }) => {
    const controller = await host.controller();
    await host.whileBusy('Continue on a New Branch…', async () => {
      await host.branchLoss.continueOnNewBranch(controller, chatId);
    });
  },
  restoreChatBranch: async (host, { chatId }) => {
    const controller = await host.controller();
    await host.whileBusy('Restoring the branch from the remote…', () =>
      host.branchLoss.restoreFromRemote(controller, chatId),
    );
  },
  showChanges: async (host, { oid }) => {
    const controller = await host.controller();
    const view = host.lastView();
    const row = view.kind === 'versions' ? view.rows.find((r) => r.oid === oid) : undefined;
    await showVersionChanges(controller, oid, row?.label ?? 'Version');
  },
  showTurnChanges: async (host, { turnId }) => {
    const controller = await host.controller();
    const view = host.lastView();
    const turn = view.kind === 'versions' ? view.openTurns?.find((t) => t.id === turnId) : undefined;
    if (!turn) throw new AvhError('invalid-input', 'This turn is no longer listed above the versions.');
    await showTurnChangesSoFar(controller, turnId, turn.label);
  },
  undo: (host, { turnId }) => runRestore(host, 'Undo Agent Turn', { kind: 'undo', turnId }),
  showOwnedLines: async (host, { turnId }) => {
    const view = host.lastView();
    const row = view.kind === 'versions' ? view.rows.find((r) => r.turn?.id === turnId) : undefined;
    await showLinesOwned(await host.controller(), turnId, row?.label ?? 'Agent turn');
  },
  // Issue 32: the palette's commands with the row's turn (they find its repository and say why when it cannot).
  continueChat: (_host, { turnId }) => runCommand(CONTINUE_CHAT_COMMAND, turnId),
  undoWithConversation: (host, { turnId }) =>
    host.whileBusy(`${UNDO_WITH_CONVERSATION}…`, () => runCommand(UNDO_WITH_CONVERSATION_COMMAND, turnId)),
  redo: (host) => runRestore(host, 'Redo Agent Turn', { kind: 'redo' }),
  restore: (host, { oid }) => runRestore(host, 'Restore Version', { kind: 'restore', target: oid }),
  restoreBeforeCommand: async (host, { checkpointId }) => {
    if (!stepsShown(host.lastView()).has(checkpointId))
      throw new AvhError('invalid-input', 'This step is no longer listed in Version History.');
    const request = await beforeCommandRequest(await host.controller(), checkpointId);
    await runRestore(host, RESTORE_BEFORE_COMMAND, request);
  },
};

/** The checkpoint ids of the steps the view lists (under open turns and under versions). */
function stepsShown(view: VersionsView): Set<string> {
  if (view.kind !== 'versions') return new Set();
  return new Set([
    ...(view.openTurns ?? []).flatMap((t) => (t.steps ?? []).map((s) => s.id)),
    ...(view.checkpoints ?? []).flatMap((t) => t.steps.map((s) => s.id)),
  ]);
}

async function runCommand(command: string, turnId: string): Promise<void> {
  await vscode.commands.executeCommand(command, turnId);
}

/** Undo, Redo and Restore run as the palette's commands do (preview, confirmation, progress, result). */
async function runRestore(host: ViewHost, title: RestoreTitle, request: RunnerRequest): Promise<void> {
  const controller = await host.controller();
  await host.whileBusy(`${title}…`, () => host.runner.perform(controller, request, title));
}

/** The handler of `message`'s type (one lookup; the cast is what the mapped type above guarantees). */
export function handlerOf<M extends { type: string }, R>(
  handlers: HandlerMap<M, R>,
  message: M,
): (host: ViewHost, message: M) => R {
  return handlers[message.type as M['type']] as (host: ViewHost, message: M) => R;
}
