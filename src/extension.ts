import * as vscode from 'vscode';
import { startGitLauncher } from './core/git/gitLauncher';
import { configureGitExecutable } from './core/git/gitRunner';
import { AgentConnector } from './vscode/agentConnect';
import { registerAgentCommands } from './vscode/agentCommands';
import { AgentConnections } from './vscode/agentStates';
import { TEST_AGENT_TURN_COMMAND } from './vscode/enableCopy';
import { EnableVersionHistory, runTestAgentTurn } from './vscode/enableVersionHistory';
import { registerBranchLoss } from './vscode/branchLoss';
import { createApi, AgentVersionHistoryApi } from './vscode/extensionApi';
import { registerHistoryView } from './vscode/historyView/host';
import { createOutputLog, RECENT_LOG_COMMAND } from './vscode/outputLog';
import { RepositoryRegistry } from './vscode/repositoryRegistry';
import { registerRecoveryUi } from './vscode/recoveryUi';
import { installHookLauncher } from './vscode/launcherInstall';
import { registerRestoreCommands, RestoreRunner, TurnCancelledEvent } from './vscode/restoreCommands';
import { registerShowTurnChanges } from './vscode/versionChanges';
import { registerBlame } from './vscode/blameCommands';
import { ChatForkUi, registerChatForkCommands } from './vscode/chatForkCommands';
import { CheckpointNotices, registerCheckpointCommands } from './vscode/checkpointCommands';

/**
 * Builds the pieces and wires them; opening a repository's state (and loading sql.js) waits until something needs
 * it.
 */
export function activate(context: vscode.ExtensionContext): AgentVersionHistoryApi {
  const channel = vscode.window.createOutputChannel('Agent Version History', { log: true });
  const { log, recent } = createOutputLog(channel);
  useConfiguredGit();
  // git is started from a small launcher process, not from this (large, shared) extension host: docs/design.md.
  context.subscriptions.push({ dispose: startGitLauncher() });
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('git.path') && useConfiguredGit()),
  );
  const enabler = new EnableVersionHistory(context.globalState, log);
  const registry = new RepositoryRegistry(log, (folder) => enabler.ask(folder));
  context.subscriptions.push(channel, registry);
  const turnCancelled = new vscode.EventEmitter<TurnCancelledEvent>();
  context.subscriptions.push(turnCancelled);
  // Test build only (scripts/build.mjs): the bundles users get never register `agentVersions._test.*`.
  if (typeof AVH_PRODUCTION_BUILD === 'undefined')
    context.subscriptions.push(vscode.commands.registerCommand(RECENT_LOG_COMMAND, recent));
  const branchLoss = registerBranchLoss(context, registry, log);
  const chatFork = new ChatForkUi(log);
  const runner = new RestoreRunner(log, turnCancelled, branchLoss, chatFork);
  registerRecoveryUi(context, registry, log);
  registerRestoreCommands(context, registry, runner);
  registerChatForkCommands(context, registry, chatFork, async (controller, turnId) => {
    const r = await runner.performFor(controller, { kind: 'undo', turnId }, 'Undo Agent Turn', { quiet: true });
    return { undone: r?.result === 'restored' || r?.result === 'no-change' };
  });
  registerCheckpointCommands(context, registry, runner);
  context.subscriptions.push(new CheckpointNotices(registry, runner, context.globalState, log));
  registerShowTurnChanges(context, registry, log);
  // Hook commands run a launcher at a stable path that this activation points here (docs/design/vscode-connect.md).
  installHookLauncher(context, log);
  const agents = new AgentConnections();
  const connector = new AgentConnector(agents, log);
  context.subscriptions.push(agents, connector);
  registerAgentCommands(context, agents, connector);
  registerBlame(context, registry, runner, log);
  registerHistoryView(context, registry, runner, branchLoss, log, agents);
  log.info('extension.activate', { folders: vscode.workspace.workspaceFolders?.length ?? 0 });
  const api = createApi(registry, turnCancelled.event, branchLoss);
  if (typeof AVH_PRODUCTION_BUILD === 'undefined')
    context.subscriptions.push(
      vscode.commands.registerCommand(TEST_AGENT_TURN_COMMAND, (args: unknown) => runTestAgentTurn(api, args)),
    );
  return api;
}

export function deactivate(): void {}

/**
 * Runs the git VS Code's own git extension runs: `git.path`, else PATH. Only the user's own value counts: the
 * setting is machine-scoped when the git extension is present, and a workspace's .vscode/settings.json must
 * never pick the executable even when it is not.
 */
function useConfiguredGit(): void {
  const value = vscode.workspace.getConfiguration('git').inspect<unknown>('path')?.globalValue;
  const candidates =
    typeof value === 'string'
      ? [value]
      : Array.isArray(value)
        ? value.filter((v): v is string => typeof v === 'string')
        : [];
  configureGitExecutable(candidates);
}
