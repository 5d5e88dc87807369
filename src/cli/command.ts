import type { EventLog } from '../core/log';
import type { VersionHistory } from '../core/versionHistory';
import type { OptionName, OptionValues } from './commandOptions';

/**
 * What a command is: its declaration (the spec, which drives parsing, usage and help) and its run function, kept
 * together in one file under commands/ and listed in commandLine.ts, the registry.
 */

export interface ArgDecl {
  name: string;
  /** Allowed values; `what` names them in the error ("unknown agent"). */
  choices?: readonly string[];
  what?: string;
  /** May be left out (only the last argument). */
  optional?: boolean;
}

export interface CommandSpec {
  /** One word, or a group and a word (`turn begin`). */
  name: string;
  args: readonly ArgDecl[];
  options: readonly OptionName[];
  required?: readonly OptionName[];
  /** Options of which at most one may be given. */
  exclusive?: readonly (readonly OptionName[])[];
  /** Help of options whose wording is the command's (an option the table declares without `help`). */
  optionHelp?: Readonly<Partial<Record<OptionName, string>>>;
  summary: string;
  description: string;
  example: string;
  /** The shape printed with --json. */
  json: string;
}

export interface CommandOutput {
  json: unknown;
  /** What a person sees; undefined prints nothing (a hook's stdout reaches the agent). */
  text?: string;
  exitCode?: number;
}

/** What a command's run gets: its arguments and options, validated against its spec, and the process's I/O. */
export interface CommandContext {
  args: readonly string[];
  values: OptionValues;
  /** --repo resolved from the process's folder, else that folder. */
  folder: string;
  /** The process's folder. */
  cwd: string;
  readStdin: () => Promise<string>;
  /** The process's stdout, for what must be out before the command ends (a hook's note: commands/hook.ts). */
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  log: EventLog;
  /**
   * Opening a repository's history loads the engines (sql.js, xstate), so main.ts passes these in rather than
   * a command importing them: the hook fast path loads commands/hook.ts for its spec and must never load either.
   */
  openHistory: (folder: string) => Promise<VersionHistory>;
  /** A hook event's repository history: null in a folder without git, unless `init` creates the repository first. */
  openHookHistory: (folder: string, init: boolean) => Promise<VersionHistory | null>;
}

export interface Command {
  spec: CommandSpec;
  run(c: CommandContext): Promise<CommandOutput>;
}

/** Runs `fn` on the history of the command's repository, its notices said first; closed afterwards. */
export async function withHistory<T>(c: CommandContext, fn: (history: VersionHistory) => Promise<T>): Promise<T> {
  const history = await c.openHistory(c.folder);
  try {
    for (const notice of history.notices) c.stderr(`agent-versions: ${notice.message}\n`);
    return await fn(history);
  } finally {
    await history.close();
  }
}
