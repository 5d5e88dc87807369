import type { ConnectableAgent } from '../cli/agents/agent';
import { CONNECTABLE_AGENTS } from '../cli/agents/registry';
import type { Check } from '../cli/doctor/check';
import { checkHooks } from '../cli/doctor/hookChecks';
import type { ConnectionState } from './historyView/protocol';

/**
 * Each agent's connection, as doctor checks it (cli/doctor/hookChecks.ts: the same function, so VS Code and
 * `agent-versions doctor` never disagree), read into the states the pane and *Check Agent Connections* show.
 */

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
      // No folder: one in no repository, so only the user's files are checked.
      const check = await checkHooks(agent, folder ?? '/');
      return { agent, state: connectionStateOf(check), check };
    }),
  );
}
