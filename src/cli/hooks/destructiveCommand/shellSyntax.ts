// The shell syntax the tokenizer reads (parser.ts, wordLexer.ts): a word, a simple command, the character
// classes, and the small tests on names and reserved words the command-line walker (commandLine.ts) shares.

export interface Word {
  /** The text after quote removal; an expansion ($x, $(…), `…`, ${…}) contributes nothing to it. */
  text: string;
  /** Holds an expansion the shell fills in when it runs: its text is not what the command receives. */
  dynamic: boolean;
  /** Unquoted, unescaped, without expansions: may be a reserved word (`then`, `{`, `!`). */
  plain: boolean;
  /** An assignment `NAME=value` with an unquoted name (skipped before a command's name). */
  assign: boolean;
}

export interface SimpleCommand {
  words: Word[];
  /** Its stdin is a pipe, a file, a heredoc or a here-string: a prompt it shows may be answered. */
  stdinFed: boolean;
  /** The heredoc body or here-string it reads, when known (a shell reading it runs it). */
  stdinText: string | null;
  /** The command before it in a pipeline, whose output is its stdin (null once a redirection replaces that). */
  pipedFrom: SimpleCommand | null;
}

export interface PendingHeredoc {
  delimiter: string;
  stripTabs: boolean;
  /** The command whose stdin it is (null for another file descriptor). */
  command: SimpleCommand | null;
}

/** How deep `sh -c`, `eval`, `$( … )` and backticks may nest before a line counts as unparseable. */
export const MAX_DEPTH = 8;

/** Thrown (one object, no stack captured per throw) when the line cannot be read: the answer is then null. */
export const UNPARSEABLE = new Error('unparseable shell command');

export const TAB = 9;
export const NL = 10;
export const SPACE = 32;
export const BANG = 33;
export const DQUOTE = 34;
export const HASH = 35;
export const DOLLAR = 36;
export const AMP = 38;
export const SQUOTE = 39;
export const LPAREN = 40;
export const RPAREN = 41;
export const SEMI = 59;
export const LT = 60;
export const GT = 62;
export const BACKSLASH = 92;
export const BACKTICK = 96;
export const LBRACE = 123;
export const PIPE = 124;
export const RBRACE = 125;

/** Character classes below 128: 1 ordinary word character, 2 a metacharacter ending a word, 3 a quote/expansion. */
const CHAR_CLASS = new Uint8Array(128).fill(1);
for (const code of [TAB, NL, SPACE, PIPE, AMP, SEMI, LPAREN, RPAREN, LT, GT]) CHAR_CLASS[code] = 2;
for (const code of [BACKSLASH, SQUOTE, DQUOTE, DOLLAR, BACKTICK]) CHAR_CLASS[code] = 3;

export function charClass(code: number): number {
  return code < 128 ? CHAR_CLASS[code] : 1;
}

export function isNameStart(code: number): boolean {
  return code === 95 || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

export function isNameChar(code: number): boolean {
  return isNameStart(code) || (code >= 48 && code <= 57);
}

/** `NAME` or `NAME+` (the part before `=` of an assignment). */
export function isAssignmentName(text: string): boolean {
  const end = text.endsWith('+') ? text.length - 1 : text.length;
  if (end === 0 || !isNameStart(text.charCodeAt(0))) return false;
  for (let k = 1; k < end; k++) if (!isNameChar(text.charCodeAt(k))) return false;
  return true;
}

export function isDigits(text: string): boolean {
  if (text.length === 0) return false;
  for (let k = 0; k < text.length; k++) {
    const code = text.charCodeAt(k);
    if (code < 48 || code > 57) return false;
  }
  return true;
}

export function newCommand(stdinFed: boolean): SimpleCommand {
  return { words: [], stdinFed, stdinText: null, pipedFrom: null };
}

export const DYNAMIC_EMPTY = { text: '', dynamic: true } as const;

export function isDoubleQuoteSpecial(code: number): boolean {
  return code === DQUOTE || code === BACKSLASH || code === DOLLAR || code === BACKTICK;
}

/** `name` or `function name` before `()`. */
export function isFunctionHeader(words: Word[]): boolean {
  if (words.length === 1) return words[0].plain;
  return words.length === 2 && words[0].plain && words[0].text === 'function' && words[1].plain;
}

/** Reserved words that may stand before a command: skipped. */
export const RESERVED = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until']);
