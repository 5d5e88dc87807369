import type { TerminalOutcome, TurnRecoveryState } from '../outcomes';
import type { RepoContext } from '../context';
import type { StoreReader, StoreTx } from '../store/durableStore';
import type { JournalStatement } from '../store/journal';

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
export type NoVersionReason =
  | 'no-changes'
  | 'not-completed'
  | 'pending'
  | 'recovery-required'
  | 'interrupted'
  | 'repository-missing'
  | 'restore-in-progress'
  | 'detached-head'
  | 'operation-in-progress'
  | 'unmerged-entries'
  | 'index-locked'
  | 'unborn-branch'
  | 'ref-moved'
  | 'ref-update-refused'
  | 'git-failed';

export function getTurn(r: StoreReader | StoreTx, id: string): TurnRow | undefined {
  return r.get<TurnRow>('SELECT * FROM turns WHERE id = ?', [id]);
}

export function getChat(r: StoreReader | StoreTx, id: string): ChatRow | undefined {
  return r.get<ChatRow>('SELECT * FROM chats WHERE id = ?', [id]);
}

export function openTurns(r: StoreReader | StoreTx): TurnRow[] {
  return r.all<TurnRow>("SELECT * FROM turns WHERE recovery <> 'terminal' ORDER BY created_at, rowid");
}

/** Completed turns whose version commit was never settled (a process died between the outcome and the commit). */
export function pendingTurns(r: StoreReader | StoreTx): TurnRow[] {
  return r.all<TurnRow>(
    "SELECT * FROM turns WHERE recovery = 'terminal' AND no_version_reason = 'pending' ORDER BY created_at, rowid",
  );
}

export function openTurnsOfChat(r: StoreReader | StoreTx, chatId: string): TurnRow[] {
  return r.all<TurnRow>("SELECT * FROM turns WHERE chat_id = ? AND recovery <> 'terminal' ORDER BY seq", [chatId]);
}

/** The chat's turn with the highest number, if any. */
export function latestTurnOfChat(r: StoreReader | StoreTx, chatId: string): TurnRow | undefined {
  return r.get<TurnRow>('SELECT * FROM turns WHERE chat_id = ? ORDER BY seq DESC LIMIT 1', [chatId]);
}

/** Whether an Undo, Redo or Restore (in any state) named the turn. */
export function operationsNaming(r: StoreReader | StoreTx, turnId: string): boolean {
  return r.get<{ x: number }>('SELECT 1 AS x FROM operations WHERE turn_id = ? LIMIT 1', [turnId]) !== undefined;
}

/** The chat's highest turn number (0 before its first turn). */
export function maxTurnSeq(r: StoreReader | StoreTx, chatId: string): number {
  return r.get<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM turns WHERE chat_id = ?', [chatId])?.seq ?? 0;
}

export function countTurns(r: StoreReader | StoreTx): { total: number; open: number } {
  const row = r.get<{ total: number; open: number }>(
    "SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN recovery <> 'terminal' THEN 1 ELSE 0 END), 0) AS open FROM turns",
  );
  return { total: row?.total ?? 0, open: row?.open ?? 0 };
}

// The ledger's writes as statements: turnLedger.ts runs them in its transactions, and the CLI's hook fast path
// (src/cli/hooks/fastHook.ts) appends the very same statements as one journal record, so the two cannot drift.

/** A new chat, on the branch its first turn begins on. */
export function insertChatStatement(c: {
  id: string;
  title: string | null;
  agent: string | null;
  branch: string;
  baseBranch: string;
  remote: string | null;
  now: number;
}): JournalStatement {
  return {
    sql:
      'INSERT INTO chats (id, title, agent, branch, base_branch, remote, created_at, updated_at) VALUES (?, ?, ' +
      '?, ?, ?, ?, ?, ?)',
    params: [c.id, c.title, c.agent, c.branch, c.baseBranch, c.remote, c.now, c.now],
  };
}

/** A known chat's new turn: a title or agent given now replaces the stored one. */
export function touchChatStatement(
  id: string,
  title: string | null,
  agent: string | null,
  now: number,
): JournalStatement {
  return {
    sql: 'UPDATE chats SET title = COALESCE(?, title), agent = COALESCE(?, agent), updated_at = ? WHERE id = ?',
    params: [title, agent, now, id],
  };
}

/** A turn as beginTurn first records it ('accepted': its base is not captured yet). */
export function insertTurnStatement(t: {
  id: string;
  chatId: string;
  seq: number;
  prompt: string;
  agent: string | null;
  branch: string;
  head: string | null;
  now: number;
}): JournalStatement {
  return {
    sql: `INSERT INTO turns (id, chat_id, seq, prompt, agent, recovery, branch, base_head, created_at)
              VALUES (?, ?, ?, ?, ?, 'accepted', ?, ?, ?)`,
    params: [t.id, t.chatId, t.seq, t.prompt, t.agent, t.branch, t.head, t.now],
  };
}

/** The turn's base is captured: it is running. */
export function turnRunningStatement(
  id: string,
  baseHead: string | null,
  baseCommit: string | null,
  baseTree: string | null,
): JournalStatement {
  return {
    sql: "UPDATE turns SET recovery = 'running', base_head = ?, base_commit = ?, base_tree = ? WHERE id = ?",
    params: [baseHead, baseCommit, baseTree, id],
  };
}

export function turnTerminalStatement(
  id: string,
  outcome: TerminalOutcome,
  noVersionReason: NoVersionReason | null,
  endedAt: number,
): JournalStatement {
  return {
    sql:
      "UPDATE turns SET recovery = 'terminal', terminal_outcome = ?, no_version_reason = ?, ended_at = ? WHERE " +
      'id = ?',
    params: [outcome, noVersionReason, endedAt, id],
  };
}

/** A cancelled turn re-ended with another outcome (turnDecisions.ts reEnds decides when); nothing else changes. */
export function turnReEndedStatement(id: string, outcome: TerminalOutcome): JournalStatement {
  return {
    sql:
      "UPDATE turns SET terminal_outcome = ? WHERE id = ? AND recovery = 'terminal' AND terminal_outcome = " +
      "'cancelled'",
    params: [outcome, id],
  };
}

export function turnVersionStatement(
  id: string,
  versionCommit: string | null,
  noVersionReason: NoVersionReason | null,
): JournalStatement {
  return {
    sql: 'UPDATE turns SET version_commit = ?, no_version_reason = ? WHERE id = ?',
    params: [versionCommit, noVersionReason, id],
  };
}

export function runStatement(tx: StoreTx, statement: JournalStatement): void {
  tx.run(statement.sql, statement.params);
}

/** Persists the terminal outcome and `recovery = terminal` in one durable write (docs/product-contract.md §4.2). */
export function markTurnTerminal(
  tx: StoreTx,
  id: string,
  outcome: TerminalOutcome,
  noVersionReason: NoVersionReason | null,
  endedAt: number,
): void {
  runStatement(tx, turnTerminalStatement(id, outcome, noVersionReason, endedAt));
}

export function setTurnVersion(
  tx: StoreTx,
  id: string,
  versionCommit: string | null,
  noVersionReason: NoVersionReason | null,
): void {
  runStatement(tx, turnVersionStatement(id, versionCommit, noVersionReason));
}

const NESTED_NAMED_KEY = 'nested_repositories_named';

/**
 * The sentence naming nested repositories (folders with their own `.git`) not named before in this repository,
 * or null. Each folder is named once: the list of named folders is kept in the store's meta table.
 */
export async function nestedNotice(ctx: RepoContext, folders: readonly string[]): Promise<string | null> {
  if (folders.length === 0) return null;
  const fresh = await ctx.store.transaction((tx) => {
    const row = tx.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [NESTED_NAMED_KEY]);
    const named = new Set<string>(row ? (JSON.parse(row.value) as string[]) : []);
    const unseen = folders.filter((f) => !named.has(f));
    if (unseen.length > 0) {
      for (const f of unseen) named.add(f);
      tx.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', [
        NESTED_NAMED_KEY,
        JSON.stringify([...named]),
      ]);
    }
    return unseen;
  });
  if (fresh.length === 0) return null;
  const list = fresh.join(', ');
  return fresh.length === 1
    ? `${list} is its own git repository; Version History does not version it.`
    : `${list} are their own git repositories; Version History does not version them.`;
}
