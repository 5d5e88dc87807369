import type { RepoContext } from '../context';
import { readSymbolicHead } from '../git/healthProbe';
import { readHead } from '../git/history';
import type { StoreReader } from '../store/durableStore';

export interface HistoryCounts {
  /** Turns on the current branch that Undo can still take back. */
  undo: number;
  /** Undos Redo can still reverse (only while nothing new happened since). */
  redo: number;
}

export interface RedoEntry {
  op_id: string;
  position: number;
  branch: string;
  result_commit: string;
  redo_target: string;
  turn_id: string | null;
}

/** Turns of `branch` not yet undone that have a base snapshot to return to, newest first. */
export function undoableTurns(r: StoreReader, branch: string): { id: string; base_commit: string; recovery: string; terminal_outcome: string | null }[] {
  return r.all(
    `SELECT id, base_commit, recovery, terminal_outcome FROM turns
     WHERE branch = ? AND undone_by IS NULL AND base_commit IS NOT NULL
     ORDER BY created_at DESC, rowid DESC`, [branch]);
}

/** The redo stack of `branch`, top first; valid only while its top entry's result is still HEAD. */
export function redoStack(r: StoreReader, branch: string, head: string | null): RedoEntry[] {
  const entries = r.all<RedoEntry>('SELECT * FROM redo_entries WHERE branch = ? ORDER BY position DESC', [branch]);
  return entries.length > 0 && entries[0].result_commit === head ? entries : [];
}

/** Counts for the status bar's `undo:N redo:M`. */
export async function historyCounts(ctx: RepoContext): Promise<HistoryCounts> {
  const ref = readSymbolicHead(ctx.repo.gitDir);
  if (!ref) return { undo: 0, redo: 0 };
  const branch = ref.slice('refs/heads/'.length);
  const head = await readHead(ctx.repo).catch(() => null);
  return ctx.store.read((r) => ({ undo: undoableTurns(r, branch).length, redo: redoStack(r, branch, head).length }));
}
