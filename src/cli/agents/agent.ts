import type { HookEvent, HookEventTable } from '../hooks/hookEvent';

/**
 * One agent whose turns Version History records, declared once in its own file and listed in registry.ts: the
 * name `hook` takes, how its events read and what each does, and, for an agent `connect` can set up, its settings
 * files. Nothing else in the CLI names an agent.
 */
export interface Agent {
  /** What `hook <name>` (and `connect <name>`) takes. */
  name: string;
  /** How the hook command's help describes it. */
  hookHelp: string;
  /** Its hook events and what each does, in the order `connect` writes them. */
  events: HookEventTable;
  /** Reads one event; bad input throws an 'invalid-input' AvhError naming the problem (never the payload). */
  readEvent(input: HookInput): Promise<HookEvent>;
  /** The settings files `connect` edits and doctor checks; none for an agent whose hook files are written by hand. */
  settings?: AgentSettings;
}

export interface HookInput {
  /** The event on stdin (every agent's hooks). */
  readStdin: () => Promise<string>;
  /** The argument after the agent's name, when the agent appends one (Codex's `notify`). */
  payload?: string;
}

export type SettingsScope = 'project' | 'local' | 'user';
export const SCOPES: readonly SettingsScope[] = ['project', 'local', 'user'];

export interface AgentSettings {
  /** The agent as messages name it ("Claude Code: not connected."). */
  displayName: string;
  /**
   * The settings file of each scope the agent has one for, with `/` between folders: relative to the project's
   * top level, or, for 'user', to the home folder.
   */
  files: Readonly<Partial<Record<SettingsScope, string>>>;
}

/** An agent `connect` can set up. */
export type ConnectableAgent = Agent & { settings: AgentSettings };
