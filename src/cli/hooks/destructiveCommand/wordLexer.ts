// The tokenizer's word reader: one shell word at a time (quoting, `$…` expansions, `${…}`, `$((…))`, `$'…'`),
// with the parts that run commands (`$( … )`, `<( … )`, backticks) left to the parser (parser.ts).

import {
  BACKSLASH,
  BACKTICK,
  BANG,
  charClass,
  DOLLAR,
  DQUOTE,
  DYNAMIC_EMPTY,
  GT,
  HASH,
  isAssignmentName,
  isDoubleQuoteSpecial,
  isNameChar,
  isNameStart,
  LBRACE,
  LPAREN,
  LT,
  MAX_DEPTH,
  NL,
  RBRACE,
  RPAREN,
  SQUOTE,
  UNPARSEABLE,
  type Word,
} from './shellSyntax';

export abstract class WordLexer {
  protected pos = 0;

  constructor(
    protected readonly src: string,
    protected depth: number,
  ) {}

  /** After `$(` or `<(`: the commands inside run (parser.ts). */
  protected abstract substitution(): void;

  /** `` `…` `` at pos: a script of its own that runs (parser.ts). */
  protected abstract backtick(): void;

  /** One word at pos (pos is not at a blank or a metacharacter, except `<(`/`>(`). */
  protected lexWord(): Word {
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
}
