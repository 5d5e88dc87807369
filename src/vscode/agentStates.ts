import * as vscode from 'vscode';
import type { AgentConnectionView } from './historyView/protocol';
import { AgentConnectionState, agentConnectionStates } from './connectionStates';

/** Set while some agent is connected here: the walkthrough's first step completes on it. */
export const AGENT_CONNECTED_CONTEXT = 'agentVersions.agentConnected';

/**
 * The agents' states, recomputed on demand; fires when they may have changed (a connect from VS Code, the window
 * getting focus back after the user worked in a terminal or in the agent).
 */
export class AgentConnections implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [this.changed];

  constructor() {
    this.disposables.push(vscode.window.onDidChangeWindowState((s) => s.focused && this.changed.fire()));
  }

  /** Something was written: listeners recompute. */
  didChange(): void {
    this.changed.fire();
  }

  async states(folder: string | null): Promise<AgentConnectionState[]> {
    const states = await agentConnectionStates(folder);
    void vscode.commands.executeCommand(
      'setContext',
      AGENT_CONNECTED_CONTEXT,
      states.some((s) => s.state === 'connected' || s.state === 'needs-review'),
    );
    return states;
  }

  /** The states as the pane's protocol carries them. */
  async views(folder: string | null): Promise<AgentConnectionView[]> {
    return (await this.states(folder)).map(({ agent, state, check }) => ({
      name: agent.name,
      displayName: agent.settings.displayName,
      state,
      summary: check.summary,
    }));
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
