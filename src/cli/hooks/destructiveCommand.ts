// Recognising the shell commands that destroy working-tree content (issue 34), so the pre-tool hook can save a
// checkpoint just before the agent runs one. Loaded on the hook's fast path for every shell tool call: one import
// (its first test, commandMentions.ts, which the CLI's entry runs before any hook code loads), one linear pass of a
// hand-written tokenizer, no regular expressions, and most commands leave at the first test.
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

import { mayMention } from './commandMentions';

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
}

/** Longer command lines are not parsed at all (a tool payload of that size is not a command an agent types). */
export const MAX_CLASSIFIED_CHARS = 64 * 1024;

/** How deep `sh -c`, `eval`, `$( … )` and backticks may nest before a line counts as unparseable. */
const MAX_DEPTH = 8;

/** How many wrappers (`sudo env nice xargs find -exec …`) one command may pass through before it counts as unknown. */
const MAX_WRAPPERS = 16;

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
  return found === null
    ? null
    : { label: found.label, reachesIgnored: found.reachesIgnored, onlyOverChanges: found.onlyOverChanges };
}

// ---------------------------------------------------------------------------------------------------------------
// The tokenizer: a shell line → the simple commands it runs, in the order they start.

interface Word {
  /** The text after quote removal; an expansion ($x, $(…), `…`, ${…}) contributes nothing to it. */
  text: string;
  /** Holds an expansion the shell fills in when it runs: its text is not what the command receives. */
  dynamic: boolean;
  /** Unquoted, unescaped, without expansions: may be a reserved word (`then`, `{`, `!`). */
  plain: boolean;
  /** An assignment `NAME=value` with an unquoted name (skipped before a command's name). */
  assign: boolean;
}

interface SimpleCommand {
  words: Word[];
  /** Its stdin is a pipe, a file, a heredoc or a here-string: a prompt it shows may be answered. */
  stdinFed: boolean;
  /** The heredoc body or here-string it reads, when known (a shell reading it runs it). */
  stdinText: string | null;
  /** The command before it in a pipeline, whose output is its stdin (null once a redirection replaces that). */
  pipedFrom: SimpleCommand | null;
}

interface PendingHeredoc {
  delimiter: string;
  stripTabs: boolean;
  /** The command whose stdin it is (null for another file descriptor). */
  command: SimpleCommand | null;
}

/** Thrown (one object, no stack captured per throw) when the line cannot be read: the answer is then null. */
const UNPARSEABLE = new Error('unparseable shell command');

const TAB = 9;
const NL = 10;
const SPACE = 32;
const BANG = 33;
const DQUOTE = 34;
const HASH = 35;
const DOLLAR = 36;
const AMP = 38;
const SQUOTE = 39;
const LPAREN = 40;
const RPAREN = 41;
const SEMI = 59;
const LT = 60;
const GT = 62;
const BACKSLASH = 92;
const BACKTICK = 96;
const LBRACE = 123;
const PIPE = 124;
const RBRACE = 125;

/** Character classes below 128: 1 ordinary word character, 2 a metacharacter ending a word, 3 a quote/expansion. */
const CHAR_CLASS = new Uint8Array(128).fill(1);
for (const code of [TAB, NL, SPACE, PIPE, AMP, SEMI, LPAREN, RPAREN, LT, GT]) CHAR_CLASS[code] = 2;
for (const code of [BACKSLASH, SQUOTE, DQUOTE, DOLLAR, BACKTICK]) CHAR_CLASS[code] = 3;

function charClass(code: number): number {
  return code < 128 ? CHAR_CLASS[code] : 1;
}

function isNameStart(code: number): boolean {
  return code === 95 || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function isNameChar(code: number): boolean {
  return isNameStart(code) || (code >= 48 && code <= 57);
}

/** `NAME` or `NAME+` (the part before `=` of an assignment). */
function isAssignmentName(text: string): boolean {
  const end = text.endsWith('+') ? text.length - 1 : text.length;
  if (end === 0 || !isNameStart(text.charCodeAt(0))) return false;
  for (let k = 1; k < end; k++) if (!isNameChar(text.charCodeAt(k))) return false;
  return true;
}

function isDigits(text: string): boolean {
  if (text.length === 0) return false;
  for (let k = 0; k < text.length; k++) {
    const code = text.charCodeAt(k);
    if (code < 48 || code > 57) return false;
  }
  return true;
}

function newCommand(stdinFed: boolean): SimpleCommand {
  return { words: [], stdinFed, stdinText: null, pipedFrom: null };
}

const DYNAMIC_EMPTY = { text: '', dynamic: true } as const;

class Parser {
  private pos = 0;
  private readonly heredocs: PendingHeredoc[] = [];

  constructor(
    private readonly src: string,
    private depth: number,
    private readonly out: SimpleCommand[],
  ) {}

  parseScript(): void {
    this.parseList(false);
  }

  /** Reads commands to the end of the text, or (inSubstitution) to the `)` closing a `$(`, consuming it. */
  private parseList(inSubstitution: boolean): void {
    const src = this.src;
    const len = src.length;
    let parens = 0;
    let cmd = newCommand(false);
    const finish = (piped: boolean) => {
      const ended = cmd;
      if (ended.words.length > 0) this.out.push(ended);
      cmd = newCommand(piped);
      if (piped && ended.words.length > 0) cmd.pipedFrom = ended;
    };
    for (;;) {
      if (this.pos >= len) {
        if (inSubstitution || parens !== 0) throw UNPARSEABLE;
        finish(false);
        return;
      }
      const c = src.charCodeAt(this.pos);
      const next = src.charCodeAt(this.pos + 1);
      switch (c) {
        case SPACE:
        case TAB:
          this.pos++;
          continue;
        case BACKSLASH:
          if (next === NL) {
            this.pos += 2;
            continue;
          }
          break;
        case NL:
          // `a |⏎ b` continues the pipeline: a command not yet begun keeps the pipe it reads
          if (cmd.words.length > 0 || !cmd.stdinFed) finish(false);
          this.pos++;
          this.readHeredocBodies();
          continue;
        case HASH: {
          const nl = src.indexOf('\n', this.pos);
          this.pos = nl < 0 ? len : nl;
          continue;
        }
        case SEMI:
          if (next === SEMI || next === AMP) throw UNPARSEABLE; // `;;`, `;&`: a case statement's
          finish(false);
          this.pos++;
          continue;
        case AMP:
          if (next === GT) {
            this.redirect(cmd, -1);
            continue;
          }
          finish(false);
          this.pos += next === AMP ? 2 : 1;
          continue;
        case PIPE:
          if (next === PIPE) {
            finish(false);
            this.pos += 2;
          } else {
            finish(true);
            this.pos += next === AMP ? 2 : 1;
          }
          continue;
        case LPAREN:
          if (cmd.words.length === 0) {
            parens++;
            this.pos++;
            continue;
          }
          if (isFunctionHeader(cmd.words)) {
            this.pos++;
            while (src.charCodeAt(this.pos) === SPACE || src.charCodeAt(this.pos) === TAB) this.pos++;
            if (src.charCodeAt(this.pos) !== RPAREN) throw UNPARSEABLE;
            this.pos++;
            cmd = newCommand(false); // the body that follows is read as commands (counted as run)
            continue;
          }
          throw UNPARSEABLE;
        case RPAREN:
          finish(false);
          this.pos++;
          if (parens > 0) {
            parens--;
            continue;
          }
          if (inSubstitution) return;
          throw UNPARSEABLE;
        case LT:
        case GT:
          if (next === LPAREN) break; // a process substitution: a word
          this.redirect(cmd, -1);
          continue;
      }
      const word = this.lexWord();
      const after = src.charCodeAt(this.pos);
      if ((after === LT || after === GT) && word.plain && isDigits(word.text)) {
        if (src.charCodeAt(this.pos + 1) !== LPAREN) {
          this.redirect(cmd, Number(word.text));
          continue;
        }
      }
      if (word.plain && word.text === 'case' && cmd.words.every((w) => w.plain && RESERVED.has(w.text))) {
        throw UNPARSEABLE;
      }
      cmd.words.push(word);
    }
  }

  /** A redirection at pos (after an optional file descriptor `fd`); its target word is not an argument. */
  private redirect(cmd: SimpleCommand, fd: number): void {
    const src = this.src;
    const p = this.pos;
    let op: string;
    if (src.charCodeAt(p) === AMP) op = src.startsWith('&>>', p) ? '&>>' : '&>';
    else if (src.charCodeAt(p) === LT) {
      if (src.startsWith('<<<', p)) op = '<<<';
      else if (src.startsWith('<<-', p)) op = '<<-';
      else if (src.startsWith('<<', p)) op = '<<';
      else if (src.startsWith('<>', p) || src.startsWith('<&', p)) op = src.slice(p, p + 2);
      else op = '<';
    } else if (src.startsWith('>>', p) || src.startsWith('>|', p) || src.startsWith('>&', p)) op = src.slice(p, p + 2);
    else op = '>';
    this.pos = p + op.length;
    while (src.charCodeAt(this.pos) === SPACE || src.charCodeAt(this.pos) === TAB) this.pos++;
    if (this.pos >= src.length) throw UNPARSEABLE;
    const c = src.charCodeAt(this.pos);
    if (charClass(c) === 2 && !((c === LT || c === GT) && src.charCodeAt(this.pos + 1) === LPAREN)) throw UNPARSEABLE;
    const target = this.lexWord();
    const readsStdin = op.charCodeAt(0) === LT && (fd === -1 || fd === 0);
    if (readsStdin) {
      cmd.stdinFed = true;
      cmd.pipedFrom = null;
      cmd.stdinText = op === '<<<' && !target.dynamic ? target.text + '\n' : null;
    }
    if (op === '<<' || op === '<<-') {
      this.heredocs.push({ delimiter: target.text, stripTabs: op === '<<-', command: readsStdin ? cmd : null });
    }
  }

  /** After a newline: the bodies of the heredocs opened on the line just ended are data, skipped (and kept). */
  private readHeredocBodies(): void {
    if (this.heredocs.length === 0) return;
    const src = this.src;
    const len = src.length;
    for (const heredoc of this.heredocs) {
      const bodyStart = this.pos;
      let bodyEnd = len;
      let after = len;
      let lineStart = this.pos;
      while (lineStart < len) {
        const nl = src.indexOf('\n', lineStart);
        const lineEnd = nl < 0 ? len : nl;
        let s = lineStart;
        if (heredoc.stripTabs) while (s < lineEnd && src.charCodeAt(s) === TAB) s++;
        if (lineEnd - s === heredoc.delimiter.length && src.startsWith(heredoc.delimiter, s)) {
          bodyEnd = lineStart;
          after = nl < 0 ? len : nl + 1;
          break;
        }
        lineStart = nl < 0 ? len : nl + 1;
      }
      if (heredoc.command !== null) heredoc.command.stdinText = src.slice(bodyStart, bodyEnd);
      this.pos = after;
    }
    this.heredocs.length = 0;
  }

  /** One word at pos (pos is not at a blank or a metacharacter, except `<(`/`>(`). */
  private lexWord(): Word {
    const src = this.src;
    const len = src.length;
    const first = src.charCodeAt(this.pos);
    if ((first === LT || first === GT) && src.charCodeAt(this.pos + 1) === LPAREN) {
      this.pos += 2;
      this.substitution();
      return { text: '', dynamic: true, plain: false, assign: false };
    }
    let text = '';
    let dynamic = false;
    let plain = true;
    let sawEquals = false;
    let assignable = true;
    let assign = false;
    while (this.pos < len) {
      const c = src.charCodeAt(this.pos);
      const cls = charClass(c);
      if (cls === 2) break;
      if (cls === 1) {
        const start = this.pos;
        do this.pos++;
        while (this.pos < len && charClass(src.charCodeAt(this.pos)) === 1);
        const run = src.slice(start, this.pos);
        if (!sawEquals) {
          const eq = run.indexOf('=');
          if (eq >= 0) {
            sawEquals = true;
            assign = assignable && isAssignmentName(text + run.slice(0, eq));
          }
        }
        text += run;
        continue;
      }
      plain = false;
      if (!sawEquals) assignable = false;
      if (c === BACKSLASH) {
        if (this.pos + 1 >= len) {
          text += '\\';
          this.pos++;
        } else {
          if (src.charCodeAt(this.pos + 1) !== NL) text += src[this.pos + 1];
          this.pos += 2;
        }
      } else if (c === SQUOTE) {
        const end = src.indexOf("'", this.pos + 1);
        if (end < 0) throw UNPARSEABLE;
        text += src.slice(this.pos + 1, end);
        this.pos = end + 1;
      } else if (c === DQUOTE) {
        const part = this.lexDoubleQuoted();
        text += part.text;
        dynamic ||= part.dynamic;
      } else if (c === DOLLAR) {
        const part = this.lexDollar(false);
        text += part.text;
        dynamic ||= part.dynamic;
      } else {
        this.backtick();
        dynamic = true;
      }
    }
    return { text, dynamic, plain, assign };
  }

  /** "…" at pos. */
  private lexDoubleQuoted(): { text: string; dynamic: boolean } {
    const src = this.src;
    const len = src.length;
    this.pos++;
    let text = '';
    let dynamic = false;
    for (;;) {
      if (this.pos >= len) throw UNPARSEABLE;
      const c = src.charCodeAt(this.pos);
      if (c === DQUOTE) {
        this.pos++;
        return { text, dynamic };
      }
      if (c === BACKSLASH) {
        const n = src.charCodeAt(this.pos + 1);
        if (n === DOLLAR || n === BACKTICK || n === DQUOTE || n === BACKSLASH) {
          text += src[this.pos + 1];
          this.pos += 2;
        } else if (n === NL) this.pos += 2;
        else {
          text += '\\';
          this.pos++;
        }
      } else if (c === DOLLAR) {
        const part = this.lexDollar(true);
        text += part.text;
        dynamic ||= part.dynamic;
      } else if (c === BACKTICK) {
        this.backtick();
        dynamic = true;
      } else {
        const start = this.pos;
        do this.pos++;
        while (this.pos < len && !isDoubleQuoteSpecial(src.charCodeAt(this.pos)));
        text += src.slice(start, this.pos);
      }
    }
  }

  /** `$…` at pos: an expansion (dynamic), `$'…'`/`$"…"` (quoted text) or a lone `$`. */
  private lexDollar(inDoubleQuotes: boolean): { text: string; dynamic: boolean } {
    const src = this.src;
    const n = src.charCodeAt(this.pos + 1);
    if (n === LPAREN) {
      if (src.charCodeAt(this.pos + 2) === LPAREN) this.arithmetic();
      else {
        this.pos += 2;
        this.substitution();
      }
      return DYNAMIC_EMPTY;
    }
    if (n === LBRACE) {
      if (++this.depth > MAX_DEPTH) throw UNPARSEABLE; // `${${${…` must not exhaust the stack
      this.pos += 2;
      this.parameterBraces();
      this.depth--;
      return DYNAMIC_EMPTY;
    }
    if (!inDoubleQuotes && n === SQUOTE) {
      this.pos += 2;
      return { text: this.ansiCQuoted(), dynamic: false };
    }
    if (!inDoubleQuotes && n === DQUOTE) {
      this.pos++;
      return this.lexDoubleQuoted();
    }
    if (isNameStart(n)) {
      this.pos += 2;
      while (isNameChar(src.charCodeAt(this.pos))) this.pos++;
      return DYNAMIC_EMPTY;
    }
    if (
      (n >= 48 && n <= 57) ||
      n === 64 ||
      n === 42 ||
      n === HASH ||
      n === 63 ||
      n === DOLLAR ||
      n === BANG ||
      n === 45
    ) {
      this.pos += 2; // $1 $@ $* $# $? $$ $! $-
      return DYNAMIC_EMPTY;
    }
    this.pos++;
    return { text: '$', dynamic: false };
  }

  /** After `$(` or `<(`: the commands inside run (before the command holding them), to the closing `)`. */
  private substitution(): void {
    if (++this.depth > MAX_DEPTH) throw UNPARSEABLE;
    this.parseList(true);
    this.depth--;
  }

  /** `$(( … ))` at pos: skipped to the matching parentheses. */
  private arithmetic(): void {
    const src = this.src;
    this.pos += 3;
    let open = 2;
    while (this.pos < src.length) {
      const c = src.charCodeAt(this.pos++);
      if (c === LPAREN) open++;
      else if (c === RPAREN && --open === 0) return;
    }
    throw UNPARSEABLE;
  }

  /** After `${`: skipped to the matching `}` (commands in nested substitutions still count). */
  private parameterBraces(): void {
    const src = this.src;
    let open = 1;
    while (this.pos < src.length) {
      const c = src.charCodeAt(this.pos);
      if (c === BACKSLASH) this.pos += 2;
      else if (c === SQUOTE) {
        const end = src.indexOf("'", this.pos + 1);
        if (end < 0) throw UNPARSEABLE;
        this.pos = end + 1;
      } else if (c === DQUOTE) this.lexDoubleQuoted();
      else if (c === DOLLAR) this.lexDollar(true);
      else if (c === BACKTICK) this.backtick();
      else {
        this.pos++;
        if (c === LBRACE) open++;
        else if (c === RBRACE && --open === 0) return;
      }
    }
    throw UNPARSEABLE;
  }

  /** After `$'`: ANSI-C quoted text, the common escapes decoded. */
  private ansiCQuoted(): string {
    const src = this.src;
    let text = '';
    while (this.pos < src.length) {
      const c = src[this.pos];
      if (c === "'") {
        this.pos++;
        return text;
      }
      if (c === '\\' && this.pos + 1 < src.length) {
        const n = src[this.pos + 1];
        text += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'r' ? '\r' : '\\\'"?'.includes(n) ? n : '\\' + n;
        this.pos += 2;
      } else {
        text += c;
        this.pos++;
      }
    }
    throw UNPARSEABLE;
  }

  /** `` `…` `` at pos: its text, unescaped, is a script of its own that runs. */
  private backtick(): void {
    const src = this.src;
    this.pos++;
    let inner = '';
    for (;;) {
      if (this.pos >= src.length) throw UNPARSEABLE;
      const c = src.charCodeAt(this.pos);
      if (c === BACKTICK) {
        this.pos++;
        break;
      }
      if (c === BACKSLASH) {
        const n = src.charCodeAt(this.pos + 1);
        if (n === BACKTICK || n === BACKSLASH || n === DOLLAR) {
          inner += src[this.pos + 1];
          this.pos += 2;
          continue;
        }
      }
      const start = this.pos;
      do this.pos++;
      while (this.pos < src.length && src.charCodeAt(this.pos) !== BACKTICK && src.charCodeAt(this.pos) !== BACKSLASH);
      inner += src.slice(start, this.pos);
    }
    if (this.depth + 1 > MAX_DEPTH) throw UNPARSEABLE;
    new Parser(inner, this.depth + 1, this.out).parseScript();
  }
}

function isDoubleQuoteSpecial(code: number): boolean {
  return code === DQUOTE || code === BACKSLASH || code === DOLLAR || code === BACKTICK;
}

/** `name` or `function name` before `()`. */
function isFunctionHeader(words: Word[]): boolean {
  if (words.length === 1) return words[0].plain;
  return words.length === 2 && words[0].plain && words[0].text === 'function' && words[1].plain;
}

// ---------------------------------------------------------------------------------------------------------------
// Classifying the simple commands.

interface Context {
  stdinFed: boolean;
  stdinText: string | null;
  depth: number;
  /** Run by xargs: operands the command line does not show are appended (so `xargs rm` has one). */
  implicitOperands: boolean;
  /** How many wrappers this command was found behind (bounded: `sudo sudo sudo …` must not exhaust the stack). */
  wrappers: number;
}

/** The context of the command a wrapper (`sudo`, `env`, `time`, …) runs: the same stdin, one wrapper deeper. */
function wrapped(ctx: Context): Context {
  return { ...ctx, wrappers: ctx.wrappers + 1 };
}

const NO_STDIN = { stdinFed: false, stdinText: null, implicitOperands: false } as const;

/** Reserved words that may stand before a command: skipped. */
const RESERVED = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until']);

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash']);

function classifyScript(text: string, depth: number): DestructiveCommand | null {
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
    if (first === null)
      first = { label: found.label, reachesIgnored: found.reachesIgnored, onlyOverChanges: found.onlyOverChanges };
    else {
      if (found.reachesIgnored) first.reachesIgnored = true;
      if (!found.onlyOverChanges) first.onlyOverChanges = false;
    }
    if (first.reachesIgnored && !first.onlyOverChanges) break;
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

function destructive(label: string, reachesIgnored: boolean, onlyOverChanges = false): DestructiveCommand {
  return { label, reachesIgnored, onlyOverChanges };
}

function baseName(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? path : path.slice(slash + 1);
}

/** words[i…] as one command; atStart: reserved words and assignments may come first. */
function classifyWords(words: Word[], i: number, ctx: Context, atStart: boolean): DestructiveCommand | null {
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

interface Args {
  /** In order: '-x' for each short option letter, the whole word for a long option ('--name' or '--name=value'). */
  options: string[];
  /** Words that are not options (a dynamic word always counts as one). */
  operands: Word[];
  /** How many of the operands came after `--`. */
  afterDashDash: number;
}

/** Long options (of any command read here) that take a value in the next word when written without '='. */
const LONG_WITH_VALUE = [
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
function readArgs(words: Word[], i: number, shortWithValue: string, longWithValue: readonly string[]): Args {
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

function hasOption(args: Args, ...names: string[]): boolean {
  for (const option of args.options) {
    for (const name of names)
      if (option === name || (option.startsWith(name + '=') && name.startsWith('--'))) return true;
  }
  return false;
}

function operandCount(args: Args, ctx: Context): number {
  return args.operands.length + (ctx.implicitOperands ? 1 : 0);
}

/**
 * Skips a wrapper's options. shortWithValue/longWithValue: the options that take a value; shortStop/longStop: those
 * after which no command runs (`sudo -l`, `command -v`). Returns the index of the wrapped command, or -1.
 */
function skipOptions(
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
function skipEnvAssignments(words: Word[], i: number): number {
  while (i < words.length && !words[i].dynamic) {
    const eq = words[i].text.indexOf('=');
    if (eq <= 0 || !isAssignmentName(words[i].text.slice(0, eq))) break;
    i++;
  }
  return i;
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

function classifyRm(words: Word[], i: number, ctx: Context): DestructiveCommand | null {
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
  return destructive(recursive ? 'rm -r' : 'rm', true);
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
        if (found !== null)
          return destructive('find -exec ' + found.label, found.reachesIgnored, found.onlyOverChanges);
      }
      j = end;
    }
  }
  return null;
}

function classifyMoveOrCopy(name: 'mv' | 'cp', words: Word[], i: number, ctx: Context): DestructiveCommand | null {
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

// ---------------------------------------------------------------------------------------------------------------
// git

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

function classifyGit(words: Word[], i: number, ctx: Context): DestructiveCommand | null {
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
      if (hasOption(args, '-x')) return destructive('git clean -x', true);
      if (hasOption(args, '-X')) return destructive('git clean -X', true);
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

function git(label: string): DestructiveCommand {
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
