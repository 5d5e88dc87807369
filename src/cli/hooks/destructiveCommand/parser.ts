// The tokenizer: a shell line → the simple commands it runs, in the order they start (lists, pipelines,
// redirections, heredocs, subshells, function bodies, command substitutions). Words are read by wordLexer.ts.

import {
  AMP,
  BACKSLASH,
  BACKTICK,
  charClass,
  DOLLAR,
  GT,
  HASH,
  isDigits,
  isFunctionHeader,
  LPAREN,
  LT,
  MAX_DEPTH,
  newCommand,
  NL,
  type PendingHeredoc,
  PIPE,
  RESERVED,
  RPAREN,
  SEMI,
  type SimpleCommand,
  SPACE,
  TAB,
  UNPARSEABLE,
} from './shellSyntax';
import { WordLexer } from './wordLexer';

export class Parser extends WordLexer {
  private readonly heredocs: PendingHeredoc[] = [];

  constructor(
    src: string,
    depth: number,
    private readonly out: SimpleCommand[],
  ) {
    super(src, depth);
  }

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

  /** After `$(` or `<(`: the commands inside run (before the command holding them), to the closing `)`. */
  protected substitution(): void {
    if (++this.depth > MAX_DEPTH) throw UNPARSEABLE;
    this.parseList(true);
    this.depth--;
  }

  /** `` `…` `` at pos: its text, unescaped, is a script of its own that runs. */
  protected backtick(): void {
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
