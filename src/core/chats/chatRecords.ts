import type { StoreReader, StoreTx } from '../store/durableStore';
import type { ChatEventStatus } from '../store/schema';

/** One continuation of a chat on a new branch after its branch was lost (table `chat_events`, migration 3). */
export interface ChatEventRow {
  id: string;
  chat_id: string;
  kind: 'continued-on-new-branch';
  status: ChatEventStatus;
  old_branch: string;
  new_branch: string;
  base_branch: string;
  base_commit: string;
  created_at: number;
  updated_at: number;
}

/** The chats' branch columns (the rest of a chat row belongs to the turn ledger). */
export interface ChatBranchRow {
  id: string;
  title: string | null;
  branch: string | null;
  base_branch: string | null;
  remote: string | null;
  resume_identity: string | null;
}

export function getChatBranch(r: StoreReader | StoreTx, chatId: string): ChatBranchRow | undefined {
  return r.get<ChatBranchRow>(
    'SELECT id, title, branch, base_branch, remote, resume_identity FROM chats WHERE id = ?',
    [chatId],
  );
}

/** Chats that work on a branch other than `current` (those whose branch may have gone). */
export function chatsOffBranch(r: StoreReader | StoreTx, current: string | null): ChatBranchRow[] {
  return r.all<ChatBranchRow>(
    'SELECT id, title, branch, base_branch, remote, resume_identity FROM chats WHERE branch IS NOT NULL AND ' +
      'branch IS NOT ? ORDER BY updated_at DESC',
    [current],
  );
}

/** The continuation of `chatId` away from `oldBranch`, pending or done (at most one: a unique index). */
export function continuationFrom(
  r: StoreReader | StoreTx,
  chatId: string,
  oldBranch: string,
): ChatEventRow | undefined {
  return r.get<ChatEventRow>(
    "SELECT * FROM chat_events WHERE chat_id = ? AND kind = 'continued-on-new-branch' AND old_branch = ?",
    [chatId, oldBranch],
  );
}

/** The done continuation that brought `chatId` onto `newBranch`, if any. */
export function continuationOnto(
  r: StoreReader | StoreTx,
  chatId: string,
  newBranch: string,
): ChatEventRow | undefined {
  return r.get<ChatEventRow>(
    "SELECT * FROM chat_events WHERE chat_id = ? AND kind = 'continued-on-new-branch' AND status = 'done' AND " +
      'new_branch = ?',
    [chatId, newBranch],
  );
}

/** The chat's warning entries (done continuations), oldest first. */
export function continuationsOf(r: StoreReader | StoreTx, chatId: string): ChatEventRow[] {
  return r.all<ChatEventRow>("SELECT * FROM chat_events WHERE chat_id = ? AND status = 'done' ORDER BY updated_at", [
    chatId,
  ]);
}

export function pendingContinuations(r: StoreReader | StoreTx): ChatEventRow[] {
  return r.all<ChatEventRow>("SELECT * FROM chat_events WHERE status = 'pending' ORDER BY created_at");
}

/** The warning entries (done continuations) shown on `branch`, newest first; every one when `branch` is null. */
export function warningsOn(
  r: StoreReader | StoreTx,
  branch: string | null,
): (ChatEventRow & { chat_title: string | null })[] {
  return r.all<ChatEventRow & { chat_title: string | null }>(
    `SELECT e.*, c.title AS chat_title FROM chat_events e LEFT JOIN chats c ON c.id = e.chat_id
     WHERE e.status = 'done' AND (? IS NULL OR e.new_branch = ?) ORDER BY e.updated_at DESC LIMIT 50`,
    [branch, branch],
  );
}

export function insertPendingContinuation(tx: StoreTx, row: ChatEventRow): void {
  tx.run(
    `INSERT INTO chat_events (id, chat_id, kind, status, old_branch, new_branch, base_branch, base_commit, ` +
      `created_at, updated_at)
          VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?)`,
    [
      row.id,
      row.chat_id,
      row.kind,
      row.old_branch,
      row.new_branch,
      row.base_branch,
      row.base_commit,
      row.created_at,
      row.updated_at,
    ],
  );
}

export function deleteContinuation(tx: StoreTx, id: string): void {
  tx.run("DELETE FROM chat_events WHERE id = ? AND status = 'pending'", [id]);
}

/**
 * The saga's last step, one durable write: the chat points at the new branch (its resume identity is left as it
 * is) and the continuation becomes the warning entry. Idempotent.
 */
export function completeContinuation(tx: StoreTx, event: ChatEventRow, now: number): void {
  tx.run('UPDATE chats SET branch = ?, updated_at = ? WHERE id = ? AND branch = ?', [
    event.new_branch,
    now,
    event.chat_id,
    event.old_branch,
  ]);
  tx.run("UPDATE chat_events SET status = 'done', updated_at = ? WHERE id = ? AND status = 'pending'", [now, event.id]);
}
