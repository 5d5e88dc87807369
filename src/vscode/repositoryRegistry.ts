import * as path from 'node:path';
import * as vscode from 'vscode';
import { AvhError, isAvhError } from '../core/errors';
import { findRepository } from '../core/git/initRepository';
import { resolveRepository } from '../core/git/repository';
import { EventLog } from '../core/log';
import { RepositoryController } from './repositoryController';

/** The folder of the active editor's file when it lies inside a workspace folder (else null). */
export function activeFileDirectory(): string | null {
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active?.scheme !== 'file' || !vscode.workspace.getWorkspaceFolder(active)) return null;
  return path.dirname(active.fsPath);
}

/** The workspace folder an action without a repository means: the active editor's, else the first (local ones only). */
export function defaultWorkspaceFolder(): string | null {
  const active = vscode.window.activeTextEditor?.document.uri;
  const own = active?.scheme === 'file' ? vscode.workspace.getWorkspaceFolder(active) : undefined;
  if (own) return own.uri.fsPath;
  return vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath ?? null;
}

/** One controller per repository (multi-root workspaces), opened lazily on first need. */
export class RepositoryRegistry implements vscode.Disposable {
  private readonly controllers = new Map<string, Promise<RepositoryController>>();
  private readonly changed = new vscode.EventEmitter<{ repository: string }>();
  readonly onDidChange = this.changed.event;
  private readonly opened = new vscode.EventEmitter<RepositoryController>();
  readonly onDidOpen = this.opened.event;

  /**
   * `enable` asks to Enable Version History in a folder without git (issue 13); resolves whether there now is a
   * repository.
   */
  constructor(
    private readonly log: EventLog,
    private readonly enable?: (folder: string) => Promise<boolean>,
  ) {}

  /**
   * The controller for an action of the user or an agent (`folder`, else the default one). In a folder without
   * git it offers to Enable Version History and, once enabled, proceeds there; otherwise the same error as before.
   */
  async forAction(folder?: string): Promise<RepositoryController> {
    try {
      return folder === undefined ? await this.defaultController() : await this.forPath(folder);
    } catch (error) {
      if (!isAvhError(error, 'not-a-repository') || !this.enable) throw error;
      const target = folder ?? defaultWorkspaceFolder();
      // Only a folder in no repository at all: a bare or refused repository keeps its own message.
      if (!target || (await findRepository(target).catch(() => undefined)) !== null) throw error;
      if (!(await this.enable(target))) throw error;
      return this.forPath(target);
    }
  }

  /** The controller for the repository containing `folder`. */
  async forPath(folder: string): Promise<RepositoryController> {
    const repo = await resolveRepository(folder);
    let controller = this.controllers.get(repo.root);
    if (!controller) {
      controller = RepositoryController.open(repo.root, this.log).then((c) => {
        c.onDidChange(() => this.changed.fire({ repository: c.root }));
        this.opened.fire(c);
        return c;
      });
      controller.catch(() => this.controllers.delete(repo.root));
      this.controllers.set(repo.root, controller);
    }
    return controller;
  }

  /**
   * The repository an API call without `repository` means: the active editor's file's, else its workspace folder's,
   * else the first workspace folder that is one.
   */
  async defaultController(): Promise<RepositoryController> {
    const candidates: string[] = [];
    const file = activeFileDirectory();
    if (file) {
      // The active editor's own repository first (a repository nested in a workspace folder is its own, as in
      // VS Code's Source Control); a folder that is gone or unreadable falls back to the workspace folder.
      try {
        return await this.forPath(file);
      } catch {
        // fall through to the workspace folders
      }
    }
    const active = vscode.window.activeTextEditor?.document.uri;
    if (active?.scheme === 'file') {
      const folder = vscode.workspace.getWorkspaceFolder(active);
      if (folder) candidates.push(folder.uri.fsPath);
    }
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      if (folder.uri.scheme === 'file') candidates.push(folder.uri.fsPath);
    }
    for (const candidate of candidates) {
      try {
        return await this.forPath(candidate);
      } catch (error) {
        const skipped =
          error instanceof AvhError && ['not-a-repository', 'repository-not-trusted'].includes(error.reason);
        if (!skipped) throw error;
      }
    }
    throw new AvhError('not-a-repository', 'No workspace folder is a git repository.');
  }

  /**
   * The repositories the workspace holds, each once by root, in workspace folder order: each local folder's
   * repository, then any other one opened so far (an agent's, nested in a folder). Opens no controller.
   */
  async repositories(): Promise<string[]> {
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
    const found = await Promise.all(
      folders.map((f) =>
        resolveRepository(f.uri.fsPath).then(
          (repo) => repo.root,
          () => null,
        ),
      ),
    );
    const opened = (await this.all()).map((c) => c.root);
    return [...new Set([...found, ...opened].filter((root): root is string => root !== null))];
  }

  /** Controllers opened so far. */
  async all(): Promise<RepositoryController[]> {
    const settled = await Promise.allSettled([...this.controllers.values()]);
    return settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  }

  dispose(): void {
    for (const c of this.controllers.values())
      void c.then(
        (x) => x.dispose(),
        () => undefined,
      );
    this.controllers.clear();
    this.changed.dispose();
    this.opened.dispose();
  }
}
