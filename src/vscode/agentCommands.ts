import * as vscode from 'vscode';
import { launcherInUseNow } from '../cli/installation';
import { launcherTarget } from '../cli/launcherScript';
import type { ConnectionState } from './historyView/protocol';
import { AgentConnector, CONNECT_AGENT_COMMAND, ConnectArgs, displayPath } from './agentConnect';
import { AgentConnections } from './agentStates';
import { AgentConnectionState, fileOfCheck, stateText } from './connectionStates';
import { defaultWorkspaceFolder } from './repositoryRegistry';

/** *Check Agent Connections*: every agent's state (doctor's check), and what choosing one does. */
export const CHECK_AGENT_CONNECTIONS_COMMAND = 'agentVersions.checkAgentConnections';

const STATE_ICON: Record<ConnectionState, string> = {
  connected: '$(pass-filled)',
  'not-connected': '$(circle-large-outline)',
  'older-form': '$(warning)',
  'needs-review': '$(clock)',
  problem: '$(error)',
};

/** The folder a command without one means: the active editor's workspace folder, else the first. */
function folderOf(args: unknown): string | null {
  const given = typeof args === 'object' && args !== null && 'folder' in args ? args.folder : undefined;
  return typeof given === 'string' ? given : defaultWorkspaceFolder();
}

/** Registers *Connect Agent…* and *Check Agent Connections*. */
export function registerAgentCommands(
  context: vscode.ExtensionContext,
  connections: AgentConnections,
  connector: AgentConnector,
): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(CONNECT_AGENT_COMMAND, (args: unknown) =>
      connector.connect(connectArgs(args), defaultWorkspaceFolder()),
    ),
    vscode.commands.registerCommand(CHECK_AGENT_CONNECTIONS_COMMAND, (args: unknown) =>
      checkAgentConnections(connections, connector, folderOf(args)),
    ),
  );
}

/** A command link's or the pane's argument; anything else means "ask". */
function connectArgs(args: unknown): ConnectArgs {
  if (typeof args === 'string') return args;
  if (typeof args !== 'object' || args === null) return undefined;
  const { agent, folder } = args as { agent?: unknown; folder?: unknown };
  return {
    agent: typeof agent === 'string' ? agent : undefined,
    folder: typeof folder === 'string' ? folder : undefined,
  };
}

interface AgentItem extends vscode.QuickPickItem {
  state?: AgentConnectionState;
}

async function checkAgentConnections(
  connections: AgentConnections,
  connector: AgentConnector,
  folder: string | null,
): Promise<void> {
  const states = await connections.states(folder);
  const items: AgentItem[] = states.map((s) => ({
    label: `${STATE_ICON[s.state]} ${s.agent.settings.displayName}`,
    description: stateText(s.state, s.agent),
    detail: s.check.fix ? `${s.check.summary} Fix: ${s.check.fix}` : s.check.summary,
    state: s,
  }));
  items.push({ label: 'agent-versions', kind: vscode.QuickPickItemKind.Separator }, launcherItem());
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Agent Connections',
    placeHolder: 'Choose an agent to connect it (or update its hook), or to open its settings file',
    matchOnDetail: true,
  });
  const state = picked?.state;
  if (!state) return;
  if (state.state === 'not-connected' || state.state === 'older-form') {
    await connector.connect({ agent: state.agent.name, folder: folder ?? undefined }, folder);
    return;
  }
  const file = fileOfCheck(state.check);
  if (file) await vscode.window.showTextDocument(vscode.Uri.file(file));
}

/** The launcher hook commands run, and where it points. */
function launcherItem(): AgentItem {
  const launcher = launcherInUseNow();
  if (launcher === null)
    return {
      label: '$(info) Launcher not installed',
      detail: 'Hook commands name this installation’s own folder (an update moves it: connect again after one).',
    };
  return {
    label: '$(terminal) Launcher',
    description: displayPath(launcher),
    detail: `Hook commands and terminals run it; it runs ${displayPath(launcherTarget(launcher) ?? '?')}.`,
  };
}
