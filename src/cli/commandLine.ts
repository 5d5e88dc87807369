import { parseArgs } from 'node:util';
import { UsageError } from './exitCodes';

/**
 * The command line: every option and command declared once, parsed with node:util `parseArgs`, and the help and
 * usage text generated from the same declarations (so help can never list an option the parser rejects).
 */

interface OptionDecl {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's placeholder in help, for string options. */
  value?: string;
  help: string;
}

const OPTIONS = {
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
  limit: { type: 'string', value: '<N>', help: 'how many versions to list (1–100000, default 50)' },
  turn: { type: 'string', value: '<id>', help: 'the turn to undo (default: the latest not yet undone on this branch)' },
  yes: {
    type: 'boolean',
    short: 'y',
    help: 'also undo commits you made yourself after the target (they stay in history)',
  },
  only: {
    type: 'string',
    value: 'turn|everything',
    help: 'when work landed after the turn: undo only its own changes (later work stays), or everything since it',
  },
  project: {
    type: 'boolean',
    help: 'the project’s .claude/settings.json or .codex/hooks.json (default; usually committed with the project)',
  },
  local: {
    type: 'boolean',
    help: 'the project’s .claude/settings.local.json (yours only, not committed; Claude Code only)',
  },
  user: { type: 'boolean', help: 'your ~/.claude/settings.json or ~/.codex/hooks.json (every project)' },
  'dry-run': { type: 'boolean', help: 'show what would change and write nothing' },
  init: {
    type: 'boolean',
    help: 'in a folder without git, create the repository (git init) and record the turn (connect: write the hook command with it)',
  },
  'base-branch': {
    type: 'string',
    value: '<branch>',
    help: 'the branch a new conversation starts from (default: the remote’s default branch, else the current one)',
  },
} as const satisfies Record<string, OptionDecl>;

export type OptionName = keyof typeof OPTIONS;
export type OptionValues = { [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

const GLOBAL_OPTIONS: readonly OptionName[] = ['repo', 'json', 'verbose', 'help'];

/** The agents whose settings `connect` edits (and doctor checks). */
export const AGENTS = ['claude-code', 'codex'] as const;
export type AgentName = (typeof AGENTS)[number];
/**
 * The payload shapes `hook <agent>` reads (src/cli/hooks/). `claude-code` also takes VS Code's own agent hooks
 * (GitHub Copilot), which VS Code runs from the Claude Code settings files; `copilot` is for VS Code's own hook files.
 */
export const HOOK_AGENTS = ['claude-code', 'copilot', 'codex'] as const;
export type HookAgent = (typeof HOOK_AGENTS)[number];
export const RECOVER_ACTIONS = ['check', 'accept', 'save-and-accept', 'remove-stale-lock'] as const;

interface ArgDecl {
  name: string;
  /** Allowed values; `what` names them in the error ("unknown agent"). */
  choices?: readonly string[];
  what?: string;
  /** May be left out (only the last argument). */
  optional?: boolean;
}

export interface CommandSpec {
  name: CommandName;
  args: readonly ArgDecl[];
  options: readonly OptionName[];
  required?: readonly OptionName[];
  /** Options of which at most one may be given. */
  exclusive?: readonly (readonly OptionName[])[];
  summary: string;
  description: string;
  example: string;
  /** The shape printed with --json. */
  json: string;
}

export type CommandName =
  | 'turn begin'
  | 'turn end'
  | 'hook'
  | 'versions'
  | 'status'
  | 'undo'
  | 'undo-file'
  | 'redo'
  | 'restore'
  | 'recover'
  | 'connect'
  | 'disconnect'
  | 'doctor'
  | 'init'
  | 'chat status'
  | 'chat continue-on-new-branch'
  | 'chat restore-branch';

const SCOPE_OPTIONS: readonly OptionName[] = ['project', 'local', 'user'];

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'turn begin',
    args: [],
    options: ['chat', 'agent', 'title', 'prompt', 'prompt-file', 'base-branch'],
    required: ['chat'],
    exclusive: [['prompt', 'prompt-file']],
    summary: 'record the start of an agent turn (captures the pre-turn state)',
    description:
      'Records a turn of a conversation and captures the exact pre-turn state (your own uncommitted edits included), which Undo restores. Prints the turn id.',
    example: 'agent-versions turn begin --chat my-session --agent my-agent --prompt-file prompt.txt',
    json: '{"turnId": string}',
  },
  {
    name: 'turn end',
    args: [{ name: 'turnId' }],
    options: ['outcome'],
    required: ['outcome'],
    summary: 'record how a turn ended (a completed turn that changed files becomes a version)',
    description:
      'Records the turn’s outcome. A completed turn that changed files becomes one [Agent] commit on the current branch; a cancelled or errored turn leaves its partial changes in place for Undo to save.',
    example: 'agent-versions turn end 0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11 --outcome completed',
    json: '{"turnId": string, "outcome": "completed"|"cancelled"|"errored", "version": string|null}',
  },
  {
    name: 'hook',
    args: [
      { name: 'agent', choices: HOOK_AGENTS, what: 'hook adapter' },
      { name: 'payload', optional: true },
    ],
    options: ['init'],
    summary: 'handle one agent hook event (JSON on stdin); what `connect` installs',
    description:
      'Reads one hook event of the agent as JSON on stdin and begins or ends the matching turn: claude-code (Claude Code, and VS Code’s own agent hooks, recorded as copilot), copilot, codex (its hooks; or its `notify` JSON given as <payload>). Events it does not act on exit 0 and open nothing. Prints nothing on stdout (it would reach the agent’s context) and never exits 2 (an agent would block the prompt): bad input exits 1. In a folder without git it records nothing, says so in one stderr line and exits 0; with --init it creates the repository first.',
    example: 'echo \'{"hook_event_name":"Stop","session_id":"s1"}\' | agent-versions hook claude-code',
    json: '{"agent": "claude-code"|"copilot"|"codex", "event": string, "action": "began"|"ended"|"ignored", "reason"?: "no-repository", "turnId"?: string, "outcome"?: string, "version"?: string|null, "cancelled"?: string[]}',
  },
  {
    name: 'versions',
    args: [],
    options: ['limit'],
    summary: 'list the versions of the current branch, newest first',
    description:
      'Lists the versions (commits) of the current branch, newest first, as a table: time, kind, the agent turn’s outcome, short commit id and summary.',
    example: 'agent-versions versions --limit 20',
    json: '[{"oid": string, "subject": string, "kind": "agent"|"interrupted"|"recovery"|"restore"|"user", "turnId"?: string, "outcome"?: string, "time": number (seconds)}]',
  },
  {
    name: 'status',
    args: [],
    options: [],
    summary: 'repository health, running turns, recovery state',
    description:
      'Shows the repository’s health (branch, working tree, operations in progress, locks), the recorded and running turns, and whether recovery is required.',
    example: 'agent-versions status',
    json: '{"root": string, "health": {...}, "runningTurns": [...], "counts": {"turns": number, "runningTurns": number}, "recovery": object|null, "operation": object|null}',
  },
  {
    name: 'undo',
    args: [],
    options: ['turn', 'only', 'yes'],
    summary: 'undo an agent turn (default: the latest on this branch)',
    description:
      'Restores the turn’s pre-turn state as a new [Restore] commit. A cancelled turn’s partial changes are first saved as an [Interrupted] version. When work landed after the turn (other chats’ turns, your commits or uncommitted edits), --only turn takes back only the turn’s own changes as a new [Revert] commit and keeps the rest (refused, with the conflicting files, when that does not apply cleanly); --only everything restores the pre-turn state and takes the later work away too (it stays in history). Without --only, later agent turns or your own commits are only undone with --yes.',
    example: 'agent-versions undo --turn 0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11 --only turn',
    json: '{"result": "restored"|"nothing-to-undo"|"no-change", "scope"?: "everything"|"turn", "restoreCommit"?: string, "preserved"?: string, "turnId"?: string}',
  },
  {
    name: 'undo-file',
    args: [{ name: 'path' }],
    options: ['turn'],
    required: ['turn'],
    summary: 'put one file a turn changed back to its pre-turn content (the rest of the turn stays)',
    description:
      'Puts the path (relative to the repository root, as the turn’s changes list it) back to its content before the turn, as a new [Revert] commit; every other change of the turn and everything after it stays. Redo brings the file back.',
    example: 'agent-versions undo-file --turn 0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11 src/app.ts',
    json: '{"result": "restored"|"no-change", "scope": "file", "restoreCommit"?: string, "preserved"?: string, "turnId"?: string}',
  },
  {
    name: 'redo',
    args: [],
    options: ['yes'],
    summary: 'redo the last undo, while nothing new happened since',
    description:
      'Brings back the exact tree the last Undo replaced, as a new [Restore] commit, while nothing new happened since.',
    example: 'agent-versions redo',
    json: '{"result": "restored"|"nothing-to-redo"|"no-change", "restoreCommit"?: string}',
  },
  {
    name: 'restore',
    args: [{ name: 'commit' }],
    options: ['yes'],
    summary: 'restore the working tree to a version, as a new [Restore] commit',
    description:
      'Makes the working tree equal to the chosen version and records it as a new [Restore] commit; history is never rewritten.',
    example: 'agent-versions restore 3f2a9c1',
    json: '{"result": "restored"|"no-change", "restoreCommit"?: string, "preserved"?: string}',
  },
  {
    name: 'chat status',
    args: [],
    options: ['chat'],
    required: ['chat'],
    summary: 'whether a conversation’s branch is still here (ok, on-remote, lost, unknown)',
    description:
      'Checks the conversation’s branch: present locally (ok); deleted locally but still on the remote (on-remote: restore it with `chat restore-branch`); gone locally and on the remote (lost: its code changes cannot be recovered; `chat continue-on-new-branch` keeps the conversation going); or the remote could not be asked (unknown, with the reason network, auth or timeout: try again). Changes nothing.',
    example: 'agent-versions chat status --chat my-session --json',
    json: '{"chatId": string, "branch": "ok"|"on-remote"|"lost"|"unknown", "chatBranch": string|null, "baseBranch": string|null, "remote": string|null, "reason"?: "on-remote"|"lost"|"network"|"auth"|"timeout", "message"?: string, "continuations": [{"chatId": string, "oldBranch": string, "newBranch": string, "baseBranch": string, "repository": string, "at": number}]}',
  },
  {
    name: 'chat continue-on-new-branch',
    args: [],
    options: ['chat'],
    required: ['chat'],
    summary: 'continue a conversation whose branch is lost on a new branch (its code is not recovered)',
    description:
      'Only when the conversation’s branch is confirmed lost (gone locally and on the remote): creates <branch>-2 (or -3, …) from the conversation’s base branch, checks it out, and records it on the conversation, keeping its resume identity. One warning entry says that the lost branch’s code changes were not recovered. Running it again changes nothing.',
    example: 'agent-versions chat continue-on-new-branch --chat my-session',
    json: '{"result": "continued"|"already-continued", "continuation": {"chatId": string, "oldBranch": string, "newBranch": string, "baseBranch": string, "repository": string, "at": number}}',
  },
  {
    name: 'chat restore-branch',
    args: [],
    options: ['chat'],
    required: ['chat'],
    summary: 'bring back a conversation’s branch deleted locally from the remote that still has it',
    description:
      'When the conversation’s branch was deleted locally but the remote still has it: fetches that branch and recreates it locally (with the remote as upstream). Does not check it out; nothing else changes.',
    example: 'agent-versions chat restore-branch --chat my-session',
    json: '{"branch": string, "remote": string, "commit": string}',
  },
  {
    name: 'recover',
    args: [{ name: 'action', choices: RECOVER_ACTIONS, what: 'recover action' }],
    options: [],
    summary: 'after an unverified restore: check, use the current version, or save changes and use it',
    description:
      'check: look at the repository (changes nothing). accept: continue from the current version (never changes git). save-and-accept: commit your current changes as [Recovery] and continue. remove-stale-lock: remove a Git lock file (index.lock, a branch lock) that an interrupted restore of ours left, only when no Git command of ours runs; it shows the lock’s age. Exit 3 while recovery stays required.',
    example: 'agent-versions recover check',
    json: '{"recovery": "required"|"not-required", "result"?: string, "assessment"?: {"kind": "healthy"|"dirty"|"blocked", ...}, "removed"?: [{"file": string, "ageMs": number}]}',
  },
  {
    name: 'connect',
    args: [{ name: 'agent', choices: AGENTS, what: 'agent' }],
    options: [...SCOPE_OPTIONS, 'dry-run', 'init'],
    exclusive: [SCOPE_OPTIONS],
    summary: 'add this CLI’s hooks to the agent’s settings file (idempotent)',
    description:
      'Adds one hook entry per event to the agent’s settings file, calling this installation by its absolute path. Other settings and other tools’ hooks are kept as they are; running it again changes nothing. The file is written atomically. With --init, the hook creates the git repository on the first prompt in a folder without one (`hook … --init`); connecting again without it writes the plain command.',
    example: 'agent-versions connect claude-code --user --dry-run',
    json: '{"agent": string, "scope": "project"|"local"|"user", "file": string, "command": string, "dryRun": boolean, "changed": boolean, "changes": [{"event": string, "action": "added"|"updated"|"removed"}], "alsoConnectedIn": string[]}',
  },
  {
    name: 'disconnect',
    args: [{ name: 'agent', choices: AGENTS, what: 'agent' }],
    options: [...SCOPE_OPTIONS, 'dry-run'],
    exclusive: [SCOPE_OPTIONS],
    summary: 'remove exactly this CLI’s hooks from the agent’s settings file',
    description:
      'Removes the hook entries that run agent-versions (from any installation) and nothing else; containers left empty by that removal go too.',
    example: 'agent-versions disconnect claude-code',
    json: 'the same shape as connect',
  },
  {
    name: 'doctor',
    args: [],
    options: [],
    summary: 'check whether Agent Version History can work here',
    description:
      'Checks git (path and version), the repository, the git identity, the state file, recovery, the agents’ hooks, and times one no-op hook run. Each line is ok, warning or problem, with the fix. Exit 0 when there is no problem (warnings allowed), 1 otherwise.',
    example: 'agent-versions doctor',
    json: '{"ok": boolean, "checks": [{"id": string, "status": "ok"|"warning"|"problem", "summary": string, "fix"?: string, "facts": object}]}',
  },
  {
    name: 'init',
    args: [],
    options: [],
    summary: 'keep versions in a folder without git (runs git init; changes nothing in a repository)',
    description:
      'Creates a git repository in the folder (git init, with your default branch name; no identity or other setting is written), so agent turns here become versions. In a folder that already is in a repository it changes nothing and exits 0.',
    example: 'agent-versions init',
    json: '{"repository": string, "branch": string|null}',
  },
];

export type Invocation =
  | { kind: 'version'; values: OptionValues }
  | { kind: 'help'; topic: CommandSpec[] | null; values: OptionValues }
  | { kind: 'run'; command: CommandName; args: string[]; values: OptionValues };

const parseConfig = <S extends boolean>(args: readonly string[], strict: S) => ({
  args: [...args],
  options: OPTIONS as Record<OptionName, OptionDecl>,
  allowPositionals: true,
  strict,
  tokens: true as const,
});

/** The command words and options of a command line, without judging them: used to pick the usage to show. */
function looseParse(argv: readonly string[]): { positionals: string[]; values: OptionValues } {
  const { positionals, values } = parseArgs(parseConfig(argv, false));
  return { positionals, values: values as OptionValues };
}

/** What a command line asks for even when it does not parse: a hook (which must never exit 2), JSON output. */
export function intentOf(argv: readonly string[]): { hook: boolean; json: boolean } {
  const { positionals, values } = looseParse(argv);
  return { hook: positionals[0] === 'hook', json: values.json === true };
}

/** Parses and validates a command line; every problem is a UsageError naming what is wrong. */
export function parseCommandLine(argv: readonly string[]): Invocation {
  const loose = looseParse(argv);
  const guess = matchCommand(loose.positionals);
  let parsed;
  try {
    parsed = parseArgs(parseConfig(argv, true));
  } catch (error) {
    throw new UsageError(describeParseError(error), guess?.spec.name);
  }
  const values = parsed.values as OptionValues;
  const positionals = parsed.positionals;
  if (values.version) {
    if (positionals.length > 0) throw new UsageError('--version takes no command', guess?.spec.name);
    return { kind: 'version', values };
  }
  if (positionals[0] === 'help') return { kind: 'help', topic: helpTopic(positionals.slice(1)), values };
  if (values.help) return { kind: 'help', topic: helpTopic(positionals), values };
  if (positionals.length === 0) throw new UsageError('no command given');
  const match = matchCommand(positionals);
  if (!match) throw new UsageError(unknownCommandMessage(positionals));
  const { spec, rest } = match;
  const given = new Set(parsed.tokens.flatMap((t) => (t.kind === 'option' ? [t.name as OptionName] : [])));
  for (const name of given) {
    if (!GLOBAL_OPTIONS.includes(name) && !spec.options.includes(name)) {
      throw new UsageError(`${spec.name} does not take --${name}`, spec.name);
    }
  }
  spec.args.forEach((arg, i) => {
    const value = rest[i];
    if (value === undefined && arg.optional) return;
    if (value === undefined) {
      throw new UsageError(
        `${spec.name} needs <${arg.name}>${arg.choices ? `: ${arg.choices.join(', ')}` : ''}`,
        spec.name,
      );
    }
    if (arg.choices && !arg.choices.includes(value)) {
      throw new UsageError(
        `unknown ${arg.what ?? arg.name} "${echo(value)}"; ${spec.name} takes ${arg.choices.length === 1 ? `only ${arg.choices[0]}` : `one of: ${arg.choices.join(', ')}`}`,
        spec.name,
      );
    }
  });
  for (const name of spec.required ?? []) {
    if (values[name] === undefined)
      throw new UsageError(
        `${spec.name} needs --${name} ${OPTIONS[name].type === 'string' ? placeholder(name) : ''}`.trimEnd(),
        spec.name,
      );
  }
  for (const group of spec.exclusive ?? []) {
    const both = group.filter((name) => given.has(name));
    if (both.length > 1) throw new UsageError(`give only one of ${both.map((n) => `--${n}`).join(', ')}`, spec.name);
  }
  if (rest.length > spec.args.length)
    throw new UsageError(`unexpected argument "${echo(rest[spec.args.length])}"`, spec.name);
  if (values.only !== undefined && values.only !== 'turn' && values.only !== 'everything') {
    throw new UsageError(`--only must be turn or everything, not "${echo(values.only)}"`, spec.name);
  }
  if (values.limit !== undefined) {
    const limit = Number(values.limit);
    if (!/^\d+$/.test(values.limit) || limit < 1 || limit > 100_000)
      throw new UsageError('--limit must be a whole number from 1 to 100000', spec.name);
  }
  return { kind: 'run', command: spec.name, args: rest, values };
}

function matchCommand(positionals: readonly string[]): { spec: CommandSpec; rest: string[] } | null {
  const [a, b] = positionals;
  const two = COMMANDS.find((c) => c.name === `${a} ${b}`);
  if (two) return { spec: two, rest: positionals.slice(2) };
  const one = COMMANDS.find((c) => c.name === a);
  return one ? { spec: one, rest: positionals.slice(1) } : null;
}

/** `help`, `help <command>`, `help turn` (both turn commands). */
function helpTopic(words: readonly string[]): CommandSpec[] | null {
  if (words.length === 0) return null;
  const match = matchCommand(words);
  if (match) return [match.spec];
  const group = COMMANDS.filter((c) => c.name.startsWith(`${words[0]} `));
  if (words.length === 1 && group.length > 0) return group;
  throw new UsageError(unknownCommandMessage(words));
}

function unknownCommandMessage(positionals: readonly string[]): string {
  const group = COMMANDS.filter((c) => c.name.startsWith(`${positionals[0]} `));
  if (group.length > 0) {
    const subs = group.map((c) => c.name.split(' ')[1]);
    return positionals.length === 1
      ? `${positionals[0]} needs a subcommand: ${subs.join(', ')}`
      : `unknown ${positionals[0]} subcommand "${echo(positionals[1])}"; use one of: ${subs.join(', ')}`;
  }
  return `unknown command "${echo(positionals[0])}"`;
}

function describeParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  const code = (error as { code?: string }).code;
  const option = /'(-[^' ]*)/.exec(message)?.[1] ?? 'an option';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option "${echo(option)}"`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (/does not take an argument/.test(message)) return `${option} takes no value`;
    return `${option} needs a value${/ambiguous/.test(message) ? ` (to give one that starts with "-", write ${option}=<value>)` : ''}`;
  }
  return 'the arguments could not be read';
}

/** A short, single-line echo of user input inside an error message. */
function echo(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is being replaced
  const flat = text.replace(/[\u0000-\u001f\u007f]/g, '?');
  return flat.length > 40 ? `${flat.slice(0, 40)}…` : flat;
}

function placeholder(name: OptionName): string {
  const decl: OptionDecl = OPTIONS[name];
  return decl.value ?? '';
}

function optionSynopsis(name: OptionName, required: boolean): string {
  const text = `--${name}${OPTIONS[name].type === 'string' ? ` ${placeholder(name)}` : ''}`;
  return required ? text : `[${text}]`;
}

/** `turn begin --chat <id> [--agent <name>] … [--prompt <text> | --prompt-file <path|->]` */
export function synopsis(spec: CommandSpec): string {
  const parts: string[] = [
    spec.name,
    ...spec.args.map((a) => {
      const text = a.choices ? a.choices.join('|') : `<${a.name}>`;
      return a.optional ? `[${text}]` : text;
    }),
  ];
  const done = new Set<OptionName>();
  for (const name of spec.options) {
    if (done.has(name)) continue;
    const group = spec.exclusive?.find((g) => g.includes(name));
    if (group) {
      parts.push(`[${group.map((n) => optionSynopsis(n, true)).join(' | ')}]`);
      group.forEach((n) => done.add(n));
    } else {
      parts.push(optionSynopsis(name, spec.required?.includes(name) ?? false));
      done.add(name);
    }
  }
  return parts.join(' ');
}

const EXIT_CODES_TEXT =
  'Exit codes: 0 ok; 1 failed and nothing changed; 2 bad usage or input; 3 blocked because recovery is required.';

/** The general usage: every command with one line. */
export function generalUsage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: agent-versions [--repo <path>] [--json] [--verbose] <command>',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run "agent-versions help <command>" (or "<command> --help") for its options, an example and its --json output.',
    'agent-versions --version prints the version.',
    EXIT_CODES_TEXT,
  ].join('\n');
}

/** The short usage printed under a usage error. */
export function usageFor(command: string | undefined): string {
  const spec = command ? COMMANDS.find((c) => c.name === command) : undefined;
  if (!spec) return generalUsage();
  return `Usage: agent-versions ${synopsis(spec)}\nRun "agent-versions help ${spec.name}" for details.`;
}

/** Full help for one command: synopsis, description, options, example, --json shape. */
export function commandHelp(spec: CommandSpec): string {
  const rows = (names: readonly OptionName[]) => {
    const labels = names.map(
      (n) =>
        `${'short' in OPTIONS[n] ? `-${(OPTIONS[n] as OptionDecl).short}, ` : ''}--${n}${OPTIONS[n].type === 'string' ? ` ${placeholder(n)}` : ''}`,
    );
    const width = Math.max(...labels.map((l) => l.length));
    return labels.map((l, i) => `  ${l.padEnd(width)}  ${OPTIONS[names[i]].help}`);
  };
  return [
    `Usage: agent-versions ${synopsis(spec)}`,
    '',
    spec.description,
    ...(spec.options.length ? ['', 'Options:', ...rows(spec.options)] : []),
    '',
    'Global options:',
    ...rows(GLOBAL_OPTIONS),
    '',
    'Example:',
    `  ${spec.example}`,
    '',
    'With --json, prints:',
    `  ${spec.json}`,
    '',
    EXIT_CODES_TEXT,
  ].join('\n');
}
