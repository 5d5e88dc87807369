import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EventLog } from '../core/log';
import { VersionHistory } from '../core/versionHistory';

/**
 * One repository's controller in the extension host: owns its VersionHistory and watches the state directory
 * and git dir so changes made by other processes (the CLI, a second window) refresh listeners.
 */
export class RepositoryController implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly watchers: fs.FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;

  private constructor(readonly history: VersionHistory, private readonly log: EventLog) {
    const repo = history.repository;
    for (const dir of [repo.stateDir, repo.gitDir, path.join(repo.gitDir, 'logs')]) {
      try {
        const watcher = fs.watch(dir, { persistent: false }, () => this.scheduleChange());
        watcher.on('error', () => watcher.close());
        this.watchers.push(watcher);
      } catch {
        // A missing logs/ folder (reflogs off) only means fewer wake-ups; our own writes still fire.
      }
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
    this.changed.dispose();
    void this.history.close().catch(() => this.log.warn('store.close-failed'));
  }
}
