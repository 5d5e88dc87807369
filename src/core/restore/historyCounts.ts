import type { RepoContext } from '../context';
import { readSymbolicHead } from '../git/healthProbe';
import { readHead } from '../git/history';
import { archivedCounts, archiveIdentities } from '../store/archive';
import type { StoreReader } from '../store/durableStore';
import { agentSubject } from '../domain/promptSummary';
import { changedSomething, type TurnEffectFields, UNDOABLE_SQL, workWithoutVersion } from '../domain/turnEffect';
import { getTurn, type TurnRow } from '../turns/turnRecords';
import type { PickedTurn } from '../chats/turnAnchors';

export interface HistoryCounts {
  /** The Undo actions Version History offers on the current branch (undoCount): never a turn that changed nothing. */
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

/** Whether Undo can take `turn` back on `branch` (the rule undoableTurns selects by). */
export function isUndoable(
  turn: TurnEffectFields & { branch: string | null; undone_by: string | null; base_commit: string | null },
  branch: string,
): boolean {
  return turn.branch === branch && turn.undone_by === null && turn.base_commit !== null && changedSomething(turn);
}

/**
 * Turns of `branch` not yet undone that have a base snapshot to return to and changed something, newest first:
 * plain Undo takes the first (docs/product-contract.md §5.1; a turn that changed nothing is never its target and never
 * hides the one before it). With a hot reader it lists the hot turns only (the newest ones: enough for the latest);
 * with a history reader, all of them.
 */
export function undoableTurns(
  r: StoreReader,
  branch: string,
): {
  id: string;
  base_commit: string;
  recovery: string;
  terminal_outcome: string | null;
  version_commit: string | null;
  chat_id: string;
  seq: number;
  created_at: number;
}[] {
  return r.all(
    `SELECT id, base_commit, recovery, terminal_outcome, version_commit, chat_id, seq, created_at FROM turns
     WHERE branch = ? AND ${UNDOABLE_SQL}
     ORDER BY created_at DESC, rowid DESC`,
    [branch],
  );
}

/**
 * The turns Version History lists above the versions (docs/product-contract.md §8): what Undo acts on before any
 * version.
 */
export interface TurnsAboveVersions {
  /** The branch's running turns, newest first: each is listed live and can be undone (Undo stops it first). */
  running: TurnRow[];
  /**
   * Ended turns without a version whose work is in the tree (stopped, errored, or a version that could not be made),
   * newer than every turn with a version, newest first: each can be undone (its work is saved as `[Interrupted]`).
   */
  stopped: TurnRow[];
  /**
   * Ended turns that changed nothing among them, newest first (at most QUIET_SHOWN), that ended after the branch's
   * last Undo, Redo or Restore: listed quietly, never counted.
   */
  quiet: TurnRow[];
}

/** How far back the turns above the versions are looked for (they end at the first turn with a version). */
const ABOVE_LOOKED_AT = 50;
const QUIET_SHOWN = 5;

/**
 * The turns listed above the versions: every running turn of `branch`, and the ended turns not undone that are newer
 * than its latest turn with a version. A stopped turn older than a version (its partial work went into that
 * version) is listed again once Undo took that version back. Reads the hot table only (it holds the newest turns).
 */
export function turnsAboveVersions(r: StoreReader, branch: string): TurnsAboveVersions {
  const running = r.all<TurnRow>(
    `SELECT * FROM turns WHERE branch = ? AND recovery <> 'terminal' AND undone_by IS NULL AND base_commit IS NOT NULL
     ORDER BY created_at DESC, rowid DESC`,
    [branch],
  );
  const ended = r.all<TurnRow>(
    `SELECT * FROM turns WHERE branch = ? AND recovery = 'terminal' AND undone_by IS NULL AND base_commit IS NOT NULL
     ORDER BY created_at DESC, rowid DESC LIMIT ?`,
    [branch, ABOVE_LOOKED_AT],
  );
  // A turn that changed nothing is worth a line only until the branch moves on: no Undo, Redo or Restore since.
  const lastRestore =
    r.get<{ at: number | null }>('SELECT MAX(started_at) AS at FROM operations WHERE source_branch = ?', [branch])
      ?.at ?? 0;
  const stopped: TurnRow[] = [];
  const quiet: TurnRow[] = [];
  for (const turn of ended) {
    if (turn.version_commit !== null) break;
    if (workWithoutVersion(turn)) stopped.push(turn);
    else if (quiet.length < QUIET_SHOWN && (turn.ended_at ?? turn.created_at) > lastRestore) quiet.push(turn);
  }
  return { running, stopped, quiet };
}

/**
 * What the status bar counts as undoable on `branch`: exactly what Version History lists with an Undo (the running
 * and stopped turns above the versions, and every turn whose version is in effect), archived turns included.
 */
export function undoCount(r: StoreReader, branch: string): number {
  const above = turnsAboveVersions(r, branch);
  const versioned =
    r.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM turns WHERE branch = ? AND ${UNDOABLE_SQL} AND version_commit IS NOT NULL`,
      [branch],
    )?.n ?? 0;
  const archived = archivedCounts(r);
  return (
    above.running.length +
    above.stopped.length +
    versioned +
    (archived.versioned?.[branch] ?? archived.undoable[branch] ?? 0)
  );
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
  // Archived turns are counted from the hot database's record of them: the status bar never loads the archive.
  return ctx.store.read((r) => ({ undo: undoCount(r, branch), redo: redoStack(r, branch, head).length }));
}

/**
 * Before Undo plans: when its turn (the given one, or the latest undoable of `branch`) may be archived, copies it
 * back to the hot table, so the plan finds it and the saga's writes reach it; with it, for a turn without a
 * recorded outcome, the next turn of its chat (the legacy rule of targetOutcome.ts reads it). A hot hit — the turn
 * is hot, or the latest hot undoable turn is newer than every archived one — costs one small read (none when the
 * caller already asked undoTargetIsHot: `knownHot`) and never loads the archive.
 */
export async function promoteUndoTarget(
  ctx: RepoContext,
  branch: string,
  turnId?: string,
  knownHot?: boolean,
): Promise<void> {
  if (knownHot ?? (await undoTargetIsHot(ctx, branch, turnId))) return;
  await ctx.store.promoteTurns((r) => {
    const target = turnId ? getTurn(r, turnId) : undoableTurns(r, branch)[0];
    if (!target) return [];
    const next =
      target.terminal_outcome === null && target.chat_id
        ? r.get<{ id: string }>('SELECT id FROM turns WHERE chat_id = ? AND seq = ?', [
            target.chat_id,
            Number(target.seq) + 1,
          ])
        : undefined;
    return next ? [target.id, next.id] : [target.id];
  });
}

/**
 * Whether Undo's turn (the given one, or the latest undoable of `branch`) is certainly in the hot table: one small
 * read, no archive load.
 */
export function undoTargetIsHot(ctx: RepoContext, branch: string, turnId?: string): Promise<boolean> {
  return ctx.store.read((r) => {
    if (turnId) return getTurn(r, turnId) !== undefined;
    const latest = undoableTurns(r, branch)[0];
    const archivedNewest = archivedCounts(r).newestUndoable?.[branch];
    return latest !== undefined && (archivedNewest === undefined || latest.created_at > archivedNewest);
  });
}

/** An undoable turn with what the chat picker shows: the chat's title and agent, and when the turn began. */
export type UndoableTurn = PickedTurn;

/** The latest undoable turn of each chat on the current branch, newest first. Read-only. */
export async function undoableTurnsWithChats(ctx: RepoContext): Promise<UndoableTurn[]> {
  const ref = readSymbolicHead(ctx.repo.gitDir);
  if (!ref) return [];
  const branch = ref.slice('refs/heads/'.length);
  const rows = await ctx.store.read(
    (r) =>
      r.all<{
        id: string;
        chat_id: string;
        title: string | null;
        agent: string | null;
        chat_agent: string | null;
        created_at: number;
        prompt: string;
      }>(
        `SELECT t.id, t.chat_id, c.title, t.agent, c.agent AS chat_agent, t.created_at, t.prompt ` +
          `FROM (SELECT rowid AS position, * FROM turns WHERE branch = ? AND ${UNDOABLE_SQL}) t ` +
          `JOIN chats c ON c.id = t.chat_id ORDER BY t.created_at DESC, t.position DESC`,
        [branch],
      ),
    { history: true },
  ); // a chat's latest undoable turn may be archived
  const seen = new Set<string>();
  const latest: UndoableTurn[] = [];
  for (const row of rows) {
    if (seen.has(row.chat_id)) continue;
    seen.add(row.chat_id);
    latest.push({
      turnId: row.id,
      chatId: row.chat_id,
      chatTitle: row.title,
      agent: row.agent ?? row.chat_agent,
      createdAt: row.created_at,
      summary: agentSubject(row.prompt).slice('[Agent] '.length),
    });
  }
  return latest;
}

/**
 * The turns of `ids` the store knows, in that order. Reads the history archive only when the hot table lacks some of
 * them and an archive exists (the later turns of an old turn being undone), so a recent turn's lookup never loads it.
 */
export async function turnsByIds(ctx: RepoContext, ids: readonly string[]): Promise<TurnRow[]> {
  const pick = (r: StoreReader) => ids.flatMap((id) => getTurn(r, id) ?? []);
  const hot = await ctx.store.read((r) => ({ rows: pick(r), archive: archiveIdentities(r).length > 0 }));
  if (hot.rows.length === ids.length || !hot.archive) return hot.rows;
  return ctx.store.read(pick, { history: true });
}

/** The turn whose `[Agent]` version is `oid`, if any. */
export function turnOfVersion(r: StoreReader, oid: string): string | null {
  return r.get<{ id: string }>('SELECT id FROM turns WHERE version_commit = ?', [oid])?.id ?? null;
}
