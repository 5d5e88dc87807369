import * as vscode from 'vscode';
import { createApi, AgentVersionHistoryApi } from './vscode/extensionApi';
import { createOutputLog } from './vscode/outputLog';
import { RepositoryRegistry } from './vscode/repositoryRegistry';

/** Builds the pieces and wires them; opening a repository's state (and loading sql.js) waits until something needs it. */
export function activate(context: vscode.ExtensionContext): AgentVersionHistoryApi {
  const channel = vscode.window.createOutputChannel('Agent Version History', { log: true });
  const log = createOutputLog(channel);
  const registry = new RepositoryRegistry(log);
  context.subscriptions.push(channel, registry);
  log.info('extension.activate', { folders: vscode.workspace.workspaceFolders?.length ?? 0 });
  return createApi(registry);
}

export function deactivate(): void {}
