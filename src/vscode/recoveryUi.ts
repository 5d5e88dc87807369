import * as vscode from 'vscode';
import { AvhError, safeMessage } from '../core/errors';
import type { EventLog } from '../core/log';
import type { RepositoryController } from './repositoryController';
import { activeFileDirectory, RepositoryRegistry } from './repositoryRegistry';
import { RecoverySession } from './recoverySession';
import { HistoryStatusBar, RESURFACE_RECOVERY_COMMAND, StatusView } from './statusBar';
import type { RecoveryStateValue } from '../core/recovery/recoveryMachine';

/**
 * `recoveryRequired` / `recoveryDirty`: some repository of the window needs recovery (enables the recovery
 * commands, which ask which repository when several do). `activeRecoveryRequired`: the repository the active
 * editor belongs to needs it (disables Undo, Redo and Restore there only; the other repositories keep working).
 * `canRedo`: the active repository has something to redo.
 */
export const RECOVERY_CONTEXT_KEYS = [
  'agentVersions.recoveryRequired',
  'agentVersions.recoveryDirty',
  'agentVersions.activeRecoveryRequired',
  'agentVersions.canRedo',
] as const;
type ContextKey = (typeof RECOVERY_CONTEXT_KEYS)[number];

/** Content-free picture of the recovery UI for the extension-host tests (a command not contributed to the palette). */
export const RECOVERY_STATE_COMMAND = 'agentVersions._test.recoveryState';

export interface RecoveryUiState {
  statusText: string;
  statusTooltip: string;
  statusCommand: string | undefined;
  statusWarning: boolean;
  contextKeys: Record<ContextKey, boolean>;
  sessions: { state: RecoveryStateValue; notices: string[] }[];
}

/**
 * Guided recovery in VS Code (docs/design/recovery.md, docs/product-contract.md §6): one RecoverySession per opened
 * repository, the palette commands, the context keys their enablement uses, and the status bar item. Every opened
 * repository is checked for a recovery latch; the default repository is opened in the background at activation, so a
 * latch left by a crash, a reload or another process shows its notice again.
 */
export function registerRecoveryUi(
  context: vscode.ExtensionContext,
  registry: RepositoryRegistry,
  log: EventLog,
): void {
  const ui = new RecoveryUi(registry, log);
  context.subscriptions.push(
    ui,
    registry.onDidOpen((controller) => ui.track(controller)),
    registry.onDidChange(() => ui.scheduleUpdate()),
    vscode.window.onDidChangeActiveTextEditor(() => ui.followActiveRepository()),
    vscode.workspace.onDidChangeWorkspaceFolders(() => ui.followActiveRepository()),
    vscode.commands.registerCommand('agentVersions.useCurrentVersion', () => ui.run('accept')),
    vscode.commands.registerCommand('agentVersions.checkRepositoryAgain', () => ui.run('accept')),
    vscode.commands.registerCommand('agentVersions.saveAndUseCurrentVersion', () => ui.run('save')),
    vscode.commands.registerCommand(RESURFACE_RECOVERY_COMMAND, (root?: unknown) =>
      ui.resurface(typeof root === 'string' ? root : undefined),
    ),
  );
  // Test build only (scripts/build.mjs): the bundles users get never register `agentVersions._test.*`.
  if (typeof AVH_PRODUCTION_BUILD === 'undefined')
    context.subscriptions.push(vscode.commands.registerCommand(RECOVERY_STATE_COMMAND, () => ui.describe()));
  void registry.all().then((controllers) => controllers.forEach((c) => ui.track(c)));
  ui.followActiveRepository();
}

class RecoveryUi implements vscode.Disposable {
  private readonly sessions = new Map<string, RecoverySession>();
  private readonly statusBar = new HistoryStatusBar();
  private readonly contextKeys = new Map<ContextKey, boolean>();
  /** The repository the status bar follows (the active editor's, else the first workspace folder's). */
  private current: RepositoryController | null = null;
  private currentFolder: string | null | undefined;
  private updateTimer: NodeJS.Timeout | undefined;
  private updating: Promise<void> = Promise.resolve();

  constructor(
    private readonly registry: RepositoryRegistry,
    private readonly log: EventLog,
  ) {
    for (const key of RECOVERY_CONTEXT_KEYS) this.setContextKey(key, false);
  }

  track(controller: RepositoryController): void {
    if (this.sessions.has(controller.root)) return;
    const session = new RecoverySession(controller, this.log, () => this.prefixFor(controller));
    this.sessions.set(controller.root, session);
    session.onDidChange(() => this.scheduleUpdate());
    void session.refresh();
  }

  /**
   * Re-resolves the default repository when the active editor's folder changed (resolving spawns git, so not on every
   * switch).
   */
  followActiveRepository(): void {
    const folder = activeFolder();
    if (folder === this.currentFolder) return;
    this.currentFolder = folder;
    void this.registry.defaultController().then(
      (controller) => {
        this.track(controller);
        this.current = controller;
        this.scheduleUpdate(0);
      },
      (error: unknown) => {
        if (!(error instanceof AvhError && error.reason === 'not-a-repository'))
          this.log.warn('recovery.open-failed', { reason: error instanceof AvhError ? error.reason : 'unexpected' });
        this.current = null;
        this.scheduleUpdate(0);
      },
    );
  }

  scheduleUpdate(delay = 50): void {
    if (this.updateTimer) clearTimeout(this.updateTimer);
    this.updateTimer = setTimeout(() => {
      this.updateTimer = undefined;
      this.updating = this.updating
        .then(() => this.update())
        .catch((error: unknown) =>
          this.log.warn('recovery.status-failed', { reason: error instanceof AvhError ? error.reason : 'unexpected' }),
        );
    }, delay);
  }

  /** Runs a palette command on the repository that needs it (asking which one when several do). */
  async run(action: 'accept' | 'save'): Promise<RecoveryStateValue | undefined> {
    const candidates = [...this.sessions.values()].filter((s) =>
      action === 'save' ? s.canSave || s.state === 'saving' : s.pending,
    );
    if (candidates.length === 0) {
      void vscode.window.showInformationMessage(
        action === 'save'
          ? 'Agent Version History: there are no changes waiting to be saved for recovery. ' +
              'Use "Use Current Version" first.'
          : 'Agent Version History: no repository needs version recovery.',
      );
      return undefined;
    }
    const session = candidates.length === 1 ? candidates[0] : await pickSession(candidates);
    if (!session) return undefined;
    try {
      return await (action === 'save' ? session.save() : session.accept());
    } catch (error) {
      void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
      return session.state;
    }
  }

  resurface(root?: string): void {
    const session = root ? this.sessions.get(root) : [...this.sessions.values()].find((s) => s.pending);
    session?.resurface();
  }

  describe(): RecoveryUiState {
    return {
      statusText: this.statusBar.text,
      statusTooltip: this.statusBar.tooltip,
      statusCommand: this.statusBar.command,
      statusWarning: this.statusBar.warning,
      contextKeys: Object.fromEntries(
        RECOVERY_CONTEXT_KEYS.map((k) => [k, this.contextKeys.get(k) ?? false]),
      ) as Record<ContextKey, boolean>,
      sessions: [...this.sessions.values()].map((s) => ({ state: s.state, notices: [...s.shownNotices] })),
    };
  }

  private async update(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.setContextKey(
      'agentVersions.recoveryRequired',
      sessions.some((s) => s.pending),
    );
    this.setContextKey(
      'agentVersions.recoveryDirty',
      sessions.some((s) => s.canSave),
    );
    const session = this.current ? this.sessions.get(this.current.root) : undefined;
    this.setContextKey('agentVersions.activeRecoveryRequired', session?.pending ?? false);
    let view: StatusView = { kind: 'none' };
    let canRedo = false;
    if (this.current && session?.pending) {
      const { context } = session.snapshot;
      const detail =
        session.state === 'blocked' && context.assessment?.kind === 'blocked'
          ? context.assessment.message
          : session.state === 'failed'
            ? (context.error?.message ?? null)
            : null;
      view = { kind: 'recovery', repository: session.name, root: session.root, state: session.state, detail };
    } else if (this.current) {
      const counts = await this.current.history.historyCounts().catch(() => null);
      canRedo = (counts?.redo ?? 0) > 0;
      view = { kind: 'history', repository: session?.name ?? this.current.root, counts };
    }
    this.setContextKey('agentVersions.canRedo', canRedo);
    this.statusBar.show(view);
  }

  private setContextKey(key: ContextKey, value: boolean): void {
    if (this.contextKeys.get(key) === value) return;
    this.contextKeys.set(key, value);
    void vscode.commands.executeCommand('setContext', key, value);
  }

  private prefixFor(controller: RepositoryController): string {
    return (vscode.workspace.workspaceFolders?.length ?? 0) > 1 ? `${controller.root.split(/[\\/]/).pop()}: ` : '';
  }

  dispose(): void {
    if (this.updateTimer) clearTimeout(this.updateTimer);
    for (const s of this.sessions.values()) s.dispose();
    this.sessions.clear();
    this.statusBar.dispose();
  }
}

/**
 * What the default repository depends on: the active editor's folder (inside a workspace folder), else the first
 * workspace folder.
 */
function activeFolder(): string | null {
  return activeFileDirectory() ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? null;
}

async function pickSession(sessions: RecoverySession[]): Promise<RecoverySession | undefined> {
  const picked = await vscode.window.showQuickPick(
    sessions.map((s) => ({ label: s.name, description: s.root, session: s })),
    {
      title: 'Version History',
      placeHolder: 'Which repository?',
    },
  );
  return picked?.session;
}
