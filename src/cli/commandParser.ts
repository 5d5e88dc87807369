import { parseArgs } from 'node:util';
import type { CommandSpec } from './command';
import { GLOBAL_OPTIONS, OptionDecl, OptionName, OPTIONS, OptionValues } from './commandOptions';
import { UsageError } from './exitCodes';

/**
 * Parses a command line with node:util `parseArgs` against the commands' specs and the option table, so nothing
 * is accepted that help does not list. `commands` is the registry (commandLine.ts); the hook fast path passes the
 * hook command's spec alone, which parses every `hook …` line exactly as the whole list does.
 */

export type Invocation =
  | { kind: 'version'; values: OptionValues }
  | { kind: 'help'; topic: CommandSpec[] | null; values: OptionValues }
  | { kind: 'run'; command: string; args: string[]; values: OptionValues };

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
export function parseCommandLine(argv: readonly string[], commands: readonly CommandSpec[]): Invocation {
  const loose = looseParse(argv);
  const guess = matchCommand(commands, loose.positionals);
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
  if (positionals[0] === 'help') return { kind: 'help', topic: helpTopic(commands, positionals.slice(1)), values };
  if (values.help) return { kind: 'help', topic: helpTopic(commands, positionals), values };
  if (positionals.length === 0) throw new UsageError('no command given');
  const match = matchCommand(commands, positionals);
  if (!match) throw new UsageError(unknownCommandMessage(commands, positionals));
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
      const takes = arg.choices.length === 1 ? `only ${arg.choices[0]}` : `one of: ${arg.choices.join(', ')}`;
      throw new UsageError(`unknown ${arg.what ?? arg.name} "${echo(value)}"; ${spec.name} takes ${takes}`, spec.name);
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
  for (const name of spec.options) {
    const problem = valueProblem(name, values[name]);
    if (problem) throw new UsageError(problem, spec.name);
  }
  return { kind: 'run', command: spec.name, args: rest, values };
}

/** What is wrong with a string option's value, by its declaration's choices or range; undefined when nothing is. */
function valueProblem(name: OptionName, value: string | boolean | undefined): string | undefined {
  const decl: OptionDecl = OPTIONS[name];
  if (typeof value !== 'string') return undefined;
  if (decl.choices && !decl.choices.includes(value))
    return `--${name} must be ${decl.choices.join(' or ')}, not "${echo(value)}"`;
  if (decl.range) {
    const [min, max] = decl.range;
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) return `--${name} must be a whole number from ${min} to ${max}`;
  }
  return undefined;
}

function matchCommand(
  commands: readonly CommandSpec[],
  positionals: readonly string[],
): { spec: CommandSpec; rest: string[] } | null {
  const [a, b] = positionals;
  const two = commands.find((c) => c.name === `${a} ${b}`);
  if (two) return { spec: two, rest: positionals.slice(2) };
  const one = commands.find((c) => c.name === a);
  return one ? { spec: one, rest: positionals.slice(1) } : null;
}

/** `help`, `help <command>`, `help turn` (both turn commands). */
function helpTopic(commands: readonly CommandSpec[], words: readonly string[]): CommandSpec[] | null {
  if (words.length === 0) return null;
  const match = matchCommand(commands, words);
  if (match) return [match.spec];
  const group = commands.filter((c) => c.name.startsWith(`${words[0]} `));
  if (words.length === 1 && group.length > 0) return group;
  throw new UsageError(unknownCommandMessage(commands, words));
}

function unknownCommandMessage(commands: readonly CommandSpec[], positionals: readonly string[]): string {
  const group = commands.filter((c) => c.name.startsWith(`${positionals[0]} `));
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
    const hint = /ambiguous/.test(message) ? ` (to give one that starts with "-", write ${option}=<value>)` : '';
    return `${option} needs a value${hint}`;
  }
  return 'the arguments could not be read';
}

/** A short, single-line echo of user input inside an error message. */
function echo(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is being replaced
  const flat = text.replace(/[\u0000-\u001f\u007f]/g, '?');
  return flat.length > 40 ? `${flat.slice(0, 40)}…` : flat;
}

/** The value's placeholder of a string option, in messages and help. */
export function placeholder(name: OptionName): string {
  const decl: OptionDecl = OPTIONS[name];
  return decl.value ?? '';
}
