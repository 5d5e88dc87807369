/**
 * The files a running turn's agent reports writing (docs/design/two-chats.md): every file-tool event (PostToolUse,
 * AfterTool) appends one line to its chat's file under the repository's state folder, on the hook fast path
 * (fs only: no sql.js, no git); the turn's end folds the lines of its time window into one record of the turn.
 * A shell tool reports no paths: its line says so, and the turn counts as having unreported shell edits. The
 * store has no table for this (its next migrations belong to other work): the files are the record.
 */
import { sha256Hex } from '../sha256';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What one tool event reported: the files it wrote (absolute), or that it ran a shell command (no paths). */
export interface ToolWrites {
  paths: string[];
  shell: boolean;
}

/** What a turn wrote, as its agent reported it: repository-relative paths (`/` between folders). */
export interface TurnWrites {
  paths: string[];
  /** The turn ran shell commands: it may have changed files it did not name. */
  shell: boolean;
}

/** Files another chat's running turn may have changed in a version: they were kept (the tree's content) and named. */
export interface TurnOverlap {
  /** Chats whose running turn ran shell commands while this turn ran, with the turn's id. */
  chats: { chatId: string; turnId: string; agent: string | null }[];
  /** Paths the version changed that no turn reported writing. */
  paths: string[];
}

/** The folded record of one turn (written at its end). */
export interface TurnWritesRecord extends TurnWrites {
  chatId: string;
  overlap?: TurnOverlap;
}

const FOLDER = 'tool-writes';
const TURNS = 'turns';
/** A line longer than this is not one we wrote (a torn or foreign line): skipped. */
const MAX_LINE = 1 << 20;

const chatFile = (stateDir: string, chatId: string): string =>
  path.join(stateDir, FOLDER, `${sha256Hex(chatId).slice(0, 24)}.jsonl`);
const turnFile = (stateDir: string, turnId: string): string =>
  path.join(stateDir, FOLDER, TURNS, `${turnId.replace(/[^0-9A-Za-z-]/g, '_')}.json`);

/**
 * The repository-relative form of a path an agent reported, or null when it is outside the working tree (or is the
 * tree itself, or inside `.git`). Tries the path as given and with its folder's symlinks resolved.
 */
export function relativeToRoot(root: string, reported: string): string | null {
  const candidates = [path.resolve(reported)];
  try {
    candidates.push(path.join(fs.realpathSync(path.dirname(candidates[0])), path.basename(candidates[0])));
  } catch {
    // the folder is gone (a deleted file's folder): the path as given
  }
  const roots = [root];
  try {
    roots.push(fs.realpathSync(root));
  } catch {
    // the root stays as given
  }
  for (const candidate of candidates) {
    for (const r of roots) {
      const rel = path.relative(r, candidate);
      if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) continue;
      const posix = rel.split(path.sep).join('/');
      if (posix === '.git' || posix.startsWith('.git/')) return null;
      return posix;
    }
  }
  return null;
}

/**
 * Appends one tool event's report to its chat's file (one `write`, O_APPEND: concurrent appends do not interleave
 * at these sizes). Nothing is written when the repository has no state folder yet (Version History records no turn
 * there) or when the event names no file of the working tree and ran no shell. Returns the paths recorded.
 */
export function recordToolWrites(
  stateDir: string,
  root: string,
  chatId: string,
  writes: ToolWrites,
  now = Date.now(),
): string[] | null {
  if (!fs.existsSync(stateDir)) return null;
  const paths = [...new Set(writes.paths.map((p) => relativeToRoot(root, p)).filter((p): p is string => p !== null))];
  if (paths.length === 0 && !writes.shell) return paths;
  const file = chatFile(stateDir, chatId);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const line = JSON.stringify({ t: now, ...(paths.length > 0 ? { p: paths } : {}), ...(writes.shell ? { s: 1 } : {}) });
  fs.appendFileSync(file, `${line}\n`);
  return paths;
}

/**
 * Whether a chat's agent reports its file tools at all: it has once reported a file write or a shell command (its
 * file stays, emptied, after each turn). A chat that never did — turns recorded through plain `turn begin` /
 * `turn end` or the extension API, or a hook agent that has not written yet — may have changed any file.
 */
export function chatReportsWrites(stateDir: string, chatId: string): boolean {
  return fs.existsSync(chatFile(stateDir, chatId));
}

/** The reports of a chat's tool events from `from` on (a running turn's: from its start). */
export function chatWritesSince(stateDir: string, chatId: string, from: number): TurnWrites {
  let text: string;
  try {
    text = fs.readFileSync(chatFile(stateDir, chatId), 'utf8');
  } catch {
    return { paths: [], shell: false };
  }
  const paths = new Set<string>();
  let shell = false;
  for (const line of text.split('\n')) {
    if (line.length === 0 || line.length > MAX_LINE) continue;
    let entry: { t?: unknown; p?: unknown; s?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue; // a torn last line of a crashed append
    }
    if (typeof entry.t !== 'number' || entry.t < from) continue;
    if (Array.isArray(entry.p)) for (const p of entry.p) if (typeof p === 'string') paths.add(p);
    if (entry.s === 1) shell = true;
  }
  return { paths: [...paths].sort(), shell };
}

/**
 * Folds a turn's reports (its chat's lines from its start) into the turn's own record, once it ended; the chat's
 * file is then emptied (the chat's next turn starts later). Returns the record. Best effort: a failure to write
 * leaves the lines where they are.
 */
export function foldTurnWrites(stateDir: string, chatId: string, turnId: string, startedAt: number): TurnWritesRecord {
  const writes = chatWritesSince(stateDir, chatId, startedAt);
  const record: TurnWritesRecord = { chatId, ...writes };
  if (writes.paths.length === 0 && !writes.shell) return record;
  try {
    writeTurnRecord(stateDir, turnId, record);
    fs.truncateSync(chatFile(stateDir, chatId));
  } catch {
    // kept in the chat's file: a later read of the turn finds nothing, as for a turn whose agent reported nothing
  }
  return record;
}

/** Adds what a turn's version may hold of other chats' shell edits to its record. */
export function recordOverlap(stateDir: string, turnId: string, record: TurnWritesRecord, overlap: TurnOverlap): void {
  writeTurnRecord(stateDir, turnId, { ...record, overlap });
}

/** A turn's folded record; null when its agent reported nothing (or it has not ended). */
export function readTurnWrites(stateDir: string, turnId: string): TurnWritesRecord | null {
  try {
    const value = JSON.parse(fs.readFileSync(turnFile(stateDir, turnId), 'utf8')) as TurnWritesRecord;
    return Array.isArray(value.paths) && typeof value.shell === 'boolean' ? value : null;
  } catch {
    return null;
  }
}

function writeTurnRecord(stateDir: string, turnId: string, record: TurnWritesRecord): void {
  const file = turnFile(stateDir, turnId);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(record));
  fs.renameSync(temp, file);
}
