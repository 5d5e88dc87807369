import * as vscode from 'vscode';
import { AvhError, safeMessage } from '../core/errors';
import type { EventLog } from '../core/log';
import {
  BLOCKED_MESSAGE,
  HostMessage,
  parseWebviewMessage,
  ReadmeSection,
  WebviewMessage,
  WebviewRequest,
} from '../shared/protocol';
import type { VersionsView } from '../shared/viewModels';
import { historyViewHtml } from './historyViewHtml';
import type { RepositoryController } from './repositoryController';
import type { RepositoryRegistry } from './repositoryRegistry';
import type { BranchLossUi } from './branchLoss';
import type { RestoreRunner } from './restoreCommands';
import { HISTORY_VIEW_ID, RESURFACE_RECOVERY_COMMAND, SHOW_HISTORY_COMMAND } from './statusBar';
import { showVersionChanges } from './versionChanges';

/** Test-only (not in the palette): feeds one raw payload to the host as if the webview had posted it. */
export const HISTORY_VIEW_TEST_MESSAGE_COMMAND = 'agentVersions._test.historyViewMessage';
/** Test-only: a content-free picture of the view's host state. */
export const HISTORY_VIEW_TEST_DESCRIBE_COMMAND = 'agentVersions._test.historyView';

/** The README headings the empty state links to. */
const README_ANCHORS: Record<ReadmeSection, string> = {
  'extension-api': 'recording-turns-from-an-agent-extension',
  'claude-code-hooks': 'recording-turns-from-claude-code',
};

/** Versions sent at first; each "load more" adds five pages. */
const PAGE = 200;
const MAX_VERSIONS = 10_000;

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

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly registry: RepositoryRegistry,
    private readonly runner: RestoreRunner,
    private readonly branchLoss: BranchLossUi,
    private readonly log: EventLog,
  ) {
    this.disposables.push(registry.onDidChange(() => this.refresh()));
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

  /** Validates a message from the webview and acts on it; anything malformed or unknown is logged content-free and dropped. */
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
    else this.command(message);
    return true;
  }

  private command(message: Exclude<WebviewMessage, WebviewRequest>): void {
    switch (message.type) {
      case 'ready':
        this.ready = true;
        this.flush();
        void this.refresh();
        return;
      case 'openReadme':
        void this.openReadme(message.section);
    }
  }

  private async answer(request: WebviewRequest): Promise<void> {
    try {
      await this.handle(request);
      this.post({ type: 'reply', id: request.id });
    } catch (error) {
      this.log.warn('view.request-failed', {
        type: request.type,
        reason: error instanceof AvhError ? error.reason : 'unexpected',
      });
      this.post({ type: 'error', id: request.id, message: safeMessage(error) });
    }
  }

  private async handle(request: WebviewRequest): Promise<void> {
    if (request.type === 'loadMore') {
      this.limit = Math.min(this.limit + PAGE * 5, MAX_VERSIONS);
      await this.refresh();
      return;
    }
    const controller = await this.registry.defaultController();
    if (request.type === 'checkBranchesAgain') {
      controller.history.forgetBranchAnswers();
      await this.refresh();
      return;
    }
    if (request.type === 'continueOnNewBranch' || request.type === 'restoreChatBranch') {
      if (this.busy) throw new AvhError('operation-in-progress', 'Another restore is running; wait for it to finish.');
      this.setBusy(
        request.type === 'continueOnNewBranch' ? 'Continue on a New Branch…' : 'Restoring the branch from the remote…',
      );
      try {
        if (request.type === 'continueOnNewBranch')
          await this.branchLoss.continueOnNewBranch(controller, request.chatId);
        else await this.branchLoss.restoreFromRemote(controller, request.chatId);
      } finally {
        this.setBusy(null);
        await this.refresh();
      }
      return;
    }
    if (request.type === 'showChanges') {
      const row = this.lastView.kind === 'versions' ? this.lastView.rows.find((r) => r.oid === request.oid) : undefined;
      await showVersionChanges(controller, request.oid, row?.label ?? 'Version');
      return;
    }
    if (this.busy) throw new AvhError('operation-in-progress', 'Another restore is running; wait for it to finish.');
    const title =
      request.type === 'undo' ? 'Undo Agent Turn' : request.type === 'redo' ? 'Redo Agent Turn' : 'Restore Version';
    this.setBusy(`${title}…`);
    try {
      await this.runner.perform(
        controller,
        request.type === 'undo'
          ? { kind: 'undo', turnId: request.turnId }
          : request.type === 'redo'
            ? { kind: 'redo' }
            : { kind: 'restore', target: request.oid },
        title,
      );
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
      if (view.kind === 'blocked' && !wasBlocked && this.view?.visible) this.resurfaceRecovery();
    });
    return this.refreshing;
  }

  private async compute(): Promise<VersionsView> {
    let controller: RepositoryController;
    try {
      controller = await this.registry.defaultController();
    } catch (error) {
      if (error instanceof AvhError && error.reason === 'not-a-repository') return { kind: 'no-repository' };
      throw error;
    }
    try {
      return await controller.history.versionsView(this.limit);
    } catch (error) {
      this.log.warn('view.refresh-failed', { reason: error instanceof AvhError ? error.reason : 'unexpected' });
      if (error instanceof AvhError && error.reason === 'recovery-required')
        return { kind: 'blocked', message: BLOCKED_MESSAGE };
      return this.lastView;
    }
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
      if (message.type === 'didChangeVersions' || message.type === 'didChangeBusy') {
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
  } {
    const rows = this.lastView.kind === 'versions' ? this.lastView.rows : [];
    const notices =
      this.lastView.kind === 'versions' || this.lastView.kind === 'empty' ? this.lastView.notices : undefined;
    return {
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
    for (const d of this.disposables) d.dispose();
  }
}

/** Registers the view, `Show Version History` and the test hook. */
export function registerHistoryView(
  context: vscode.ExtensionContext,
  registry: RepositoryRegistry,
  runner: RestoreRunner,
  branchLoss: BranchLossUi,
  log: EventLog,
): HistoryViewProvider {
  const provider = new HistoryViewProvider(context.extensionUri, registry, runner, branchLoss, log);
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
