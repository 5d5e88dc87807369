/**
 * The history archive: old finished turns moved out of the hot database so the store a process opens stays small
 * whatever the history's size (docs/design.md "History archive").
 *
 * - The archive is a sql.js database file beside the snapshot (`state.archive.sqlite`, written temp + fsync +
 *   rename) holding a `turns` table with the hot table's columns (and rowids) and a `meta` table (lineage).
 * - The hot database names the archive it belongs to in `meta`: `archive` (length, crc32, rows) and, while a
 *   rotation is between writing the file and deleting the moved rows, `archive_pending`. A file matching neither
 *   is damaged or foreign: it is moved aside, never read, never deleted.
 * - Reads that can reach old turns attach the archive on demand (ATTACH of the file sql.js holds in its memory
 *   file system) and see `turns` as a TEMP VIEW over hot ∪ archive, the hot copy winning a row present in both.
 *   The view exists only for the duration of such a read, so writes and journal replay always reach the hot table.
 * - Counts the status bar and `status` need are kept in the hot `meta` (`archive_counts`), so they never load it.
 */
import type { Database, SqlJsStatic } from 'sql.js';
import { failpoint } from '../failpoints';
import { changedSomething, type TurnEffectFields, UNDOABLE_SQL } from '../domain/turnEffect';
import { writeFileAtomic } from './atomicWrite';
import { lineage, scalar } from './databaseMeta';
import { checksum, type SqlValue } from './journal';
import type { StoreReader, StoreTx } from './readOnlyGuard';
import { readOrNull, type StoreFileSystem } from './storeFiles';

export const ARCHIVE_FILE = 'state.archive.sqlite';
/** Terminal turns kept hot (newest first) by default; older ones are archived. */
export const DEFAULT_ARCHIVE_KEEP = 1_500;
/** A rotation runs only when at least this many turns can move, so it is rare (default: every ~1,000 turns). */
export const DEFAULT_ARCHIVE_MARGIN = 1_000;

const ARCHIVE_KEY = 'archive';
const PENDING_KEY = 'archive_pending';
const COUNTS_KEY = 'archive_counts';
const SCHEMA = 'archive';
const NEXT_SCHEMA = 'archive_next';

/** What the hot database says the archive file is. */
export interface ArchiveIdentity {
  length: number;
  crc: number;
  rows: number;
}

/** Archived rows not also hot, in total and undoable per branch (what the hot counts lack). */
export interface ArchiveCounts {
  rows: number;
  undoable: Record<string, number>;
  /** Per branch, the latest created_at of an archived undoable turn (an upper bound after promotions). */
  newestUndoable?: Record<string, number>;
  /**
   * Per branch, the archived undoable turns with a version (what the status bar counts of them: a turn without a
   * version is listed only while no version is newer). Absent in counts written before it existed.
   */
  versioned?: Record<string, number>;
}

/** The archive file does not match what the hot database names (or is missing): it is never read. */
export class ArchiveDamage extends Error {
  constructor(readonly what: string) {
    super(`history archive damaged: ${what}`);
  }
}

function metaJson<T>(r: Pick<StoreReader, 'get'>, key: string): T | null {
  const row = r.get<{ value: string }>('SELECT value FROM main.meta WHERE key = ?', [key]);
  if (!row) return null;
  try {
    return JSON.parse(row.value) as T;
  } catch {
    return null;
  }
}

const identityText = (id: ArchiveIdentity) => JSON.stringify({ length: id.length, crc: id.crc, rows: id.rows });

/** The archive identities the hot database accepts: the committed one and a pending rotation's. */
export function archiveIdentities(r: Pick<StoreReader, 'get'>): ArchiveIdentity[] {
  return [metaJson<ArchiveIdentity>(r, ARCHIVE_KEY), metaJson<ArchiveIdentity>(r, PENDING_KEY)].filter(
    (x): x is ArchiveIdentity => x !== null,
  );
}

/** Turns and undoable turns (per branch) that only the archive holds; zero when there is no archive. Never loads it. */
export function archivedCounts(r: Pick<StoreReader, 'get'>): ArchiveCounts {
  return metaJson<ArchiveCounts>(r, COUNTS_KEY) ?? { rows: 0, undoable: {} };
}

/** The rows of main.turns a rotation moves: finished turns past the newest `keep` nothing may still write. */
function movablePredicate(keep: number): string {
  const k = Math.max(0, Math.floor(keep));
  // One condition a line, as the statement reads in the journal.
  return [
    `recovery = 'terminal' AND COALESCE(no_version_reason, '') <> 'pending'`,
    `    AND rowid NOT IN (SELECT rowid FROM main.turns WHERE recovery = 'terminal' ` +
      `ORDER BY created_at DESC, rowid DESC LIMIT ${k})`,
    `    AND (chat_id, seq) NOT IN (SELECT chat_id, MAX(seq) FROM main.turns GROUP BY chat_id)`,
    `    AND id NOT IN (SELECT turn_id FROM main.operations WHERE turn_id IS NOT NULL ` +
      `AND status IN ('in-flight', 'recovery-required'))`,
    `    AND id NOT IN (SELECT turn_id FROM main.redo_entries WHERE turn_id IS NOT NULL)`,
  ].join('\n');
}

/** An undoable turn (as restore/historyCounts.ts's undoableTurns selects them). */
const UNDOABLE = UNDOABLE_SQL;

function hotColumns(db: Database): string[] {
  return (db.exec('PRAGMA main.table_info(turns)')[0]?.values ?? []).map((row) => String(row[1]));
}

function columnsOf(db: Database, schema: string): Set<string> {
  return new Set((db.exec(`PRAGMA ${schema}.table_info(turns)`)[0]?.values ?? []).map((row) => String(row[1])));
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

export interface RotationSteps {
  /** Runs and journals one transaction in the hot database (caller holds the lock). */
  journaled: (fn: (tx: StoreTx) => void) => void;
}

export interface RotationResult {
  moved: number;
  archiveBytes: number;
}

/**
 * The archive as this process holds it: at most one attached copy, reloaded when the hot database names another
 * file (after a rotation here or elsewhere). The caller (DurableStore) serializes every call.
 */
export class TurnArchive {
  private held: { db: Database; identity: string } | null = null;
  private viewOpen = false;

  constructor(
    private readonly sql: SqlJsStatic,
    readonly path: string,
    private readonly files: StoreFileSystem,
  ) {}

  /** True while an archive file is attached to the hot database. */
  get attached(): boolean {
    return this.held !== null;
  }

  /** Releases the archive's memory once the hot database that attached it is closed (reload, close). */
  forget(): void {
    this.held?.db.close();
    this.held = null;
    this.viewOpen = false;
  }

  /** Detaches (hot database still open) and releases the archive's memory. */
  detach(hot: Database): void {
    this.closeView(hot);
    const attached = (hot.exec('PRAGMA database_list')[0]?.values ?? []).some((row) => row[1] === SCHEMA);
    if (attached) hot.exec(`DETACH ${SCHEMA}`);
    this.forget();
  }

  /**
   * Makes `turns` read as hot ∪ archive in `hot` until closeView(). Attaches (or re-attaches) the archive the hot
   * database names; no view is needed when it names none. Throws ArchiveDamage for a file that does not match,
   * StoreUnreadable for one that could not be read.
   */
  openView(hot: Database): void {
    const accepted = archiveIdentities(hotGet(hot));
    if (accepted.length === 0) {
      if (this.held) this.detach(hot);
      return;
    }
    const texts = accepted.map(identityText);
    if ((!this.held || !texts.includes(this.held.identity)) && !this.attach(hot)) return;
    const hotCols = hotColumns(hot);
    const archived = columnsOf(hot, SCHEMA);
    // An archive written before a migration added a column reads it as NULL (docs/design.md "History archive").
    const fromArchive = hotCols.map((c) => (archived.has(c) ? `a.${quoted(c)}` : `NULL AS ${quoted(c)}`)).join(', ');
    const fromHot = hotCols.map((c) => `m.${quoted(c)}`).join(', ');
    const archivedOnly = `WHERE NOT EXISTS (SELECT 1 FROM main.turns h WHERE h.id = a.id)`;
    hot.exec(`CREATE TEMP VIEW turns AS
      SELECT m.rowid AS rowid, ${fromHot} FROM main.turns m
      UNION ALL
      SELECT a.rowid AS rowid, ${fromArchive} FROM ${SCHEMA}.turns a ${archivedOnly}`);
    this.viewOpen = true;
  }

  closeView(hot: Database): void {
    if (!this.viewOpen) return;
    this.viewOpen = false;
    hot.exec('DROP VIEW IF EXISTS temp.turns');
  }

  /**
   * The archive file's bytes and the identity they match, or null when there is no archive: the hot database names
   * none, or names only a pending one whose file is absent (a first rotation crashed before its rename).
   * Throws ArchiveDamage for a missing or non-matching file.
   */
  private readNamed(hot: Database): { bytes: Uint8Array; match: ArchiveIdentity } | null {
    const accepted = archiveIdentities(hotGet(hot));
    if (accepted.length === 0) return null;
    const bytes = readOrNull(this.files, this.path, 'history archive');
    if (bytes === null && metaJson(hotGet(hot), ARCHIVE_KEY) === null) return null;
    if (bytes === null) throw new ArchiveDamage('file missing');
    const crc = checksum(bytes);
    const match = accepted.find((id) => id.length === bytes.length && id.crc === crc);
    if (!match) throw new ArchiveDamage('file does not match the state database');
    return { bytes, match };
  }

  /** Attaches the archive the hot database names; false when there is none. */
  private attach(hot: Database): boolean {
    this.detach(hot);
    const named = this.readNamed(hot);
    if (!named) return false;
    const { bytes, match } = named;
    let db: Database;
    try {
      db = new this.sql.Database(bytes);
    } catch {
      throw new ArchiveDamage('not a readable SQLite database');
    }
    try {
      let owner: string;
      let rows: number;
      try {
        owner = String(scalar(db, "SELECT value FROM meta WHERE key = 'lineage'"));
        rows = Number(scalar(db, 'SELECT COUNT(*) FROM turns'));
      } catch {
        throw new ArchiveDamage('not a readable SQLite database');
      }
      if (owner !== lineage(hot)) throw new ArchiveDamage('belongs to another database');
      if (rows !== match.rows) throw new ArchiveDamage('row count differs');
      hot.exec(`ATTACH '${memoryFileOf(db)}' AS ${SCHEMA}`); // any other failure is no proof of damage: it propagates
    } catch (error) {
      db.close();
      throw error;
    }
    this.held = { db, identity: identityText(match) };
    return true;
  }

  /**
   * Whether a rotation would move at least `margin` turns now (no restore in flight, no recovery latched). Never loads
   * the archive.
   */
  static rotationDue(hot: Database, keep: number, margin: number): boolean {
    if (
      scalar(hot, "SELECT 1 FROM main.operations WHERE status IN ('in-flight', 'recovery-required') LIMIT 1") !== null
    )
      return false;
    if (scalar(hot, 'SELECT 1 FROM main.recovery LIMIT 1') !== null) return false;
    // Cheap first: the whole hot table is smaller than keep + margin.
    if (Number(scalar(hot, "SELECT COUNT(*) FROM main.turns WHERE recovery = 'terminal'")) < keep + margin)
      return false;
    return (
      Number(scalar(hot, `SELECT COUNT(*) FROM main.turns WHERE ${movablePredicate(keep)}`)) >= Math.max(1, margin)
    );
  }

  /**
   * Moves the movable turns into the archive. Crash-safe by order: (1) the new archive — a superset of the old
   * one — is built in memory and its identity journaled as pending; (2) it replaces the file (temp + fsync + rename);
   * (3) one journaled transaction deletes the moved rows from the hot table and makes the pending identity the
   * archive. A crash before (3) leaves rows in both files, read once (the hot copy wins). Caller holds the lock,
   * is caught up, and compacts afterwards.
   */
  rotate(hot: Database, keep: number, steps: RotationSteps): RotationResult {
    // The new archive starts from the file the hot database names (a pending one included: it is a superset).
    const base = this.readNamed(hot)?.bytes ?? null;
    this.detach(hot);
    const next = base ? new this.sql.Database(base) : new this.sql.Database();
    let bytes: Uint8Array;
    let rows: number;
    let counts: ArchiveCounts;
    try {
      const cols = hotColumns(hot);
      if (!base) {
        next.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
          CREATE TABLE turns (${cols.map((c) => (c === 'id' ? 'id TEXT PRIMARY KEY NOT NULL' : quoted(c))).join(', ')});
          CREATE INDEX turns_branch ON turns (branch, created_at);
          CREATE INDEX turns_version ON turns (version_commit);`);
        next.run("INSERT INTO meta (key, value) VALUES ('lineage', ?)", [lineage(hot)]);
      }
      const present = columnsOf(next, 'main');
      for (const c of cols) if (!present.has(c)) next.exec(`ALTER TABLE turns ADD COLUMN ${quoted(c)}`);
      hot.exec(`ATTACH '${memoryFileOf(next)}' AS ${NEXT_SCHEMA}`);
      try {
        const list = cols.map(quoted).join(', ');
        const where = movablePredicate(keep);
        // Delete-then-insert (never INSERT OR REPLACE): a conflict on anything but the id fails the rotation loudly.
        hot.exec(`BEGIN;
          DELETE FROM ${NEXT_SCHEMA}.turns WHERE id IN (SELECT id FROM main.turns WHERE ${where});
          INSERT INTO ${NEXT_SCHEMA}.turns (rowid, ${list}) SELECT rowid, ${list} FROM main.turns WHERE ${where};
          COMMIT;`);
        rows = Number(scalar(hot, `SELECT COUNT(*) FROM ${NEXT_SCHEMA}.turns`));
        // After the delete, the archive's rows that stay hot as well (promoted earlier, not movable now) are counted
        // there.
        const onlyArchived =
          `FROM ${NEXT_SCHEMA}.turns a ` +
          `WHERE NOT EXISTS (SELECT 1 FROM main.turns h WHERE h.id = a.id AND NOT (${where}))`;
        const undoable: Record<string, number> = {};
        const newestUndoable: Record<string, number> = {};
        const versioned: Record<string, number> = {};
        for (const [branch, n, newest, withVersion] of hot.exec(
          `SELECT branch, COUNT(*), MAX(created_at), SUM(version_commit IS NOT NULL) ${onlyArchived} ` +
            `AND ${UNDOABLE} AND branch IS NOT NULL GROUP BY branch`,
        )[0]?.values ?? []) {
          undoable[String(branch)] = Number(n);
          newestUndoable[String(branch)] = Number(newest);
          versioned[String(branch)] = Number(withVersion);
        }
        counts = { rows: Number(scalar(hot, `SELECT COUNT(*) ${onlyArchived}`)), undoable, newestUndoable, versioned };
      } catch (error) {
        try {
          hot.exec('ROLLBACK');
        } catch {
          // no transaction was open
        }
        throw error;
      } finally {
        hot.exec(`DETACH ${NEXT_SCHEMA}`);
      }
      bytes = next.export();
    } finally {
      next.close();
    }
    const identity: ArchiveIdentity = { length: bytes.length, crc: checksum(bytes), rows };
    steps.journaled((tx) =>
      tx.run('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)', [PENDING_KEY, identityText(identity)]),
    );
    failpoint('archive-before-rename');
    writeFileAtomic(this.path, bytes);
    failpoint('archive-after-rename');
    let moved = 0;
    steps.journaled((tx) => {
      moved = Number(
        tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM main.turns WHERE ${movablePredicate(keep)}`)?.n ?? 0,
      );
      tx.run(`DELETE FROM turns WHERE ${movablePredicate(keep)}`);
      tx.run('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)', [ARCHIVE_KEY, identityText(identity)]);
      tx.run('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)', [COUNTS_KEY, JSON.stringify(counts)]);
      tx.run('DELETE FROM meta WHERE key = ?', [PENDING_KEY]);
      failpoint('archive-during-delete');
    });
    return { moved, archiveBytes: bytes.length };
  }
}

/** The name sql.js gave the database's file in its in-memory file system (what ATTACH opens a second time). */
function memoryFileOf(db: Database): string {
  const name = (db as Database & { filename?: unknown }).filename;
  if (typeof name !== 'string' || !/^[\w.]+$/.test(name)) throw new Error('sql.js did not name the database file');
  return name;
}

function hotGet(db: Database): Pick<StoreReader, 'get'> {
  return { get: (sql, params) => firstRow(db, sql, params) };
}

function firstRow<T>(
  db: Database,
  sql: string,
  params?: readonly SqlValue[] | Record<string, SqlValue>,
): T | undefined {
  const stmt = db.prepare(sql);
  try {
    if (params !== undefined) stmt.bind(params as never);
    return stmt.step() ? (stmt.getAsObject() as T) : undefined;
  } finally {
    stmt.free();
  }
}

/** The hot database after an archive could not be used: it names no archive any more (its file was moved aside). */
export function forgetArchive(tx: StoreTx): void {
  tx.run('DELETE FROM meta WHERE key IN (?, ?, ?)', [ARCHIVE_KEY, PENDING_KEY, COUNTS_KEY]);
}

/**
 * Copies archived rows back into the hot table (literal values, so the journal replays them), before a write
 * touches them (Undo of an archived turn). Adjusts the archived counts. `rows` come from a read through the view.
 */
export function promoteRows(tx: StoreTx, rows: readonly Record<string, SqlValue>[]): void {
  if (rows.length === 0) return;
  const counts = archivedCounts(tx);
  for (const row of rows) {
    if (tx.get('SELECT 1 AS x FROM main.turns WHERE id = ?', [row.id])) continue;
    const cols = Object.keys(row);
    tx.run(
      `INSERT INTO turns (${cols.map(quoted).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
      cols.map((c) => row[c]),
    );
    counts.rows = Math.max(0, counts.rows - 1);
    if (
      row.undone_by === null &&
      row.base_commit !== null &&
      typeof row.branch === 'string' &&
      changedSomething(row as unknown as TurnEffectFields) &&
      counts.undoable[row.branch]
    ) {
      counts.undoable[row.branch]--;
      if (row.version_commit !== null && counts.versioned?.[row.branch]) counts.versioned[row.branch]--;
    }
  }
  tx.run('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)', [COUNTS_KEY, JSON.stringify(counts)]);
}

/** Rows (with rowid) of `ids` that only the attached archive holds. Call while the view is open. */
export function archivedRows(r: StoreReader, ids: readonly string[]): Record<string, SqlValue>[] {
  const out: Record<string, SqlValue>[] = [];
  for (const id of new Set(ids)) {
    const row = r.get<Record<string, SqlValue>>(
      `SELECT rowid, * FROM ${SCHEMA}.turns a ` +
        `WHERE id = ? AND NOT EXISTS (SELECT 1 FROM main.turns h WHERE h.id = a.id)`,
      [id],
    );
    if (row) out.push(row);
  }
  return out;
}
