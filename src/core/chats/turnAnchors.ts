/**
 * Where a turn sits in its agent's own conversation (issue 32, docs/design/conversation-rollback.md): the table
 * `turn_anchors` (migration 8), one row per turn whose hook named it. Ids only, as the agent sent them: the agent's
 * session, the agent's id of this turn's prompt, and (Claude Code) the session file it named. "The conversation just
 * before this turn" is the point before that prompt, resolved through the agent's own mechanism when a fork is asked
 * for: nothing is read on the hook path. A turn without a row has an unknown anchor; nothing guesses one.
 */
import { AvhError } from '../errors';
import { agentSubject } from '../domain/promptSummary';
import type { JournalStatement } from '../store/journal';
import type { StoreReader, StoreTx } from '../store/readOnlyGuard';

export interface TurnAnchor {
  /** The agent's id of the conversation (Claude Code's session id, Codex's thread id, opencode's session id). */
  chatRef: string;
  /** The agent's id of this turn's prompt (Claude Code's prompt_id, Codex's turn_id, opencode's message id). */
  turnRef: string;
  /** The session file the agent named (Claude Code's transcript_path): absolute. */
  transcript?: string;
}

export interface StoredTurnAnchor extends TurnAnchor {
  turnId: string;
  agent: string;
}

const REF = /^[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,199}$/;

/** An agent's id as we keep it, or undefined for anything else (then the anchor is unknown, never guessed). */
export function anchorRef(value: unknown): string | undefined {
  return typeof value === 'string' && REF.test(value) ? value : undefined;
}

/** Validates an anchor given to beginTurn; messages name the field, never echo the value. */
export function validateTurnAnchor(value: unknown): TurnAnchor {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new AvhError('invalid-input', 'anchor must be an object { chatRef, turnRef, transcript? }.');
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o))
    if (!['chatRef', 'turnRef', 'transcript'].includes(key))
      throw new AvhError('invalid-input', `anchor does not accept the field "${key.slice(0, 40)}".`);
  const chatRef = anchorRef(o.chatRef);
  const turnRef = anchorRef(o.turnRef);
  if (chatRef === undefined || turnRef === undefined)
    throw new AvhError('invalid-input', 'anchor.chatRef and anchor.turnRef must be ids (1–200 characters).');
  const transcript = o.transcript;
  if (transcript !== undefined && !isAbsolutePath(transcript))
    throw new AvhError('invalid-input', 'anchor.transcript must be an absolute path.');
  return { chatRef, turnRef, ...(transcript !== undefined ? { transcript: transcript as string } : {}) };
}

/** An absolute path an agent named (no NUL, bounded), on any platform's form. */
export function isAbsolutePath(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length > 1 &&
    value.length <= 4096 &&
    !value.includes('\0') &&
    (value.startsWith('/') || /^[A-Za-z]:[\\/]/.test(value))
  );
}

/** The anchor row of a turn just recorded (in the transaction, or the fast path's record, that records the turn). */
export function insertTurnAnchorStatement(
  turnId: string,
  agent: string,
  anchor: TurnAnchor,
  now: number,
): JournalStatement {
  return {
    sql: `INSERT INTO turn_anchors (turn_id, agent, chat_ref, turn_ref, transcript, created_at)
              VALUES (?, ?, ?, ?, ?, ?)`,
    params: [turnId, agent, anchor.chatRef, anchor.turnRef, anchor.transcript ?? null, now],
  };
}

/** The turn's anchor, or null when its hook named none. */
export function turnAnchorOf(r: StoreReader | StoreTx, turnId: string): StoredTurnAnchor | null {
  const row = r.get<{ agent: string; chat_ref: string; turn_ref: string; transcript: string | null }>(
    'SELECT agent, chat_ref, turn_ref, transcript FROM turn_anchors WHERE turn_id = ?',
    [turnId],
  );
  if (!row) return null;
  return {
    turnId,
    agent: row.agent,
    chatRef: row.chat_ref,
    turnRef: row.turn_ref,
    ...(row.transcript !== null ? { transcript: row.transcript } : {}),
  };
}

/** A turn as the palette's picks show it: the chat's title and agent, when the turn began, its summary. */
export interface PickedTurn {
  turnId: string;
  chatId: string;
  chatTitle: string | null;
  agent: string | null;
  createdAt: number;
  /** First line of the prompt (the version's summary); stays local. */
  summary: string;
}

/** A recent turn for the palette's Continue Chat from Before This Turn (issue 32): ids, summary, anchor's agent. */
export interface ConversationTurn extends PickedTurn {
  undone: boolean;
  /** The agent whose hook recorded where the turn sits in its conversation, or null (unknown). */
  anchorAgent: string | null;
}

/** The newest `limit` turns of `branch` (hot store only: the palette lists recent turns), newest first. */
export function conversationTurnsOf(r: StoreReader | StoreTx, branch: string, limit: number): ConversationTurn[] {
  return r
    .all<{
      id: string;
      chat_id: string;
      title: string | null;
      agent: string | null;
      chat_agent: string | null;
      created_at: number;
      prompt: string;
      undone_by: string | null;
      anchor_agent: string | null;
    }>(
      `SELECT t.id, t.chat_id, c.title, t.agent, c.agent AS chat_agent, t.created_at, t.prompt, t.undone_by,
              a.agent AS anchor_agent
         FROM turns t JOIN chats c ON c.id = t.chat_id LEFT JOIN turn_anchors a ON a.turn_id = t.id
        WHERE t.branch = ? ORDER BY t.created_at DESC, t.rowid DESC LIMIT ?`,
      [branch, limit],
    )
    .map((row) => ({
      turnId: row.id,
      chatId: row.chat_id,
      chatTitle: row.title,
      agent: row.agent ?? row.chat_agent,
      createdAt: row.created_at,
      summary: agentSubject(row.prompt).slice('[Agent] '.length),
      undone: row.undone_by !== null,
      anchorAgent: row.anchor_agent,
    }));
}
