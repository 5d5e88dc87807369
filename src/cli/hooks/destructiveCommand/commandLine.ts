// The command-line walker: each simple command of a line through its wrappers (`VAR=x`, env, sudo, time, xargs,
// `sh -c`, eval, find -exec, …) to the command that runs, then the rules for that command (fileRules.ts,
// gitRules.ts).

import {
  baseName,
  classified,
  type Context,
  destructive,
  type DestructiveCommand,
  LONG_WITH_VALUE,
  NO_STDIN,
  operandCount,
  readArgs,
  skipEnvAssignments,
  skipOptions,
  wrapped,
} from './classification';
import { classifyMoveOrCopy, classifyRm } from './fileRules';
import { classifyGit } from './gitRules';
import { Parser } from './parser';
import { MAX_DEPTH, RESERVED, type SimpleCommand, UNPARSEABLE, type Word } from './shellSyntax';

/** How many wrappers (`sudo env nice xargs find -exec …`) one command may pass through before it counts as unknown. */
const MAX_WRAPPERS = 16;

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash']);

export function classifyScript(text: string, depth: number): DestructiveCommand | null {
  if (depth > MAX_DEPTH) return null;
  const commands: SimpleCommand[] = [];
  try {
    new Parser(text, depth, commands).parseScript();
  } catch (error) {
    if (error === UNPARSEABLE) return null;
    throw error;
  }
  let first: DestructiveCommand | null = null;
  for (const command of commands) {
    const context = {
      stdinFed: command.stdinFed,
      stdinText: command.pipedFrom === null ? command.stdinText : pipedText(command.pipedFrom),
      depth,
      implicitOperands: false,
      wrappers: 0,
    };
    const found = classifyWords(command.words, 0, context, true);
    if (found === null) continue;
    if (first === null) first = classified(found);
    else {
      if (found.reachesIgnored) {
        // The targets stand only while every command that reaches ignored files names its own.
        if (first.reachesIgnored && first.ignoredTargets && found.ignoredTargets)
          first.ignoredTargets.push(...found.ignoredTargets);
        else if (first.reachesIgnored || !found.ignoredTargets) delete first.ignoredTargets;
        else first.ignoredTargets = [...found.ignoredTargets];
        first.reachesIgnored = true;
      }
      if (!found.onlyOverChanges) first.onlyOverChanges = false;
      if (found.reachesBuildFolders) first.reachesBuildFolders = true;
    }
    if (first.reachesIgnored && !first.onlyOverChanges && first.reachesBuildFolders) break;
  }
  return first;
}

/**
 * What a pipeline's producer writes, when the line shows it: `cat` of its heredoc or here-string, `echo` of literal
 * words, `printf` of a literal format alone (so `cat <<EOF | bash` and `echo '…' | sh` are read). Otherwise null.
 */
function pipedText(producer: SimpleCommand): string | null {
  const words = producer.words;
  let i = 0;
  while (i < words.length && words[i].assign) i++;
  if (i >= words.length) return null;
  for (let j = i; j < words.length; j++) if (words[j].dynamic) return null;
  const name = baseName(words[i].text);
  const args = words.slice(i + 1).map((w) => w.text);
  if (name === 'cat') return args.every((arg) => arg.startsWith('-')) ? producer.stdinText : null;
  if (name === 'printf') return args.length === 1 && !args[0].includes('%') ? printfEscapes(args[0]) : null;
  if (name !== 'echo') return null;
  let first = 0;
  while (first < args.length && isEchoOption(args[first])) first++;
  return args.slice(first).join(' ') + '\n';
}

/** printf's format escapes that matter to a script's shape: `\n`, `\t`, `\\`. */
function printfEscapes(format: string): string {
  let text = '';
  for (let k = 0; k < format.length; k++) {
    const c = format[k];
    const n = format[k + 1];
    if (c === '\\' && (n === 'n' || n === 't' || n === '\\')) {
      text += n === 'n' ? '\n' : n === 't' ? '\t' : '\\';
      k++;
    } else text += c;
  }
  return text;
}

function isEchoOption(arg: string): boolean {
  if (arg.length < 2 || arg[0] !== '-') return false;
  for (let k = 1; k < arg.length; k++) if (arg[k] !== 'n' && arg[k] !== 'e' && arg[k] !== 'E') return false;
  return true;
}

/** words[i…] as one command; atStart: reserved words and assignments may come first. */
export function classifyWords(words: Word[], i: number, ctx: Context, atStart: boolean): DestructiveCommand | null {
  if (ctx.wrappers > MAX_WRAPPERS) return null;
  const n = words.length;
  if (atStart) {
    // `then x`, `! x`, `function f {`, `A=1 x`; a `for x in …` header runs nothing
    for (; i < n; i++) {
      const w = words[i];
      if (w.plain && (w.text === 'for' || w.text === 'select')) return null;
      if (w.plain && w.text === 'function') i++;
      else if (!w.assign && !(w.plain && RESERVED.has(w.text))) break;
    }
  }
  if (i >= n || words[i].dynamic) return null;
  const name = baseName(words[i].text);
  switch (name) {
    case 'git':
      return classifyGit(words, i + 1, ctx);
    case 'rm':
      return classifyRm(words, i + 1, ctx);
    case 'unlink':
    case 'truncate':
    case 'shred':
    case 'rimraf': {
      const args = readArgs(words, i + 1, name === 'truncate' ? 'sr' : name === 'shred' ? 'ns' : '', LONG_WITH_VALUE);
      if (args.options.includes('--help') || args.options.includes('--version')) return null;
      return operandCount(args, ctx) > 0 ? destructive(name, true) : null;
    }
    case 'dd':
      for (let j = i + 1; j < n; j++) if (words[j].text.startsWith('of=')) return destructive('dd of=', true);
      return null;
    case 'find':
      return classifyFind(words, i + 1, ctx);
    case 'mv':
    case 'cp':
      return classifyMoveOrCopy(name, words, i + 1, ctx);
    case 'sudo': {
      const j = skipOptions(words, i + 1, 'ugCDhprtTUR', 'elvVK', SUDO_LONG_WITH_VALUE, SUDO_LONG_STOP);
      return j < 0 ? null : classifyWords(words, skipEnvAssignments(words, j), wrapped(ctx), false);
    }
    case 'doas': {
      const j = skipOptions(words, i + 1, 'u', 'C', [], []);
      return j < 0 ? null : classifyWords(words, j, wrapped(ctx), false);
    }
    case 'env': {
      let j = i + 1;
      while (j < n && words[j].text === '-' && !words[j].dynamic) j++;
      j = skipOptions(words, j, 'uC', 'S', ['--unset', '--chdir'], ['--split-string']);
      return j < 0 ? null : classifyWords(words, skipEnvAssignments(words, j), wrapped(ctx), false);
    }
    case 'command': {
      const j = skipOptions(words, i + 1, '', 'vV', [], []);
      return j < 0 ? null : classifyWords(words, j, wrapped(ctx), false);
    }
    case 'builtin':
    case 'busybox':
      return classifyWords(words, i + 1, wrapped(ctx), false);
    case 'exec':
    case 'nohup':
    case 'nice':
    case 'stdbuf': {
      const withValue = name === 'exec' ? 'a' : name === 'nice' ? 'n' : name === 'stdbuf' ? 'ioe' : '';
      const j = skipOptions(words, i + 1, withValue, '', ['--adjustment', '--input', '--output', '--error'], []);
      return j < 0 ? null : classifyWords(words, j, wrapped(ctx), false);
    }
    case 'time': {
      const j = skipOptions(words, i + 1, 'fo', '', ['--format', '--output'], []);
      return j < 0 ? null : classifyWords(words, j, wrapped(ctx), words[i].plain);
    }
    case 'timeout': {
      const j = skipOptions(words, i + 1, 'sk', '', ['--signal', '--kill-after'], ['--help', '--version']);
      return j < 0 ? null : classifyWords(words, j + 1, wrapped(ctx), false); // j: the duration
    }
    case 'xargs':
      return classifyXargs(words, i + 1, ctx);
    case 'npx':
    case 'pnpx':
    case 'bunx': {
      // `npx rimraf dist`: a package's binary (only rimraf is known; `npx -c '…'` is not read)
      const j = skipOptions(words, i + 1, 'p', 'c', ['--package'], ['--call']);
      return j < 0 ? null : classifyWords(words, j, wrapped(ctx), false);
    }
    case 'eval': {
      if (ctx.depth + 1 > MAX_DEPTH) return null;
      const parts: string[] = [];
      for (let j = i + 1; j < n; j++) {
        if (words[j].dynamic) return null;
        parts.push(words[j].text);
      }
      return classifyScript(parts.join(' '), ctx.depth + 1);
    }
    default:
      return SHELLS.has(name) ? classifyShell(words, i + 1, ctx) : null;
  }
}

const SUDO_LONG_WITH_VALUE = [
  '--user',
  '--group',
  '--close-from',
  '--chdir',
  '--host',
  '--prompt',
  '--role',
  '--type',
  '--other-user',
  '--command-timeout',
  '--chroot',
];
const SUDO_LONG_STOP = ['--edit', '--list', '--validate', '--version', '--help', '--remove-timestamp'];

function classifyXargs(words: Word[], i: number, ctx: Context): DestructiveCommand | null {
  const start = i;
  const j = skipOptions(
    words,
    i,
    'adEILnPs',
    '',
    ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
    ['--help', '--version', '--show-limits'],
  );
  if (j < 0 || j >= words.length) return null; // no command: xargs runs echo
  let replacing = false;
  for (let k = start; k < j; k++) {
    const t = words[k].text;
    if (t.startsWith('--replace') || t === '-I' || t.startsWith('-i') || (t.startsWith('-I') && t.length > 2)) {
      replacing = true;
    }
  }
  // xargs gives its command /dev/null for stdin; operands come from its own stdin unless -I/-i replaces them
  const inner: Context = {
    stdinFed: false,
    stdinText: null,
    depth: ctx.depth,
    implicitOperands: !replacing,
    wrappers: ctx.wrappers + 1,
  };
  return classifyWords(words, j, inner, false);
}

function classifyShell(words: Word[], i: number, ctx: Context): DestructiveCommand | null {
  const n = words.length;
  let command = false;
  let fromStdin = false;
  for (; i < n; i++) {
    const w = words[i];
    if (w.dynamic) return null;
    const t = w.text;
    if (t === '--' || t === '-') {
      i++;
      break;
    }
    const sign = t.charCodeAt(0);
    if (t.length < 2 || (sign !== 45 && sign !== 43)) break;
    if (t.charCodeAt(1) === 45) {
      if (t === '--rcfile' || t === '--init-file') i++;
      continue;
    }
    for (let k = 1; k < t.length; k++) {
      const letter = t[k];
      if (letter === 'c') command = true;
      else if (letter === 's') fromStdin = true;
      else if (letter === 'n' && sign === 45)
        return null; // -n: read, never run
      else if (letter === 'o' || letter === 'O') i++;
    }
  }
  if (ctx.depth + 1 > MAX_DEPTH) return null;
  if (command) {
    if (i >= n || words[i].dynamic) return null;
    return classifyScript(words[i].text, ctx.depth + 1);
  }
  if (i < n && !fromStdin) return null; // a script file: not read
  return ctx.stdinText === null ? null : classifyScript(ctx.stdinText, ctx.depth + 1);
}

/** find's tests and actions that take a value (so `-name -delete` is a name, not the action). */
const FIND_WITH_VALUE = new Set([
  '-name',
  '-iname',
  '-path',
  '-ipath',
  '-wholename',
  '-iwholename',
  '-regex',
  '-iregex',
  '-regextype',
  '-type',
  '-xtype',
  '-user',
  '-group',
  '-perm',
  '-size',
  '-mtime',
  '-atime',
  '-ctime',
  '-mmin',
  '-amin',
  '-cmin',
  '-newer',
  '-anewer',
  '-cnewer',
  '-maxdepth',
  '-mindepth',
  '-samefile',
  '-inum',
  '-links',
  '-uid',
  '-gid',
  '-fstype',
  '-lname',
  '-ilname',
  '-used',
  '-printf',
  '-fprint',
  '-fprint0',
  '-fls',
  '-context',
  '-files0-from',
]);

function classifyFind(words: Word[], i: number, ctx: Context): DestructiveCommand | null {
  const n = words.length;
  for (let j = i; j < n; j++) {
    const w = words[j];
    if (w.dynamic) continue;
    const t = w.text;
    if (FIND_WITH_VALUE.has(t)) j++;
    else if (t === '-fprintf') j += 2;
    else if (t === '-delete') return destructive('find -delete', true);
    else if (t === '-exec' || t === '-execdir' || t === '-ok' || t === '-okdir') {
      let end = j + 1;
      while (end < n && words[end].text !== ';' && words[end].text !== '+') end++;
      if (end >= n) return null; // no terminator: find refuses to run
      const prompts = t === '-ok' || t === '-okdir';
      if (!prompts || ctx.stdinFed) {
        const inner: Context = { ...NO_STDIN, depth: ctx.depth, wrappers: ctx.wrappers + 1 };
        const found = classifyWords(words.slice(j + 1, end), 0, inner, false);
        if (found !== null) return { ...classified(found, false), label: 'find -exec ' + found.label };
      }
      j = end;
    }
  }
  return null;
}
