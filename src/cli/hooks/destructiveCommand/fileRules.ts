// The rules for the commands that act on files: rm, and mv/cp onto a path (unlink, truncate, shred, rimraf, dd and
// find are read by the walker, commandLine.ts).

import {
  type Context,
  destructive,
  type DestructiveCommand,
  literalPaths,
  LONG_WITH_VALUE,
  operandCount,
  readArgs,
} from './classification';
import type { Word } from './shellSyntax';

export function classifyRm(words: Word[], i: number, ctx: Context): DestructiveCommand | null {
  const args = readArgs(words, i, '', []);
  let recursive = false;
  let prompt: 'never' | 'once' | 'always' = 'never';
  for (const option of args.options) {
    if (option === '-r' || option === '-R' || option === '--recursive') recursive = true;
    else if (option === '-f' || option === '--force') prompt = 'never';
    else if (option === '-i' || option === '--interactive' || option === '--interactive=always') prompt = 'always';
    else if (option === '--interactive=yes') prompt = 'always';
    else if (option === '-I' || option === '--interactive=once') prompt = 'once';
    else if (option === '--interactive=never' || option === '--interactive=no' || option === '--interactive=none') {
      prompt = 'never';
    } else if (option === '--help' || option === '--version') return null;
  }
  const operands = operandCount(args, ctx);
  if (operands === 0) return null;
  if (!ctx.stdinFed) {
    // a prompt nobody answers is answered no (rm -I asks only for recursion or more than three operands)
    if (prompt === 'always' || (prompt === 'once' && (recursive || operands > 3))) return null;
  }
  const targets = literalPaths(args.operands, ctx);
  return { ...destructive(recursive ? 'rm -r' : 'rm', true), ...(targets ? { ignoredTargets: targets } : {}) };
}

export function classifyMoveOrCopy(
  name: 'mv' | 'cp',
  words: Word[],
  i: number,
  ctx: Context,
): DestructiveCommand | null {
  const args = readArgs(words, i, 'St', LONG_WITH_VALUE);
  let mode: 'force' | 'interactive' | 'no-clobber' = 'force';
  let keeps = false; // a backup, or an exchange: what was there is kept
  let targetDirectory = false;
  for (const option of args.options) {
    if (option === '-f' || option === '--force') mode = 'force';
    else if (option === '-i' || option === '--interactive') mode = 'interactive';
    else if (option === '-n' || option === '--no-clobber' || option.startsWith('--update=none')) mode = 'no-clobber';
    else if (option === '-b' || option === '--exchange') keeps = true;
    else if (option.startsWith('--backup')) keeps = option !== '--backup=none' && option !== '--backup=off';
    else if (option === '-t' || option.startsWith('--target-directory')) targetDirectory = true;
    else if (option === '--help' || option === '--version') return null;
  }
  const operands = operandCount(args, ctx);
  if (operands < (targetDirectory ? 1 : 2)) return null;
  if (mode === 'no-clobber' || keeps || (mode === 'interactive' && !ctx.stdinFed)) return null;
  return destructive(name + ' onto a path', true, true);
}
