// Which repository the Version History view shows in a workspace with more than one: the one the user picked in
// the view's title bar (remembered per workspace), else the registry's default (the active editor's). With one
// repository the picker is not shown (context key MULTIPLE_REPOSITORIES_KEY, package.json `view/title`).
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EventLog } from '../core/log';
import type { RepositoryController } from './repositoryController';
import type { RepositoryRegistry } from './repositoryRegistry';

export const PICK_HISTORY_REPOSITORY_COMMAND = 'agentVersions.pickHistoryRepository';
const MULTIPLE_REPOSITORIES_KEY = 'agentVersions.multipleRepositories';
/** workspaceState: the root of the repository picked for the view. */
const PICKED_STATE_KEY = 'agentVersions.historyRepository';

interface RepositoryItem extends vscode.QuickPickItem {
  root: string;
}

/** The view's repository: what the picker chose, kept while that repository is still in the workspace. */
export class HistoryRepositoryChoice implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  /** The view's repository may have changed (picked, or the workspace's repositories changed). */
  readonly onDidChange = this.changed.event;
  /** Listed when the view first needs it (not at activation), again when the workspace's folders change. */
  private roots: Promise<string[]> | undefined;
  private readonly disposables: vscode.Disposable[] = [this.changed];

  constructor(
    private readonly registry: RepositoryRegistry,
    private readonly state: vscode.Memento,
    private readonly log: EventLog,
  ) {
    // Listed before: listed again (the title bar's picker follows). Either way the view looks again: one that found
    // no repository never listed them (folders that arrive after the extension started, a folder added later).
    const rescan = () => {
      if (this.roots) this.roots = this.scan();
      void Promise.resolve(this.roots).then(() => this.changed.fire());
    };
    this.disposables.push(
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        // Counts only: a late folder list is what a view stuck on "no repository" would miss.
        this.log.info('workspace.folders-changed', {
          folders: vscode.workspace.workspaceFolders?.length ?? 0,
          listed: this.roots !== undefined,
        });
        rescan();
      }),
    );
    // A repository an agent opened outside the workspace folders joins the list (registry.repositories()).
    this.disposables.push(
      registry.onDidOpen((c) => void this.roots?.then((roots) => roots.includes(c.root) || rescan())),
    );
  }

  /** The workspace's repositories (roots). */
  repositories(): Promise<string[]> {
    this.roots ??= this.scan();
    return this.roots;
  }

  /** The controller the view shows. */
  async controller(): Promise<RepositoryController> {
    const picked = this.state.get<string>(PICKED_STATE_KEY);
    if (picked && (await this.repositories()).includes(picked)) return this.registry.forPath(picked);
    return this.registry.defaultController();
  }

  /** Asks which repository the view shows (a quick pick, the shown one active) and remembers the answer. */
  async pick(): Promise<void> {
    const roots = await this.repositories();
    if (roots.length === 0) return;
    const shown = await this.controller().then(
      (c) => c.root,
      () => undefined,
    );
    const items: RepositoryItem[] = roots.map((root) => ({
      label: path.basename(root),
      description: root,
      iconPath: new vscode.ThemeIcon('repo'),
      root,
    }));
    const quickPick = vscode.window.createQuickPick<RepositoryItem>();
    quickPick.title = 'Version History';
    quickPick.placeholder = 'Choose the repository whose versions the view shows';
    quickPick.items = items;
    quickPick.activeItems = items.filter((i) => i.root === shown);
    const chosen = await new Promise<RepositoryItem | undefined>((resolve) => {
      quickPick.onDidAccept(() => resolve(quickPick.selectedItems[0]));
      quickPick.onDidHide(() => resolve(undefined));
      quickPick.show();
    });
    quickPick.dispose();
    if (!chosen || chosen.root === shown) return;
    await this.state.update(PICKED_STATE_KEY, chosen.root);
    this.changed.fire();
  }

  private async scan(): Promise<string[]> {
    const roots = await this.registry.repositories();
    this.log.info('view.repositories-listed', {
      folders: vscode.workspace.workspaceFolders?.length ?? 0,
      repositories: roots.length,
    });
    await vscode.commands.executeCommand('setContext', MULTIPLE_REPOSITORIES_KEY, roots.length > 1);
    return roots;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** The view's repository choice and the title-bar command that changes it. */
export function registerRepositoryPicker(
  context: vscode.ExtensionContext,
  registry: RepositoryRegistry,
  log: EventLog,
): HistoryRepositoryChoice {
  const choice = new HistoryRepositoryChoice(registry, context.workspaceState, log);
  context.subscriptions.push(
    choice,
    vscode.commands.registerCommand(PICK_HISTORY_REPOSITORY_COMMAND, () => choice.pick()),
  );
  return choice;
}
