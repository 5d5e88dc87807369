/**
 * Undo that the agent hears about (issue 23, docs/design/agent-notes.md): the table `chat_notes` (migration 6). When
 * an Undo, Redo or Restore changes files, every chat recorded on that branch gets one note per operation, queued in
 * the transaction that completes the operation; the chat's next prompt hands the notes to its new turn in the
 * transaction that records the turn, the hook prints them through the agent's context channel, and a second write
 * drops them once printed. A hook that dies before it printed leaves them handed but present: the chat's next prompt
 * hands them again (never lost; twice at worst). Notes hold turn positions, times and paths — never a prompt or file
 * contents.
 */
import type { StoreReader, StoreTx } from '../store/durableStore';
import type { OperationKind, UndoScope } from '../store/schema';

/** The turn an operation undid, redid or restored to: its chat, its number in that chat and when it began. */
export interface NotedTurn {
  chatId: string;
  seq: number;
  at: number;
}

/** One operation as a chat's agent hears of it (stored as JSON in `chat_notes.note`). */
export interface ChatNote {
  kind: OperationKind;
  /** Undo (and the Undo a Redo brings back): what it took back. */
  scope: UndoScope;
  turn: NotedTurn | null;
  /** A Restore to a commit that is no turn's version: its short id. */
  target?: string;
  /** Repository-relative paths the operation changed, at most NOTE_PATHS_KEPT of them. */
  paths: string[];
  /** How many paths it changed in all. */
  pathCount: number;
  at: number;
}

/** Paths kept per note: the text names at most NOTE_PATHS_SHOWN (noteText.ts); one more tells "and N more". */
export const NOTE_PATHS_KEPT = 50;

/** What the saga knows when it completes an operation: the row's fields the note is made of. */
export interface CompletedOperation {
  id: string;
  kind: OperationKind;
  scope: UndoScope;
  turn_id: string | null;
  source_branch: string;
  target_commit: string;
}

interface TurnRef {
  chat_id: string;
  seq: number;
  created_at: number;
}

const turnRef = (r: StoreReader, id: string | null): NotedTurn | null => {
  if (!id) return null;
  const t = r.get<TurnRef>('SELECT chat_id, seq, created_at FROM turns WHERE id = ?', [id]);
  return t ? { chatId: t.chat_id, seq: t.seq, at: t.created_at } : null;
};

/**
 * The note of an operation about to complete, read in its completing transaction before the redo stack changes: an
 * Undo names its turn; a Redo the turn of the Undo it takes back (the top of the branch's redo stack); a Restore the
 * turn whose version is its target, if any.
 */
export function noteOfOperation(
  r: StoreReader,
  op: CompletedOperation,
  paths: readonly string[],
  now: number,
): ChatNote {
  const base = { paths: [...paths].sort().slice(0, NOTE_PATHS_KEPT), pathCount: paths.length, at: now };
  if (op.kind === 'undo') return { kind: 'undo', scope: op.scope, turn: turnRef(r, op.turn_id), ...base };
  if (op.kind === 'redo') {
    const undo = r.get<{ turn_id: string | null; scope: UndoScope | null }>(
      `SELECT o.turn_id, o.scope FROM redo_entries e LEFT JOIN operations o ON o.id = e.op_id
        WHERE e.branch = ? ORDER BY e.position DESC LIMIT 1`,
      [op.source_branch],
    );
    return { kind: 'redo', scope: undo?.scope ?? 'everything', turn: turnRef(r, undo?.turn_id ?? null), ...base };
  }
  const version = r.get<{ id: string }>(
    'SELECT id FROM turns WHERE version_commit = ? ORDER BY created_at DESC LIMIT 1',
    [op.target_commit],
  );
  const turn = turnRef(r, version?.id ?? null);
  return {
    kind: 'restore',
    scope: 'everything',
    turn,
    ...(turn ? {} : { target: op.target_commit.slice(0, 7) }),
    ...base,
  };
}

/**
 * Queues the operation's note for every chat with a turn on its branch (their agents saw these files before it).
 * Idempotent: a roll-forward that completes the operation again adds nothing. Nothing is queued when no file changed.
 */
export function queueChatNotes(tx: StoreTx, op: CompletedOperation, paths: readonly string[], now: number): number {
  if (paths.length === 0) return 0;
  const note = JSON.stringify(noteOfOperation(tx, op, paths, now));
  const chats = tx.all<{ chat_id: string }>('SELECT DISTINCT chat_id FROM turns WHERE branch = ?', [op.source_branch]);
  for (const { chat_id } of chats) {
    tx.run('INSERT OR IGNORE INTO chat_notes (chat_id, op_id, created_at, note, handed_to) VALUES (?, ?, ?, ?, NULL)', [
      chat_id,
      op.id,
      now,
      note,
    ]);
  }
  return chats.length;
}

/**
 * Hands the chat's notes to the turn that begins (in the transaction that records it): those never printed, and
 * those handed to an earlier turn whose hook did not get to print them. Oldest first.
 */
export function handChatNotes(tx: StoreTx, chatId: string, turnId: string): ChatNote[] {
  const rows = tx.all<{ note: string }>('SELECT note FROM chat_notes WHERE chat_id = ? ORDER BY created_at, op_id', [
    chatId,
  ]);
  if (rows.length === 0) return [];
  tx.run('UPDATE chat_notes SET handed_to = ? WHERE chat_id = ?', [turnId, chatId]);
  return rows.flatMap((row) => parseNote(row.note) ?? []);
}

/** Once the hook printed them: the notes handed to `turnId` are gone. */
export function dropHandedNotes(tx: StoreTx, turnId: string): void {
  tx.run('DELETE FROM chat_notes WHERE handed_to = ?', [turnId]);
}

/** How many notes wait for the chat's next prompt (the hook facts carry it: the fast path leaves those prompts). */
export function pendingNoteCount(r: StoreReader, chatId: string): number {
  return r.get<{ n: number }>('SELECT COUNT(*) AS n FROM chat_notes WHERE chat_id = ?', [chatId])?.n ?? 0;
}

const OPERATION_KINDS: readonly string[] = ['undo', 'redo', 'restore'];
const SCOPES: readonly string[] = ['everything', 'turn', 'file'];

/** A stored note, checked field by field; null for a row this version cannot read (it is then only dropped). */
export function parseNote(text: string): ChatNote | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const n = v as Record<string, unknown>;
  const turn = n.turn as Record<string, unknown> | null;
  const turnOk =
    turn === null ||
    (typeof turn === 'object' &&
      typeof turn.chatId === 'string' &&
      Number.isSafeInteger(turn.seq) &&
      Number.isSafeInteger(turn.at));
  const ok =
    OPERATION_KINDS.includes(n.kind as string) &&
    SCOPES.includes(n.scope as string) &&
    turnOk &&
    (n.target === undefined || typeof n.target === 'string') &&
    Array.isArray(n.paths) &&
    n.paths.every((p) => typeof p === 'string') &&
    Number.isSafeInteger(n.pathCount) &&
    Number.isSafeInteger(n.at);
  return ok ? (n as unknown as ChatNote) : null;
}
