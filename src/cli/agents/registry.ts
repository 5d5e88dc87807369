import { Agent, ConnectableAgent, SCOPES, SettingsScope } from './agent';
import { claudeCode } from './claudeCode';
import { codex } from './codex';
import { copilot } from './copilot';
import { gemini } from './gemini';
import { opencode } from './opencode';

/**
 * Every agent, in the order help names them. Adding one: its own file in this folder, its test, and its line here
 * (docs/design/agents.md has the recipe); the hook command, connect, disconnect, doctor and help follow from the
 * list.
 */
export const AGENTS: readonly Agent[] = [claudeCode, codex, copilot, gemini, opencode];

/** The agents `connect` can set up, and doctor checks. */
export const CONNECTABLE_AGENTS: readonly ConnectableAgent[] = AGENTS.filter(
  (a): a is ConnectableAgent => a.settings !== undefined,
);

// Maps, never object literals: an argument like `toString` or `__proto__` names no agent.
const BY_NAME = new Map(AGENTS.map((a) => [a.name, a]));
const CONNECTABLE_BY_NAME = new Map(CONNECTABLE_AGENTS.map((a) => [a.name, a]));

/** The agent `hook <name>` reads; the command line admits only names in the list. */
export function agentNamed(name: string): Agent {
  const agent = BY_NAME.get(name);
  if (!agent) throw new Error(`no agent named ${name}`);
  return agent;
}

/** The agent `connect <name>` sets up; the command line admits only names in the list. */
export function connectableAgentNamed(name: string): ConnectableAgent {
  const agent = CONNECTABLE_BY_NAME.get(name);
  if (!agent) throw new Error(`no connectable agent named ${name}`);
  return agent;
}

/** The scopes the agent has a settings file for, in SCOPES order. */
export function scopesOf(agent: ConnectableAgent): SettingsScope[] {
  return SCOPES.filter((scope) => (scope === 'user' ? agent.settings.user : agent.settings.files[scope]) !== undefined);
}

/**
 * Help of the scope options (connect's and disconnect's specs give it: the option table loads no agent), each naming
 * the agents' settings files of its scope.
 */
export function scopeOptionHelp(): Record<SettingsScope, string> {
  return {
    project: `the project’s ${settingsFilesText('project')} (default; usually committed with the project)`,
    local: `the project’s ${settingsFilesText('local')} (yours only, not committed${scopeAgentsText('local')})`,
    user: `your ${settingsFilesText('user')} (every project)`,
  };
}

/** The settings files of one scope as help names them: `.claude/settings.json, .codex/hooks.json, …`. */
function settingsFilesText(scope: SettingsScope): string {
  return CONNECTABLE_AGENTS.flatMap((a) => {
    const file = scope === 'user' ? a.settings.user?.help : a.settings.files[scope];
    return file === undefined ? [] : [file];
  }).join(', ');
}

/** `; Claude Code only` when some agent has no settings file of the scope; nothing when all have one. */
function scopeAgentsText(scope: SettingsScope): string {
  const having = CONNECTABLE_AGENTS.filter((a) => scopesOf(a).includes(scope));
  if (having.length === CONNECTABLE_AGENTS.length) return '';
  return `; ${having.map((a) => a.settings.displayName).join(' and ')} only`;
}
