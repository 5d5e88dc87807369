import * as vscode from 'vscode';
import { AvhError, safeMessage } from '../core/errors';
import type { EventLog } from '../core/log';
import type { RestoreRequest, RestoreResult } from '../core/restore/restoreService';
import type { VersionInfo } from '../core/turns/versions';
import type { RepositoryController } from './repositoryController';
import type { RepositoryRegistry } from './repositoryRegistry';

export interface TurnCancelledEvent {
  turnId: string;
  chatId: string;
  repository: string;
}

const KIND_LABEL: Record<VersionInfo['kind'], string> = {
  agent: 'Agent',
  interrupted: 'Interrupted',
  recovery: 'Recovery',
  restore: 'Restore',
  user: 'Commit',
};

/** Undo Agent Turn, Redo Agent Turn and Restore Version… from the palette (and the status bar). */
export function registerRestoreCommands(
  context: vscode.ExtensionContext,
  registry: RepositoryRegistry,
  log: EventLog,
  turnCancelled: vscode.EventEmitter<TurnCancelledEvent>,
): void {
  const run = async (controller: RepositoryController, request: RestoreRequest, title: string): Promise<RestoreResult | undefined> => {
    const history = controller.history;
    const preview = await history.preview(request);
    if (preview.nothing) return { result: preview.nothing };
    let confirmUserCommits = false;
    if (preview.userCommits > 0) {
      const n = preview.userCommits;
      const choice = await vscode.window.showWarningMessage(
        `${title} will undo ${n} commit${n === 1 ? '' : 's'} you made yourself after that version.`,
        { modal: true, detail: 'They stay reachable in Version History; a new [Restore] version is added on top.' },
        'Continue',
      );
      if (choice !== 'Continue') return undefined;
      confirmUserCommits = true;
    }
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `${title}…` }, () =>
      request.kind === 'undo'
        ? history.undo(request.turnId, { confirmUserCommits, onTurnCancelled: (t) => turnCancelled.fire({ ...t, repository: controller.root }) })
        : request.kind === 'redo' ? history.redo({ confirmUserCommits }) : history.restore(request.target, { confirmUserCommits }));
  };

  const report = (controller: RepositoryController, result: RestoreResult | undefined, kind: RestoreRequest['kind']) => {
    controller.notifyChanged();
    if (!result) return;
    switch (result.result) {
      case 'nothing-to-undo':
        void vscode.window.showInformationMessage('There is no agent turn to undo on this branch.');
        return;
      case 'nothing-to-redo':
        void vscode.window.showInformationMessage('There is nothing to redo.');
        return;
      case 'no-change':
        void vscode.window.showInformationMessage('Nothing changed: the files already match that version, so no version was made.');
        return;
      case 'restored': {
        const target = result.target?.slice(0, 7) ?? '';
        if (result.preserved && result.turnId) {
          const turnId = result.turnId;
          // Not awaited: the command finishes now; the button stays usable as long as the toast is.
          void vscode.window.showInformationMessage(
            `Agent turn undone. Its partial changes were saved as an Interrupted entry in Version History (${result.preserved.slice(0, 7)}).`,
            'Copy Prompt',
          ).then(async (choice) => {
            if (choice !== 'Copy Prompt') return;
            const prompt = await controller.history.promptOf(turnId);
            if (prompt !== null) await vscode.env.clipboard.writeText(prompt);
          });
          return;
        }
        const verb = kind === 'undo' ? 'Agent turn undone' : kind === 'redo' ? 'Agent turn redone' : 'Version restored';
        void vscode.window.showInformationMessage(`${verb} — restored version ${target} as a new [Restore] version.`);
      }
    }
  };

  const guarded = (kind: RestoreRequest['kind'], pick: (c: RepositoryController) => Promise<RestoreRequest | undefined>, title: string) => async () => {
    let controller: RepositoryController | undefined;
    try {
      controller = await registry.defaultController();
      const request = await pick(controller);
      if (!request) return;
      const result = await run(controller, request, title);
      report(controller, result, kind);
    } catch (error) {
      controller?.notifyChanged();
      log.warn('restore.command-failed', { kind, reason: error instanceof AvhError ? error.reason : 'unexpected' });
      if (error instanceof AvhError && error.reason === 'recovery-required') return; // the recovery notice explains it
      void vscode.window.showErrorMessage(`Agent Version History: ${safeMessage(error)}`);
    }
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('agentVersions.undo', guarded('undo', async () => ({ kind: 'undo' }), 'Undo Agent Turn')),
    vscode.commands.registerCommand('agentVersions.redo', guarded('redo', async () => ({ kind: 'redo' }), 'Redo Agent Turn')),
    vscode.commands.registerCommand('agentVersions.restore', guarded('restore', pickVersion, 'Restore Version')),
  );
}

async function pickVersion(controller: RepositoryController): Promise<RestoreRequest | undefined> {
  const versions = await controller.history.getVersions(500);
  const now = Date.now() / 1000;
  const picked = await vscode.window.showQuickPick(
    versions.map((v) => ({
      label: v.subject,
      description: `${KIND_LABEL[v.kind]}${v.outcome ? ` · ${v.outcome}` : ''} · ${v.oid.slice(0, 7)} · ${relativeTime(now - v.time)}`,
      oid: v.oid,
    })),
    { title: 'Version History — restore a version', placeHolder: 'Pick the version to restore (a new [Restore] version is added; nothing is rewritten)', matchOnDescription: true },
  );
  return picked ? { kind: 'restore', target: picked.oid } : undefined;
}

function relativeTime(seconds: number): string {
  if (seconds < 60) return 'just now';
  const units: [number, string][] = [[86400 * 365, 'year'], [86400 * 30, 'month'], [86400, 'day'], [3600, 'hour'], [60, 'minute']];
  for (const [size, name] of units) {
    if (seconds >= size) {
      const n = Math.floor(seconds / size);
      return `${n} ${name}${n === 1 ? '' : 's'} ago`;
    }
  }
  return 'just now';
}
