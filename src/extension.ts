import * as vscode from 'vscode';
import { createApi, AgentVersionHistoryApi } from './vscode/extensionApi';
import { registerHistoryView } from './vscode/historyView';
import { createOutputLog, RECENT_LOG_COMMAND } from './vscode/outputLog';
import { RepositoryRegistry } from './vscode/repositoryRegistry';
import { registerRecoveryUi } from './vscode/recoveryUi';
import { registerRestoreCommands, RestoreRunner, TurnCancelledEvent } from './vscode/restoreCommands';
import { registerShowTurnChanges } from './vscode/versionChanges';

/** Builds the pieces and wires them; opening a repository's state (and loading sql.js) waits until something needs it. */
export function activate(context: vscode.ExtensionContext): AgentVersionHistoryApi {
  const channel = vscode.window.createOutputChannel('Agent Version History', { log: true });
  const { log, recent } = createOutputLog(channel);
  const registry = new RepositoryRegistry(log);
  context.subscriptions.push(channel, registry);
  const turnCancelled = new vscode.EventEmitter<TurnCancelledEvent>();
  context.subscriptions.push(turnCancelled, vscode.commands.registerCommand(RECENT_LOG_COMMAND, recent));
  const runner = new RestoreRunner(log, turnCancelled);
  registerRecoveryUi(context, registry, log);
  registerRestoreCommands(context, registry, runner);
  registerShowTurnChanges(context, registry, log);
  registerHistoryView(context, registry, runner, log);
  log.info('extension.activate', { folders: vscode.workspace.workspaceFolders?.length ?? 0 });
  return createApi(registry, turnCancelled.event);
}

export function deactivate(): void {}
