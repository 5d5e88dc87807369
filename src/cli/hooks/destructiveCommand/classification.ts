// What a classification returns, the context a simple command is classified in, and the reading of a command's
// options and operands that the rules (commandLine.ts, fileRules.ts, gitRules.ts) share.

import { isAssignmentName, type Word } from './shellSyntax';

export interface DestructiveCommand {
  /**
   * A short, content-free label of what was recognised, e.g. 'git reset --hard', 'git clean -x', 'git stash',
   * 'git checkout --', 'rm -r', 'find -delete', 'mv onto a path'. Never the command's paths or arguments beyond flags.
   */
  label: string;
  /**
   * The command line can delete files git ignores (git clean -x/-X, git stash --all; rm/find/mv/cp/truncate/shred/dd
   * of paths, which may be ignored): the checkpoint must save ignored files too. Set when ANY destructive
   * sub-command of the line reaches them, not only the first (one checkpoint is taken before the whole line).
   */
  reachesIgnored: boolean;
  /**
   * Every destructive sub-command of the line destroys only what differs from HEAD: `git rebase`/`merge`/`pull`
   * (git refuses or carries over nothing but uncommitted work) and `mv`/`cp` onto a path (tracked content overwritten
   * is in HEAD; an ignored destination is not, which `reachesIgnored` covers). Over a clean tree the caller needs no
   * snapshot of the tree (docs/design/command-checkpoints.md, "Nothing to destroy").
   */
  onlyOverChanges: boolean;
  /**
   * The line can delete dependency and build folders as a side effect: `git clean -x`/`-X` removes every ignored
   * `build/` and `node_modules/` of the tree. The checkpoint then saves them too, within its budget
   * (checkpointSnapshot.ts); an `rm -rf build` is a deliberate removal of a rebuildable folder and does not. Present
   * only when true.
   */
  reachesBuildFolders?: true;
  /**
   * The paths the line's commands that reach ignored files name, as written (`rm -rf logs .cache/x`), when every
   * such command is an `rm` whose operands are all literal paths (no expansion, glob, brace or `~`): the checkpoint
   * keeps only the ignored files at or under such a path, wherever the shell's folder is. Absent: every ignored file.
   */
  ignoredTargets?: string[];
}

export interface Context {
  stdinFed: boolean;
  stdinText: string | null;
  depth: number;
  /** Run by xargs: operands the command line does not show are appended (so `xargs rm` has one). */
  implicitOperands: boolean;
  /** How many wrappers this command was found behind (bounded: `sudo sudo sudo …` must not exhaust the stack). */
  wrappers: number;
}

/** The context of the command a wrapper (`sudo`, `env`, `time`, …) runs: the same stdin, one wrapper deeper. */
export function wrapped(ctx: Context): Context {
  return { ...ctx, wrappers: ctx.wrappers + 1 };
}

export const NO_STDIN = { stdinFed: false, stdinText: null, implicitOperands: false } as const;

export function destructive(label: string, reachesIgnored: boolean, onlyOverChanges = false): DestructiveCommand {
  return { label, reachesIgnored, onlyOverChanges };
}

/**
 * What a line's classification carries out of the walker: the label, the flags and the paths `ignoredTargets` names
 * (`withTargets`: not for a command run by `find -exec`, whose operands are `{}`).
 */
export function classified(found: DestructiveCommand, withTargets = true): DestructiveCommand {
  return {
    label: found.label,
    reachesIgnored: found.reachesIgnored,
    onlyOverChanges: found.onlyOverChanges,
    ...(found.reachesBuildFolders ? { reachesBuildFolders: true as const } : {}),
    ...(withTargets && found.ignoredTargets ? { ignoredTargets: [...found.ignoredTargets] } : {}),
  };
}

/** The literal paths of `operands`, or undefined when any is an expansion, a glob, a brace list or starts with `~`. */
export function literalPaths(operands: readonly Word[], ctx: Context): string[] | undefined {
  if (ctx.implicitOperands || operands.length === 0) return undefined;
  const paths: string[] = [];
  for (const w of operands) {
    if (w.dynamic || w.text === '') return undefined;
    if (w.plain && /[*?[{~]/.test(w.text)) return undefined;
    paths.push(w.text);
  }
  return paths;
}

export function baseName(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? path : path.slice(slash + 1);
}

interface Args {
  /** In order: '-x' for each short option letter, the whole word for a long option ('--name' or '--name=value'). */
  options: string[];
  /** Words that are not options (a dynamic word always counts as one). */
  operands: Word[];
  /** How many of the operands came after `--`. */
  afterDashDash: number;
}

/** Long options (of any command read here) that take a value in the next word when written without '='. */
export const LONG_WITH_VALUE = [
  '--pathspec-from-file',
  '--orphan',
  '--conflict',
  '--source',
  '--exclude',
  '--message',
  '--create',
  '--force-create',
  '--size',
  '--reference',
  '--iterations',
  '--random-source',
  '--suffix',
  '--target-directory',
];

/** A command's arguments read as getopt does (options may follow operands; `--` ends them). */
export function readArgs(words: Word[], i: number, shortWithValue: string, longWithValue: readonly string[]): Args {
  const args: Args = { options: [], operands: [], afterDashDash: 0 };
  const n = words.length;
  for (; i < n; i++) {
    const w = words[i];
    const t = w.text;
    if (w.dynamic || t.length < 2 || t.charCodeAt(0) !== 45) {
      args.operands.push(w);
      continue;
    }
    if (t === '--') {
      const before = args.operands.length;
      for (i++; i < n; i++) args.operands.push(words[i]);
      args.afterDashDash = args.operands.length - before;
      break;
    }
    if (t.charCodeAt(1) === 45) {
      args.options.push(t);
      if (!t.includes('=') && longWithValue.includes(t)) i++;
      continue;
    }
    for (let k = 1; k < t.length; k++) {
      args.options.push('-' + t[k]);
      if (shortWithValue.includes(t[k])) {
        if (k === t.length - 1) i++;
        break;
      }
    }
  }
  return args;
}

export function hasOption(args: Args, ...names: string[]): boolean {
  for (const option of args.options) {
    for (const name of names)
      if (option === name || (option.startsWith(name + '=') && name.startsWith('--'))) return true;
  }
  return false;
}

export function operandCount(args: Args, ctx: Context): number {
  return args.operands.length + (ctx.implicitOperands ? 1 : 0);
}

/**
 * Skips a wrapper's options. shortWithValue/longWithValue: the options that take a value; shortStop/longStop: those
 * after which no command runs (`sudo -l`, `command -v`). Returns the index of the wrapped command, or -1.
 */
export function skipOptions(
  words: Word[],
  i: number,
  shortWithValue: string,
  shortStop: string,
  longWithValue: readonly string[],
  longStop: readonly string[],
): number {
  const n = words.length;
  while (i < n) {
    const w = words[i];
    if (w.dynamic) return -1;
    const t = w.text;
    if (t === '--') return i + 1;
    if (t.length < 2 || t.charCodeAt(0) !== 45) return i;
    if (t.charCodeAt(1) === 45) {
      const eq = t.indexOf('=');
      const optionName = eq < 0 ? t : t.slice(0, eq);
      if (longStop.includes(optionName)) return -1;
      i += eq < 0 && longWithValue.includes(t) ? 2 : 1;
      continue;
    }
    let step = 1;
    for (let k = 1; k < t.length; k++) {
      if (shortStop.includes(t[k])) return -1;
      if (shortWithValue.includes(t[k])) {
        if (k === t.length - 1) step = 2;
        break;
      }
    }
    i += step;
  }
  return i;
}

/** `NAME=value` words after `env`/`sudo` options. */
export function skipEnvAssignments(words: Word[], i: number): number {
  while (i < words.length && !words[i].dynamic) {
    const eq = words[i].text.indexOf('=');
    if (eq <= 0 || !isAssignmentName(words[i].text.slice(0, eq))) break;
    i++;
  }
  return i;
}
