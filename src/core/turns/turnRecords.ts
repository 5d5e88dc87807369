import type { TerminalOutcome, TurnRecoveryState } from '../outcomes';
import type { StoreReader, StoreTx } from '../store/durableStore';

export interface ChatRow {
  id: string;
  title: string | null;
  agent: string | null;
  branch: string | null;
  base_branch: string | null;
  resume_identity: string | null;
  created_at: number;
  updated_at: number;
}

export interface TurnRow {
  id: string;
  chat_id: string;
  seq: number;
  prompt: string;
  agent: string | null;
  recovery: TurnRecoveryState;
  terminal_outcome: TerminalOutcome | null;
  branch: string | null;
  base_head: string | null;
  base_commit: string | null;
  base_tree: string | null;
  version_commit: string | null;
  no_version_reason: string | null;
  undone_by: string | null;
  created_at: number;
  ended_at: number | null;
}

/** Why a turn has no version commit; 'pending' only between the outcome write and the commit. */
export type NoVersionReason = 'no-changes' | 'not-completed' | 'pending' | 'recovery-required' | 'interrupted' | 'detached-head' | 'operation-in-progress' | 'unmerged-entries' | 'index-locked' | 'unborn-branch' | 'ref-moved' | 'git-failed';

export function getTurn(r: StoreReader | StoreTx, id: string): TurnRow | undefined {
  return r.get<TurnRow>('SELECT * FROM turns WHERE id = ?', [id]);
}

export function getChat(r: StoreReader | StoreTx, id: string): ChatRow | undefined {
  return r.get<ChatRow>('SELECT * FROM chats WHERE id = ?', [id]);
}

export function openTurns(r: StoreReader | StoreTx): TurnRow[] {
  return r.all<TurnRow>("SELECT * FROM turns WHERE recovery <> 'terminal' ORDER BY created_at, rowid");
}

export function openTurnsOfChat(r: StoreReader | StoreTx, chatId: string): TurnRow[] {
  return r.all<TurnRow>("SELECT * FROM turns WHERE chat_id = ? AND recovery <> 'terminal' ORDER BY seq", [chatId]);
}

export function countTurns(r: StoreReader | StoreTx): { total: number; open: number } {
  const row = r.get<{ total: number; open: number }>(
    "SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN recovery <> 'terminal' THEN 1 ELSE 0 END), 0) AS open FROM turns",
  );
  return { total: row?.total ?? 0, open: row?.open ?? 0 };
}

/** Persists the terminal outcome and `recovery = terminal` in one durable write (SPEC §4.2). */
export function markTurnTerminal(tx: StoreTx, id: string, outcome: TerminalOutcome, noVersionReason: NoVersionReason | null, endedAt: number): void {
  tx.run("UPDATE turns SET recovery = 'terminal', terminal_outcome = ?, no_version_reason = ?, ended_at = ? WHERE id = ?", [outcome, noVersionReason, endedAt, id]);
}

export function setTurnVersion(tx: StoreTx, id: string, versionCommit: string | null, noVersionReason: NoVersionReason | null): void {
  tx.run('UPDATE turns SET version_commit = ?, no_version_reason = ? WHERE id = ?', [versionCommit, noVersionReason, id]);
}
