// Recognising the shell commands that destroy working-tree content (issue 34), so the pre-tool hook can save a
// checkpoint just before the agent runs one. Loaded on the hook's fast path for every shell tool call: nothing
// imported from outside this folder but its first test (commandMentions.ts, which the CLI's entry runs before any
// hook code loads), one linear pass of a hand-written tokenizer, no regular expressions, and most commands leave at
// the first test.
//
// The parts: parser.ts with wordLexer.ts and shellSyntax.ts (the tokenizer: a line → its simple commands),
// commandLine.ts (the walker: each simple command through its wrappers, `sh -c`, eval, xargs and find -exec to the
// command that runs), fileRules.ts (rm, mv/cp), gitRules.ts, and classification.ts (the answer's shape, a command's
// context and the option reading the rules share).
//
// What is recognised (docs/design/destructive-commands.md has the reasons):
// - Command lines in POSIX shell syntax: lists and pipelines (`&&`, `||`, `;`, `|`, `|&`, `&`, newlines), subshells
//   `( … )`, groups `{ …; }`, `if/while/until … then/do … fi/done` bodies, function bodies (counted as run),
//   quoting ('…', "…", $'…', backslashes), comments, heredocs (a body is data, unless a shell reads it: `bash <<EOF`),
//   command substitutions `$( … )` and `` `…` `` and process substitutions `<( … )` (their commands run too).
// - Wrappers, recursively (depth-limited): `VAR=x cmd`, `env`, `sudo`, `doas`, `command`, `builtin`, `exec`,
//   `nohup`, `time`, `nice`, `timeout`, `stdbuf`, `xargs` (its operands come from stdin), `eval`, `busybox`, `npx`,
//   and `sh`/`bash`/`zsh`/`dash`/`ksh` with `-c` (also `-lc`, `-ec`, …), a heredoc/here-string as the script, or
//   one piped from `cat <<EOF`, `echo '…'` or `printf '…'`.
// - git with global options before the subcommand; the git subcommands, rm, unlink, rimraf, find -delete/-exec, mv,
//   cp, truncate, shred and dd of= as listed on classifyShellCommand.
// Never guessed: a command run through a variable (`$RM -rf x`), an alias or function defined elsewhere, a script
// file, a script piped from elsewhere (`curl … | sh`), npm/make targets, `env -S`, `case` statements, PowerShell or
// cmd.exe syntax, and any line the tokenizer cannot read (unbalanced quotes or parentheses) give null.

import { mayMention } from '../commandMentions';
import { classified, type DestructiveCommand, NO_STDIN } from './classification';
import { classifyScript, classifyWords } from './commandLine';
import type { Word } from './shellSyntax';

export type { DestructiveCommand } from './classification';

/** Longer command lines are not parsed at all (a tool payload of that size is not a command an agent types). */
export const MAX_CLASSIFIED_CHARS = 64 * 1024;

/**
 * The first destructive sub-command of a shell command line, or null (harmless, unknown, or unparseable: never
 * guessed). Recognised as destructive:
 * - `git reset --hard|--merge|--keep`; `git checkout -f`, `git checkout [tree-ish] -- paths`, `git checkout .` and
 *   `git checkout` with an operand that cannot be a branch name (an extension, a leading `./` or `/`, a dot-file, a
 *   glob, a trailing `/`) or with two operands (`git checkout HEAD x.ts`); `git restore` of the worktree (without
 *   `--staged`, or with `--worktree`); `git clean` unless `-n`/`--dry-run` (also without `-f`: a repository may set
 *   clean.requireForce=false); `git stash` / `push` / `save` / `drop` / `clear`;
 *   `git switch -f|--discard-changes|--orphan`; `git rm` (not `--cached`); `git mv -f`.
 * - `git rebase`, `git merge`, `git pull` (but not `--continue`, `--quit`, `--edit-todo`, `--show-current-patch`):
 *   they destroy work only over a dirty tree, which a classifier cannot see; the CALLER checks dirtiness.
 * - `rm` with an operand, `unlink`, `rimraf`, `find … -delete`, `find … -exec|-execdir <destructive command> ;`,
 *   `truncate`, `shred`, `dd of=…`.
 * - `mv`/`cp` with a destination (two operands, or `-t dir`) and neither `-n`, `--backup`, nor `-i`: the classifier
 *   cannot see the disk, so the CALLER may check whether the destination exists before taking a checkpoint.
 * Harmless: prompting forms whose stdin is not fed (`rm -i`, `rm -I` of a few files, `git clean -i`,
 * `git checkout|restore|stash -p`, `mv -i`, `find -ok`); fed by a pipe or redirection (`yes | rm -i x`), they count.
 * Not recognised (documented choices): redirections that truncate (`> file`: how agents write files; the turn's
 * version holds what the file had), `rmdir` (empty folders only), `git stash pop/apply` (git refuses to overwrite).
 */
export function classifyShellCommand(command: string): DestructiveCommand | null {
  if (typeof command !== 'string' || command.length > MAX_CLASSIFIED_CHARS || !mayMention(command)) return null;
  return classifyScript(command, 0);
}

/**
 * The same for an argv: a plain one (`["git","reset","--hard"]`) or a shell's (`["bash","-lc","git reset --hard"]`,
 * as Codex sends them). Its elements are words already: no quoting, no reserved words, no `VAR=x` prefixes.
 */
export function classifyArgv(argv: readonly string[]): DestructiveCommand | null {
  if (!Array.isArray(argv) || argv.length === 0) return null;
  let total = 0;
  let mentions = false;
  for (const arg of argv) {
    if (typeof arg !== 'string') return null;
    total += arg.length + 1;
    if (total > MAX_CLASSIFIED_CHARS) return null;
    if (!mentions && mayMention(arg)) mentions = true;
  }
  if (!mentions) return null;
  const words = argv.map((text): Word => ({ text, dynamic: false, plain: false, assign: false }));
  const found = classifyWords(words, 0, { ...NO_STDIN, depth: 0, wrappers: 0 }, false);
  return found === null ? null : classified(found);
}
