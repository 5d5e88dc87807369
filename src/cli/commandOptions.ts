/**
 * Every option of the command line, declared once: the parser (commandParser.ts) reads them with node:util
 * `parseArgs`, and help (commandHelp.ts) lists them from the same declarations.
 */

export interface OptionDecl {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's placeholder in help, for string options. */
  value?: string;
  /**
   * What help says of it; absent for an option whose wording its command's spec gives (`optionHelp`): the scope
   * options name the agents' settings files, and this table imports no agent (the parser and help load it).
   */
  help?: string;
  /** The only values a string option takes (`--only must be turn or everything, not "x"`). */
  choices?: readonly string[];
  /** A string option that takes a whole number in this range (`--limit must be a whole number from 1 to 100000`). */
  range?: readonly [number, number];
}

export const OPTIONS = {
  repo: { type: 'string', value: '<path>', help: 'the repository (default: the current folder)' },
  json: { type: 'boolean', help: 'print the result as JSON on stdout' },
  verbose: { type: 'boolean', help: 'print content-free events on stderr' },
  help: { type: 'boolean', short: 'h', help: 'show help' },
  version: { type: 'boolean', help: 'print the version' },
  chat: { type: 'string', value: '<id>', help: 'the conversation the turn belongs to' },
  agent: { type: 'string', value: '<name>', help: 'the agent’s name, shown in Version History' },
  title: { type: 'string', value: '<text>', help: 'the conversation’s title' },
  prompt: { type: 'string', value: '<text>', help: 'the user’s prompt (stored locally, never logged)' },
  'prompt-file': { type: 'string', value: '<path|->', help: 'read the prompt from a file, or from stdin with -' },
  outcome: { type: 'string', value: 'completed|cancelled|errored', help: 'how the turn ended' },
  limit: {
    type: 'string',
    value: '<N>',
    help: 'how many versions to list (1–100000, default 50)',
    range: [1, 100_000],
  },
  turn: { type: 'string', value: '<id>', help: 'the turn to undo (default: the latest not yet undone on this branch)' },
  rev: { type: 'string', value: '<rev>', help: 'the file as of this commit (default: the working tree copy)' },
  line: { type: 'string', value: '<N>', help: 'the line of the file (1 or more)', range: [1, 999_999_999] },
  yes: {
    type: 'boolean',
    short: 'y',
    help: 'also undo commits you made yourself after the target (they stay in history)',
  },
  only: {
    type: 'string',
    value: 'turn|everything',
    help: 'when work landed after the turn: undo only its own changes (later work stays), or everything since it',
    choices: ['turn', 'everything'],
  },
  // Their help names the agents' settings files: connect's and disconnect's specs give it (agents/registry.ts).
  project: { type: 'boolean' },
  local: { type: 'boolean' },
  user: { type: 'boolean' },
  'dry-run': { type: 'boolean', help: 'show what would change and write nothing' },
  init: {
    type: 'boolean',
    help:
      'in a folder without git, create the repository (git init) and record the turn ' +
      '(connect: write the hook command with it)',
  },
  tool: {
    type: 'boolean',
    help: 'the event is a tool event: no git starts before it is read (what connect writes for tool events)',
  },
  'guard-destructive': {
    type: 'boolean',
    help:
      'before a destructive shell command (git reset --hard, rm -rf, …) the agent is told not to run it and to ask ' +
      'the user first, in its own deny form; the checkpoint is taken all the same (connect: write the hooks with it)',
  },
  'before-command': {
    type: 'string',
    value: '<checkpoint>',
    help: 'restore to just before an agent’s destructive command (ids: agent-versions checkpoints)',
  },
  'base-branch': {
    type: 'string',
    value: '<branch>',
    help: 'the branch a new conversation starts from (default: the remote’s default branch, else the current one)',
  },
} as const satisfies Record<string, OptionDecl>;

export type OptionName = keyof typeof OPTIONS;
export type OptionValues = { [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** The options every command takes. */
export const GLOBAL_OPTIONS: readonly OptionName[] = ['repo', 'json', 'verbose', 'help'];

/** The options that choose a settings file's scope (connect, disconnect): at most one is given. */
export const SCOPE_OPTIONS: readonly OptionName[] = ['project', 'local', 'user'];
