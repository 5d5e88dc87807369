import type { CommandSpec } from './command';
import { GLOBAL_OPTIONS, OptionDecl, OptionName, OPTIONS } from './commandOptions';
import { placeholder } from './commandParser';

/** Usage and help text, generated from the commands' specs and the option table (so help lists what parses). */

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
export function generalUsage(commands: readonly CommandSpec[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'Usage: agent-versions [--repo <path>] [--json] [--verbose] <command>',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run "agent-versions help <command>" (or "<command> --help") for its options, an example and its --json output.',
    'agent-versions --version prints the version.',
    EXIT_CODES_TEXT,
  ].join('\n');
}

/** The short usage printed under a usage error. */
export function usageFor(commands: readonly CommandSpec[], command: string | undefined): string {
  const spec = command ? commands.find((c) => c.name === command) : undefined;
  if (!spec) return generalUsage(commands);
  return `Usage: agent-versions ${synopsis(spec)}\nRun "agent-versions help ${spec.name}" for details.`;
}

/** An option's help: the command's own wording of it, else the table's. */
function optionHelp(spec: CommandSpec, name: OptionName): string {
  const help = spec.optionHelp?.[name] ?? (OPTIONS[name] as OptionDecl).help;
  if (help === undefined) throw new Error(`--${name} has no help: ${spec.name}'s spec gives it (optionHelp)`);
  return help;
}

/** Full help for one command: synopsis, description, options, example, --json shape. */
export function commandHelp(spec: CommandSpec): string {
  const rows = (names: readonly OptionName[]) => {
    const labels = names.map((n) => {
      const decl: OptionDecl = OPTIONS[n];
      return `${decl.short ? `-${decl.short}, ` : ''}--${n}${decl.type === 'string' ? ` ${placeholder(n)}` : ''}`;
    });
    const width = Math.max(...labels.map((l) => l.length));
    return labels.map((l, i) => `  ${l.padEnd(width)}  ${optionHelp(spec, names[i])}`);
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
