// The host side of the Version History view: the webview's page, the ready handshake and its queue, the model
// refresh, and the dispatch of validated messages to their handlers (messageHandlers.ts).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { AvhError, safeMessage } from '../../core/errors';
import type { EventLog } from '../../core/log';
import { CONNECT_AGENT_COMMAND } from '../agentConnect';
import { CHECK_AGENT_CONNECTIONS_COMMAND } from '../agentCommands';
import type { AgentConnections } from '../agentStates';
import type { BranchLossUi } from '../branchLoss';
import type { RepositoryController } from '../repositoryController';
import { type HistoryRepositoryChoice, registerRepositoryPicker } from '../repositoryPicker';
import { defaultWorkspaceFolder, type RepositoryRegistry } from '../repositoryRegistry';
import type { RestoreRunner } from '../restoreCommands';
import { HISTORY_VIEW_ID, RESURFACE_RECOVERY_COMMAND, SHOW_HISTORY_COMMAND } from '../statusBar';
import { BLOCKED_MESSAGE } from '../../core/history/wording';
import { historyViewHtml } from './html';
import { COMMAND_HANDLERS, handlerOf, PAGE, REQUEST_HANDLERS, type ViewHost } from './messageHandlers';
import { HostMessage, parseWebviewMessage, ReadmeSection, VersionsView, WebviewRequest } from './protocol';

/** Test-only (not in the palette): feeds one raw payload to the host as if the webview had posted it. */
export const HISTORY_VIEW_TEST_MESSAGE_COMMAND = 'agentVersions._test.historyViewMessage';
/** Test-only: a content-free picture of the view's host state. */
export const HISTORY_VIEW_TEST_DESCRIBE_COMMAND = 'agentVersions._test.historyView';

/** The README headings the empty state links to. */
const README_ANCHORS: Record<ReadmeSection, string> = {
  'extension-api': 'recording-turns-from-an-agent-extension',
};

/**
 * The host side of the Version History view: owns the data (view models computed by the core on every change of
 * the repository) and turns the webview's validated intents into the same commands the palette runs.
 */
export class HistoryViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  /** Host → webview messages wait here until the webview says it is ready. */
  private queue: HostMessage[] = [];
  private limit = PAGE;
  private busy: string | null = null;
  private lastView: VersionsView = { kind: 'loading' };
  private refreshing: Promise<void> = Promise.resolve();
  private refreshQueued = false;
  private readonly disposables: vscode.Disposable[] = [];
  /** The working tree watch held while the view shows a running or stopped turn (its files changed so far). */
  private live: { controller: RepositoryController; watch: vscode.Disposable } | null = null;
  /** What the message handlers see of this provider. */
  private readonly host: ViewHost;

  constructor(
    private readonly extensionUri: vscode.Uri,
    registry: RepositoryRegistry,
    /** Which repository the view shows (the title bar's picker in a multi-root workspace). */
    private readonly choice: HistoryRepositoryChoice,
    runner: RestoreRunner,
    branchLoss: BranchLossUi,
    private readonly log: EventLog,
    /** Each agent's connection, for the empty state's buttons. */
    private readonly agents: AgentConnections,
  ) {
    this.disposables.push(
      registry.onDidChange(() => this.refresh()),
      choice.onDidChange(() => this.refresh()),
      agents.onDidChange(() => void this.postAgents()),
    );
    this.host = {
      runner,
      branchLoss,
      limit: () => this.limit,
      setLimit: (limit) => (this.limit = limit),
      lastView: () => this.lastView,
      controller: () => this.choice.controller(),
      refresh: () => this.refresh(),
      markReady: () => {
        this.ready = true;
        this.flush();
        void this.refresh();
      },
      openReadme: (section) => this.openReadme(section),
      runAgentCommand: async (command, agent) => {
        const folder = await this.folder();
        await vscode.commands.executeCommand(
          command === 'connect' ? CONNECT_AGENT_COMMAND : CHECK_AGENT_CONNECTIONS_COMMAND,
          { agent, folder },
        );
      },
      whileBusy: (label, action) => this.whileBusy(label, action),
    };
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    // A new page starts from what the host knows now; later changes replace these while it loads.
    this.queue = [
      { type: 'didChangeVersions', view: this.lastView },
      { type: 'didChangeBusy', busy: this.busy },
    ];
    const assets = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    view.webview.options = { enableScripts: true, localResourceRoots: [assets] };
    view.webview.html = historyViewHtml({
      cspSource: view.webview.cspSource,
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(assets, 'index.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(assets, 'index.css')).toString(),
    });
    view.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw), undefined, this.disposables);
    view.onDidChangeVisibility(
      () => {
        if (view.visible) this.onShown();
        else void this.followWorkingTree(this.lastView);
      },
      undefined,
      this.disposables,
    );
    view.onDidDispose(
      () => {
        if (this.view === view) this.view = undefined;
      },
      undefined,
      this.disposables,
    );
    this.onShown();
  }

  /**
   * Validates a message from the webview and hands it to its handler; anything malformed or unknown is logged
   * content-free and dropped.
   */
  async receive(raw: unknown): Promise<boolean> {
    const message = parseWebviewMessage(raw);
    if (!message) {
      this.log.warn('view.message-rejected', {
        type:
          typeof raw === 'object' && raw !== null && typeof (raw as { type?: unknown }).type === 'string'
            ? 'malformed'
            : 'unknown',
      });
      return false;
    }
    if ('id' in message) await this.answer(message);
    else handlerOf(COMMAND_HANDLERS, message)(this.host, message);
    return true;
  }

  private async answer(request: WebviewRequest): Promise<void> {
    try {
      await handlerOf(REQUEST_HANDLERS, request)(this.host, request);
      this.post({ type: 'reply', id: request.id });
    } catch (error) {
      this.log.warn('view.request-failed', {
        type: request.type,
        reason: error instanceof AvhError ? error.reason : 'unexpected',
      });
      this.post({ type: 'error', id: request.id, message: safeMessage(error) });
    }
  }

  private async whileBusy(label: string, action: () => Promise<void>): Promise<void> {
    if (this.busy) throw new AvhError('operation-in-progress', 'Another restore is running; wait for it to finish.');
    this.setBusy(label);
    try {
      await action();
    } finally {
      this.setBusy(null);
      await this.refresh();
    }
  }

  /** Recomputes the view model (one git log + one store read) and pushes it; concurrent calls coalesce. */
  refresh(): Promise<void> {
    if (!this.view) return Promise.resolve();
    if (this.refreshQueued) return this.refreshing;
    this.refreshQueued = true;
    this.refreshing = this.refreshing.then(async () => {
      this.refreshQueued = false;
      const view = await this.compute();
      const wasBlocked = this.lastView.kind === 'blocked';
      this.lastView = view;
      this.post({ type: 'didChangeVersions', view });
      await this.postAgents();
      await this.followWorkingTree(view);
      if (view.kind === 'blocked' && !wasBlocked && this.view?.visible) this.resurfaceRecovery();
    });
    return this.refreshing;
  }

  /**
   * While the view is shown with a running or stopped turn above the versions, the repository's working tree is
   * watched and each change (debounced by the controller) refreshes the view, so its files changed so far follow the
   * agent; otherwise nothing is watched. Git runs only on those refreshes, never on a timer.
   */
  private async followWorkingTree(view: VersionsView): Promise<void> {
    const wanted =
      this.view?.visible === true &&
      view.kind === 'versions' &&
      (view.openTurns ?? []).some((t) => t.state !== 'no-change');
    const controller = wanted ? await this.choice.controller().catch(() => null) : null;
    if (this.live && this.live.controller !== controller) {
      this.live.watch.dispose();
      this.live = null;
    }
    if (controller && !this.live) {
      const watch = vscode.Disposable.from(
        controller.watchWorkingTree(),
        controller.onDidChangeWorkingTree(() => void this.refresh()),
      );
      this.live = { controller, watch };
    }
  }

  private async compute(): Promise<VersionsView> {
    let controller: RepositoryController;
    try {
      controller = await this.choice.controller();
    } catch (error) {
      if (error instanceof AvhError && error.reason === 'not-a-repository') return { kind: 'no-repository' };
      throw error;
    }
    // With several repositories the title bar names the one shown, beside its picker ("Agent Version History:
    // name"; VS Code hides a view's description in a container's title bar when the view is its only one).
    const several = (await this.choice.repositories()).length > 1;
    if (this.view) this.view.title = several ? path.basename(controller.root) : undefined;
    try {
      return await controller.history.versionsView(this.limit);
    } catch (error) {
      this.log.warn('view.refresh-failed', { reason: error instanceof AvhError ? error.reason : 'unexpected' });
      if (error instanceof AvhError && error.reason === 'recovery-required')
        return { kind: 'blocked', message: BLOCKED_MESSAGE };
      return this.lastView;
    }
  }

  /** Each agent's connection, while the empty state shows them (their settings files are read only then). */
  private async postAgents(): Promise<void> {
    const view = this.lastView;
    if (!this.view || !(view.kind === 'empty' || (view.kind === 'versions' && !view.hasTurns))) return;
    this.post({ type: 'didChangeAgents', agents: await this.agents.views((await this.folder()) ?? null) });
  }

  /** The repository the view shows, else the folder an action without one means (agents' project files). */
  private async folder(): Promise<string | undefined> {
    return (await this.choice.controller().catch(() => undefined))?.root ?? defaultWorkspaceFolder() ?? undefined;
  }

  private onShown(): void {
    void this.refresh().then(() => {
      if (this.lastView.kind === 'blocked') this.resurfaceRecovery();
    });
  }

  private resurfaceRecovery(): void {
    void vscode.commands.executeCommand(RESURFACE_RECOVERY_COMMAND);
  }

  private setBusy(busy: string | null): void {
    this.busy = busy;
    this.post({ type: 'didChangeBusy', busy });
  }

  private post(message: HostMessage): void {
    if (!this.view) return;
    if (!this.ready) {
      if (
        message.type === 'didChangeVersions' ||
        message.type === 'didChangeBusy' ||
        message.type === 'didChangeAgents'
      ) {
        // Only the latest state matters; replies are never queued (a request implies a ready webview).
        this.queue = this.queue.filter((m) => m.type !== message.type);
        this.queue.push(message);
      }
      return;
    }
    void this.view.webview.postMessage(message);
  }

  private flush(): void {
    const queued = this.queue;
    this.queue = [];
    for (const message of queued) this.post(message);
  }

  private async openReadme(section: ReadmeSection): Promise<void> {
    const readme = vscode.Uri.joinPath(this.extensionUri, 'README.md');
    await vscode.commands.executeCommand('markdown.showPreview', readme.with({ fragment: README_ANCHORS[section] }));
  }

  /** Content-free picture for the extension-host tests. */
  describe(): {
    resolved: boolean;
    ready: boolean;
    view: VersionsView['kind'];
    rows: number;
    top: string | null;
    html: string;
    warnings: number;
    lostChats: number;
    openTurns: { id: string; state: string; filesChanged: number | null; canUndo: boolean }[];
    /** Whether the working tree is watched now (a running or stopped turn is shown). */
    live: boolean;
  } {
    const rows = this.lastView.kind === 'versions' ? this.lastView.rows : [];
    const open = this.lastView.kind === 'versions' ? (this.lastView.openTurns ?? []) : [];
    const notices =
      this.lastView.kind === 'versions' || this.lastView.kind === 'empty' ? this.lastView.notices : undefined;
    return {
      openTurns: open.map((t) => ({ id: t.id, state: t.state, filesChanged: t.filesChanged, canUndo: t.canUndo })),
      live: this.live !== null,
      warnings: notices?.warnings.length ?? 0,
      lostChats: notices?.chats.length ?? 0,
      resolved: this.view !== undefined,
      ready: this.ready,
      view: this.lastView.kind,
      rows: rows.length,
      top: rows[0]?.oid ?? null,
      html: this.view?.webview.html ?? '',
    };
  }

  dispose(): void {
    this.live?.watch.dispose();
    this.live = null;
    for (const d of this.disposables) d.dispose();
  }
}

/** Registers the view, its repository picker, `Show Version History` and the test hook. */
export function registerHistoryView(
  context: vscode.ExtensionContext,
  registry: RepositoryRegistry,
  runner: RestoreRunner,
  branchLoss: BranchLossUi,
  log: EventLog,
  agents: AgentConnections,
): HistoryViewProvider {
  const choice = registerRepositoryPicker(context, registry, log);
  const provider = new HistoryViewProvider(context.extensionUri, registry, choice, runner, branchLoss, log, agents);
  context.subscriptions.push(
    provider,
    vscode.window.registerWebviewViewProvider(HISTORY_VIEW_ID, provider),
    vscode.commands.registerCommand(SHOW_HISTORY_COMMAND, () =>
      vscode.commands.executeCommand(`${HISTORY_VIEW_ID}.focus`),
    ),
  );
  // Test build only (scripts/build.mjs): the bundles users get never register `agentVersions._test.*`.
  if (typeof AVH_PRODUCTION_BUILD === 'undefined') {
    context.subscriptions.push(
      vscode.commands.registerCommand(HISTORY_VIEW_TEST_MESSAGE_COMMAND, (raw: unknown) => provider.receive(raw)),
      vscode.commands.registerCommand(HISTORY_VIEW_TEST_DESCRIBE_COMMAND, () => provider.describe()),
    );
  }
  return provider;
}
