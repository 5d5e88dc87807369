import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EventLog } from '../core/log';
import { commonGitDir, VersionHistory } from '../core/versionHistory';

/** Files in the git dir whose change means the versions changed: HEAD moved or a packed ref did. */
const GIT_DIR_FILES = new Set(['HEAD', 'packed-refs']);
/** While the working tree is watched, its changes are told at most this often (an agent writes in bursts). */
const WORKING_TREE_INTERVAL_MS = 500;

/**
 * One repository's controller in the extension host: owns its VersionHistory and watches HEAD, the branch
 * refs and our state files (debounced, no polling of git), so changes made by other processes (the CLI, a
 * terminal commit, a second window) fire `onDidChange`, which the API exposes as `onDidChangeVersions`.
 */
export class RepositoryController implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly watchers: fs.FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly workingTreeChanged = new vscode.EventEmitter<void>();
  /**
   * A file of the working tree changed (outside the git dir), while someone holds watchWorkingTree(): the Version
   * History view's running and stopped turns count their files again. Never fires onDidChange (no version changed).
   */
  readonly onDidChangeWorkingTree = this.workingTreeChanged.event;
  private treeWatcher: vscode.Disposable | undefined;
  private treeHolders = 0;
  private treeTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly history: VersionHistory,
    readonly log: EventLog,
  ) {
    const repo = history.repository;
    const commonDir = commonGitDir(repo.gitDir);
    // Line attribution's private files (core/blame: its graft files, private git dirs) are no change of our records.
    this.watch(repo.stateDir, {}, (file) => file !== 'blame');
    this.watch(repo.gitDir, {}, (file) => file !== null && GIT_DIR_FILES.has(file));
    if (commonDir !== repo.gitDir) this.watch(commonDir, {}, (file) => file === 'packed-refs');
    // Branch refs live in the common dir (shared by linked worktrees); branch names may contain slashes.
    this.watch(path.join(commonDir, 'refs', 'heads'), { recursive: true }, () => true);
  }

  private watch(dir: string, options: { recursive?: boolean }, relevant: (file: string | null) => boolean): void {
    try {
      const watcher = fs.watch(dir, { persistent: false, ...options }, (_event, file) => {
        if (relevant(typeof file === 'string' ? file.replace(/\.lock$/, '') : null)) this.scheduleChange();
      });
      watcher.on('error', () => watcher.close());
      this.watchers.push(watcher);
    } catch {
      // A folder that does not exist yet (no branch yet) only means fewer wake-ups; our own writes still fire.
    }
  }

  static async open(folder: string, log: EventLog): Promise<RepositoryController> {
    const history = await VersionHistory.open(folder, { log });
    const controller = new RepositoryController(history, log);
    for (const notice of history.notices) {
      log.warn('state.notice', { kind: notice.kind, turnsRecovered: notice.turnsRecovered });
      void vscode.window.showWarningMessage(notice.message);
    }
    return controller;
  }

  get root(): string {
    return this.history.repository.root;
  }

  /**
   * Watches the working tree until the returned disposable is disposed (held by the view while it lists a running or
   * stopped turn): VS Code's own file watcher reports the changes, debounced here; git is never polled.
   */
  watchWorkingTree(): vscode.Disposable {
    if (this.treeHolders++ === 0) this.startTreeWatcher();
    let held = true;
    return {
      dispose: () => {
        if (!held) return;
        held = false;
        if (--this.treeHolders === 0) this.stopTreeWatcher();
      },
    };
  }

  private startTreeWatcher(): void {
    const gitDir = this.history.repository.gitDir + path.sep;
    const watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(vscode.Uri.file(this.root), '**'),
    );
    const changed = (uri: vscode.Uri) => {
      if (!(uri.fsPath + path.sep).startsWith(gitDir) && !this.treeTimer)
        this.treeTimer = setTimeout(() => {
          this.treeTimer = undefined;
          this.workingTreeChanged.fire();
        }, WORKING_TREE_INTERVAL_MS);
    };
    const listeners = [watcher.onDidCreate(changed), watcher.onDidChange(changed), watcher.onDidDelete(changed)];
    this.treeWatcher = vscode.Disposable.from(watcher, ...listeners);
  }

  private stopTreeWatcher(): void {
    this.treeWatcher?.dispose();
    this.treeWatcher = undefined;
    if (this.treeTimer) clearTimeout(this.treeTimer);
    this.treeTimer = undefined;
  }

  /** Signals a change now (after our own writes) rather than waiting for the file watchers. */
  notifyChanged(): void {
    this.scheduleChange(0);
  }

  private scheduleChange(delay = 150): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.changed.fire();
    }, delay);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.watchers) w.close();
    this.stopTreeWatcher();
    this.workingTreeChanged.dispose();
    this.changed.dispose();
    void this.history.close().catch(() => this.log.warn('store.close-failed'));
  }
}
