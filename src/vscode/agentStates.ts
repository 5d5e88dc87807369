import * as vscode from 'vscode';
import type { ConnectableAgent } from '../cli/agents/agent';
import { CONNECTABLE_AGENTS } from '../cli/agents/registry';
import type { Check } from '../cli/doctor/check';
import { checkHooks } from '../cli/doctor/hookChecks';
import type { AgentConnectionView, ConnectionState } from '../views/versionHistory/protocol';

/**
 * Each agent's connection, as doctor checks it (cli/doctor/hookChecks.ts: the same function, so VS Code and
 * `agent-versions doctor` never disagree), read into the states the pane and *Check Agent Connections* show.
 */

/** Set while some agent is connected here: the walkthrough's first step completes on it. */
export const AGENT_CONNECTED_CONTEXT = 'agentVersions.agentConnected';

export interface AgentConnectionState {
  agent: ConnectableAgent;
  state: ConnectionState;
  check: Check;
}

/**
 * The state a doctor check means. Its facts name the files our hook is in (`connected`); an agent that keeps its own
 * say over hooks (Codex) adds what it decided: `projectTrusted: false`, or `hooks: [{ event, review }]` where a
 * review other than 'trusted' means the agent skips that hook until the user reviews it there.
 */
export function connectionStateOf(check: Check): ConnectionState {
  const connected = Array.isArray(check.facts.connected) ? check.facts.connected : [];
  if (check.status === 'ok') return 'connected';
  if (connected.length === 0) return check.status === 'problem' ? 'problem' : 'not-connected';
  if (waitsForReview(check.facts)) return 'needs-review';
  // Two files: connecting again would not help (one must go). Otherwise (events missing, another installation's
  // path, a vanished file, the direct form while the launcher is in use) connecting again writes the current form.
  return connected.length > 1 ? 'problem' : 'older-form';
}

function waitsForReview(facts: Check['facts']): boolean {
  if (facts.projectTrusted === false) return true;
  const hooks: unknown = facts.hooks;
  return (
    Array.isArray(hooks) &&
    hooks.some((h: unknown) => typeof h === 'object' && h !== null && 'review' in h && h.review !== 'trusted')
  );
}

/** How each state reads in the palette and the pane. */
export function stateText(state: ConnectionState, agent: ConnectableAgent): string {
  switch (state) {
    case 'connected':
      return 'connected';
    case 'not-connected':
      return 'not connected';
    case 'older-form':
      return 'connected in an older form: connect again to update it';
    case 'needs-review':
      return `connected, waiting for your review in ${agent.settings.displayName}`;
    case 'problem':
      return 'needs attention';
  }
}

/** The settings file a check names (where our hook is, or the file it could not read). */
export function fileOfCheck(check: Check): string | undefined {
  const connected = check.facts.connected;
  if (Array.isArray(connected) && connected.length > 0) {
    const first: unknown = connected[0];
    if (typeof first === 'object' && first !== null && 'file' in first && typeof first.file === 'string')
      return first.file;
  }
  return typeof check.facts.file === 'string' ? check.facts.file : undefined;
}

/** Every agent the registry can connect, checked for `folder` (project files only inside a repository). */
export async function agentConnectionStates(folder: string | null): Promise<AgentConnectionState[]> {
  return Promise.all(
    CONNECTABLE_AGENTS.map(async (agent) => {
      const check = await checkHooks(agent, folder ?? '/');
      return { agent, state: connectionStateOf(check), check };
    }),
  );
}

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
