import * as vscode from 'vscode';
import type { RecoveryStateValue } from '../core/recovery/recoveryMachine';
import type { HistoryCounts } from '../core/versionHistory';

export const RESURFACE_RECOVERY_COMMAND = 'agentVersions._resurfaceRecoveryNotice';
export const HISTORY_VIEW_ID = 'agentVersions.versionHistory';
/** Focuses the Version History pane (its own activity-bar container) (the status bar item's click). */
export const SHOW_HISTORY_COMMAND = 'agentVersions.showVersionHistory';

/** What the status bar item shows for the default repository. */
export type StatusView =
  | { kind: 'none' }
  | { kind: 'history'; repository: string; counts: HistoryCounts | null }
  | { kind: 'recovery'; repository: string; root: string; state: RecoveryStateValue; detail: string | null };

/** The one status bar item: `undo:N redo:M` history counts, or the recovery indicator while recovery is required. */
export class HistoryStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('agentVersions.status', vscode.StatusBarAlignment.Left, 50);

  constructor() {
    this.item.name = 'Agent Version History';
  }

  get text(): string {
    return this.item.text;
  }

  get tooltip(): string {
    return typeof this.item.tooltip === 'string' ? this.item.tooltip : '';
  }

  get command(): string | undefined {
    const command = this.item.command;
    return typeof command === 'string' ? command : command?.command;
  }

  get warning(): boolean {
    return this.item.backgroundColor !== undefined;
  }

  show(view: StatusView): void {
    if (view.kind === 'none') {
      this.item.hide();
      return;
    }
    if (view.kind === 'history') {
      const { counts } = view;
      this.item.text = counts ? `$(history) undo:${counts.undo} redo:${counts.redo}` : '$(history) Version History';
      this.item.tooltip = counts
        ? `Agent Version History — ${view.repository}: ${plural(counts.undo, 'agent turn')} can be undone, ` +
          `${plural(counts.redo, 'undo')} can be redone. Click to show Version History.`
        : `Agent Version History — ${view.repository}. Click to show Version History.`;
      this.item.backgroundColor = undefined;
      this.item.command = SHOW_HISTORY_COMMAND;
    } else {
      this.item.text = '$(warning) Version recovery needed';
      this.item.tooltip = `Agent Version History — ${view.repository}: ${recoveryTooltip(view.state, view.detail)}`;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
      this.item.command = {
        command: RESURFACE_RECOVERY_COMMAND,
        title: 'Show the version recovery notice',
        arguments: [view.root],
      };
    }
    this.item.accessibilityInformation = { label: `${this.item.text.replace(/\$\([\w-]+\)\s*/, '')}. ${this.tooltip}` };
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}

function recoveryTooltip(state: RecoveryStateValue, detail: string | null): string {
  switch (state) {
    case 'validating':
      return 'checking the current repository…';
    case 'saving':
      return 'saving the current version…';
    case 'dirty':
      return (
        'your current changes need to be saved before Version History can continue. ' +
        'Click to show the notice, then choose "Save changes & use current version".'
      );
    case 'blocked':
      return `${detail ?? 'the repository cannot be used as it is.'} Click to show the notice.`;
    case 'failed':
      return `${detail ?? 'the last attempt failed.'} Click to show the notice and try again.`;
    default:
      return (
        'an earlier restore could not be verified, so undo, redo and restore are paused. ' +
        'Click to show the notice, then choose "Use current version".'
      );
  }
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
