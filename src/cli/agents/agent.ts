import type { HookEvent, HookEventTable, JsonObject } from '../hooks/hookEvent';
import type { ContextChannel } from '../hooks/contextChannel';
import type { HookCommands } from '../installation';
import type { ToolWrites } from '../../core/versionHistory';

/**
 * One agent whose turns Version History records, declared once in its own file and listed in registry.ts: the
 * name `hook` takes, how its events read and what each does, and, for an agent `connect` can set up, its settings
 * files, what the user must still do in the agent, and what doctor can read of the agent's own state. Nothing else
 * in the CLI names an agent (docs/design/agents.md).
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
  /**
   * The files one of its tool events (the table's 'wrote' event) says the tool wrote, absolute (a relative path is
   * resolved against the payload's `cwd`), or `shell` for a shell tool (no paths); null for a tool that writes no
   * file (Read, grep, …). docs/design/two-chats.md.
   */
  toolWrites?(payload: JsonObject, cwd: string | undefined): ToolWrites | null;
  /** How a begin event's hook tells the model a note after an Undo (issue 23): its stdout, as the agent reads it. */
  context: ContextChannel;
  /** The settings files `connect` edits and doctor checks; none for an agent whose hook files are written by hand. */
  settings?: AgentSettings;
  /**
   * How its pre-tool hook stops a tool (`connect --guard-destructive`, issue 34); absent when the agent has no such
   * answer (the guard then only takes the checkpoint, and connect says so).
   */
  guard?: AgentGuard;
}

/** An agent's own answer that stops a tool before it runs, with a reason its model reads. */
export interface AgentGuard {
  /** How connect's output names the form (`PreToolUse permissionDecision "deny"`). */
  help: string;
  /** The hook's stdout (exit 0) that stops the tool, telling the model `reason`. */
  answer(reason: string): string;
}

export interface HookInput {
  /** The event on stdin (every agent's hooks). */
  readStdin: () => Promise<string>;
  /** The argument after the agent's name, when the agent appends one (Codex's `notify`). */
  payload?: string;
  /** The hook process's environment: what the agent running it sets (Copilot CLI's COPILOT_CLI=1). */
  env: NodeJS.ProcessEnv;
}

export type SettingsScope = 'project' | 'local' | 'user';
export const SCOPES: readonly SettingsScope[] = ['project', 'local', 'user'];

/** Where a settings file of the user scope is: the folder the agent reads (its own variable, else in the home). */
export interface UserSettingsFile {
  /** The folder, from the home folder and the environment (`$CODEX_HOME`, else `~/.codex`). */
  dir: (home: string, env: NodeJS.ProcessEnv) => string;
  /** The file in it, with `/` between folders. */
  file: string;
  /** How help names it: `~/.codex/hooks.json`. */
  help: string;
}

export interface AgentSettings {
  /** The agent as messages name it ("Claude Code: not connected."). */
  displayName: string;
  /** The settings file of each project scope the agent has one for, relative to the project's top level. */
  files: Readonly<Partial<Record<'project' | 'local', string>>>;
  user?: UserSettingsFile;
  /** Fields our entry for `event` has beside `type` and `command` (a timeout the agent needs, a name it shows). */
  entryFields?: (event: string) => Readonly<Record<string, string | number>>;
  /** The text a new settings file starts from (default `{}`). */
  newFile?: string;
  /** A file of our own (nothing else lives in it): disconnect deletes it once none of our entries is left. */
  ownFile?: boolean;
  /** A file that is not the agent's JSON hooks layout (opencode's plugin): how it is read and edited. */
  format?: SettingsFormat;
  /** What the user must still do in the agent before it runs the hooks, as connect says it (one line each). */
  userSteps?: (scope: SettingsScope) => string[];
  /** What doctor can read of the agent's own state about hooks it runs (Codex's review, a folder's trust). */
  review?: (context: ReviewContext) => Promise<ReviewFinding | null>;
}

/** An agent `connect` can set up. */
export type ConnectableAgent = Agent & { settings: AgentSettings };

/** What connect/disconnect does to one event's entry. */
export interface SettingsChange {
  event: string;
  action: 'added' | 'updated' | 'removed';
}

/** Our entries in one settings file: the commands per event. */
export type HookEntries = Map<string, string[]>;

/** One of our entries where it sits: the event, its group and hook index (Codex's review keys name them). */
export interface OurEntry {
  event: string;
  group: number;
  hook: number;
  command: string;
  /** The entry's own fields as the file has them (`timeout`). */
  fields: Readonly<Record<string, unknown>>;
}

export interface SettingsEdit {
  /** The new text, or null when nothing changes (the file is then left untouched, not rewritten). */
  after: string | null;
  /** `after` leaves nothing of ours in a file of our own: the file goes instead (unless it is a symlink). */
  remove?: boolean;
  changes: SettingsChange[];
}

/** How a settings file that is not the JSON hooks layout is read and edited (the same contract as agentSettings.ts). */
export interface SettingsFormat {
  /** Our entries in the file, in document order; throws a CliError for a file we cannot read safely. */
  entries(file: string, text: string | null, agent: ConnectableAgent): OurEntry[];
  planConnect(file: string, text: string | null, agent: ConnectableAgent, commands: HookCommands): SettingsEdit;
  planDisconnect(file: string, text: string | null, agent: ConnectableAgent): SettingsEdit;
  /**
   * What doctor says of a file of ours whose commands are current but whose text is not what connect writes now
   * (written by an older agent-versions): the sentence's end, after "connected in <file>, but ".
   */
  outdated?: string;
}

/** What doctor hands an agent's review check: one connected file, and readers it must not load itself. */
export interface ReviewContext {
  scope: SettingsScope;
  file: string;
  entries: readonly OurEntry[];
  /** The project's top level, when doctor runs inside one. */
  projectRoot: string | null;
  home: string;
  env: NodeJS.ProcessEnv;
  /** A TOML file as a plain object; null when it does not exist; throws on a file that is not TOML. */
  readToml: (file: string) => Record<string, unknown> | null;
}

/** What the agent's own state says about our hooks: they run (ok), or why they do not and what the user does. */
export interface ReviewFinding {
  status: 'ok' | 'warning' | 'problem';
  summary: string;
  fix?: string;
  facts: Record<string, unknown>;
}
