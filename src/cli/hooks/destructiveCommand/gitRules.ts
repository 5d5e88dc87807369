// The rules for git: global options before the subcommand, then reset, checkout, restore, clean, stash, switch,
// rebase/merge/pull, rm and mv (the list is on classifyShellCommand, index.ts).

import {
  type Context,
  destructive,
  type DestructiveCommand,
  hasOption,
  LONG_WITH_VALUE,
  operandCount,
  readArgs,
} from './classification';
import { SPACE, TAB, type Word } from './shellSyntax';

/** Global options taking a value in the next word (or after '=' for the long ones). */
const GIT_GLOBAL_WITH_VALUE = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--config-env',
  '--super-prefix',
  '--attr-source',
]);
const GIT_GLOBAL_FLAGS = new Set([
  '--no-pager',
  '-p',
  '--paginate',
  '-P',
  '--bare',
  '--no-replace-objects',
  '--literal-pathspecs',
  '--glob-pathspecs',
  '--noglob-pathspecs',
  '--icase-pathspecs',
  '--no-optional-locks',
  '--no-lazy-fetch',
  '--no-advice',
]);

export function classifyGit(words: Word[], i: number, ctx: Context): DestructiveCommand | null {
  const n = words.length;
  while (i < n) {
    const w = words[i];
    if (w.dynamic) return null;
    const t = w.text;
    if (t.charCodeAt(0) !== 45) break;
    const eq = t.indexOf('=');
    if (GIT_GLOBAL_WITH_VALUE.has(t)) i += 2;
    else if (GIT_GLOBAL_FLAGS.has(t)) i++;
    else if (eq > 2 && (GIT_GLOBAL_WITH_VALUE.has(t.slice(0, eq)) || t.slice(0, eq) === '--exec-path')) i++;
    else return null; // --version, --help, --exec-path alone, an unknown option: no subcommand runs
  }
  if (i >= n || words[i].dynamic) return null;
  const subcommand = words[i].text;
  const rest = i + 1;
  switch (subcommand) {
    case 'reset': {
      const args = readArgs(words, rest, '', LONG_WITH_VALUE);
      for (const mode of ['--hard', '--merge', '--keep']) if (args.options.includes(mode)) return git('reset ' + mode);
      return null;
    }
    case 'checkout':
      return classifyCheckout(words, rest, ctx);
    case 'restore': {
      const args = readArgs(words, rest, 's', LONG_WITH_VALUE);
      const worktree = hasOption(args, '-W', '--worktree') || !hasOption(args, '-S', '--staged');
      if (!worktree || (operandCount(args, ctx) === 0 && !hasOption(args, '--pathspec-from-file'))) return null;
      if (hasOption(args, '-p', '--patch') && !ctx.stdinFed) return null;
      return git('restore');
    }
    case 'clean': {
      const args = readArgs(words, rest, 'e', LONG_WITH_VALUE);
      if (hasOption(args, '-n', '--dry-run', '-h', '--help')) return null;
      if (hasOption(args, '-i', '--interactive') && !ctx.stdinFed) return null;
      if (hasOption(args, '-x')) return { ...destructive('git clean -x', true), reachesBuildFolders: true };
      if (hasOption(args, '-X')) return { ...destructive('git clean -X', true), reachesBuildFolders: true };
      return git('clean');
    }
    case 'stash':
      return classifyStash(words, rest, ctx);
    case 'switch': {
      const args = readArgs(words, rest, 'cC', LONG_WITH_VALUE);
      if (hasOption(args, '-f', '--force')) return git('switch -f');
      if (hasOption(args, '--discard-changes')) return git('switch --discard-changes');
      if (hasOption(args, '--orphan')) return git('switch --orphan');
      return null;
    }
    case 'rebase':
    case 'merge':
    case 'pull': {
      let label = subcommand;
      for (let j = rest; j < n && words[j].text !== '--'; j++) {
        const t = words[j].text;
        if (GIT_SEQUENCE_HARMLESS.has(t)) return null;
        if (t === '--abort' || t === '--skip') label = subcommand + ' ' + t;
      }
      return destructive('git ' + label, false, true);
    }
    case 'rm': {
      const args = readArgs(words, rest, '', LONG_WITH_VALUE);
      if (hasOption(args, '--cached', '-n', '--dry-run', '-h', '--help')) return null;
      return operandCount(args, ctx) > 0 || hasOption(args, '--pathspec-from-file') ? git('rm') : null;
    }
    case 'mv': {
      const args = readArgs(words, rest, '', LONG_WITH_VALUE);
      if (!hasOption(args, '-f', '--force') || hasOption(args, '-n', '--dry-run')) return null;
      return operandCount(args, ctx) >= 2 ? git('mv -f') : null;
    }
    default:
      return null;
  }
}

/** rebase/merge/pull options after which nothing in the tree is overwritten. */
const GIT_SEQUENCE_HARMLESS = new Set(['--continue', '--quit', '--edit-todo', '--show-current-patch', '-h', '--help']);

export function git(label: string): DestructiveCommand {
  return destructive('git ' + label, false);
}

function classifyCheckout(words: Word[], i: number, ctx: Context): DestructiveCommand | null {
  const args = readArgs(words, i, 'bB', LONG_WITH_VALUE);
  if (hasOption(args, '-h', '--help')) return null;
  if (hasOption(args, '-p', '--patch') && !ctx.stdinFed) return null;
  if (hasOption(args, '-f', '--force')) return git('checkout -f');
  const afterDashDash = args.afterDashDash + (ctx.implicitOperands ? 1 : 0);
  if (afterDashDash > 0 || hasOption(args, '--pathspec-from-file')) return git('checkout --');
  // a new branch from a start point: git refuses paths with it
  if (hasOption(args, '-b', '-B', '--orphan')) return null;
  const before = args.operands.length - args.afterDashDash;
  if (before >= 2) return git('checkout <paths>');
  if (before === 1) {
    const operand = args.operands[0];
    if (operand.text === '.') return git('checkout .');
    if (!operand.dynamic && cannotBeBranch(operand.text)) return git('checkout <paths>');
  }
  return null;
}

/**
 * A lone `git checkout` operand that is a path, not a branch or commit: names git refuses for refs (a leading `/` or
 * `.`, a component starting with '.', a trailing '/', globs, blanks, a `:` pathspec) or a file name with an
 * extension (`x.ts`). A folder name such as `src` could be a branch: taken for one (git would switch to it).
 */
function cannotBeBranch(text: string): boolean {
  if (text === '..') return true;
  if (text === '' || text === '-') return false;
  const c = text.charCodeAt(0);
  if (c === 47 || c === 58) return true; // '/', ':'
  if (text.endsWith('/')) return true;
  for (let k = 0; k < text.length; k++) {
    const code = text.charCodeAt(k);
    if (code === 42 || code === 63 || code === 91 || code === SPACE || code === TAB) return true; // * ? [ blanks
    if (code === 46 && (k === 0 || text.charCodeAt(k - 1) === 47)) return true; // a component starting with '.'
  }
  const last = text.slice(text.lastIndexOf('/') + 1);
  const dot = last.lastIndexOf('.');
  if (dot > 0 && dot < last.length - 1) {
    const ext = last.charCodeAt(dot + 1);
    return (ext >= 65 && ext <= 90) || (ext >= 97 && ext <= 122); // `.ts`, not `v1.2`
  }
  return false;
}

function classifyStash(words: Word[], i: number, ctx: Context): DestructiveCommand | null {
  let from = i;
  if (i < words.length) {
    const first = words[i];
    if (first.dynamic) return null;
    if (first.text.charCodeAt(0) !== 45) {
      if (first.text === 'drop' || first.text === 'clear') return git('stash ' + first.text);
      if (first.text !== 'push' && first.text !== 'save') return null; // list, show, pop, apply, branch, …
      from = i + 1;
    }
  }
  const args = readArgs(words, from, 'm', LONG_WITH_VALUE);
  if (hasOption(args, '-h', '--help')) return null;
  if (hasOption(args, '-p', '--patch') && !ctx.stdinFed) return null;
  if (hasOption(args, '-a', '--all')) return destructive('git stash --all', true);
  if (hasOption(args, '-u', '--include-untracked')) return git('stash -u');
  return git('stash');
}
