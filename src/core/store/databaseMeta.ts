/**
 * Small reads of a sql.js database's own bookkeeping (pragmas, tables, the store's `meta` keys), shared by the store's
 * parts.
 */
import type { Database } from 'sql.js';
import type { SqlValue } from './journal';
import { StoreDamage } from './storeFiles';

export const SET_JOURNAL_SEQ = "INSERT OR REPLACE INTO meta (key, value) VALUES ('journal_seq', ?)";

/** The pragmas every database of ours runs under (sql.js resets them on export): set before any write or replay. */
export function applyPragmas(db: Database): void {
  // The schema declares foreign keys; replay must run under the same pragmas as the original write.
  db.run('PRAGMA foreign_keys = ON');
  // The database lives in sql.js memory and is made durable by our journal, not by SQLite's: an in-memory
  // rollback journal and no syncs roughly halve the cost of a commit at 100k turns.
  db.exec('PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF');
}

/** The first column of the first row of `sql`, or null. Read-only when `sql` is. */
export function scalar(db: Database, sql: string): SqlValue {
  return db.exec(sql)[0]?.values[0]?.[0] ?? null;
}

/** The schema version SQLite keeps in its header (`PRAGMA user_version`). Read-only. */
export function userVersion(db: Database): number {
  return Number(scalar(db, 'PRAGMA user_version'));
}

/** The names of the tables the database holds. Read-only. */
export function tableNames(db: Database): Set<string> {
  const rows = db.exec("SELECT name FROM sqlite_master WHERE type = 'table'")[0]?.values ?? [];
  return new Set(rows.map((r) => String(r[0])));
}

function metaValue(db: Database, key: string): string | null {
  if (!tableNames(db).has('meta')) return null;
  const row = db.exec('SELECT value FROM meta WHERE key = ?', [key])[0]?.values[0];
  return row ? String(row[0]) : null;
}

/** The database's lineage id ('' before the first migration creates one). */
export function lineage(db: Database): string {
  return metaValue(db, 'lineage') ?? '';
}

/** The last journal record this database holds. */
export function journalSeq(db: Database): number {
  const value = metaValue(db, 'journal_seq');
  const seq = value === null ? 0 : Number(value);
  if (!Number.isSafeInteger(seq) || seq < 0) throw new StoreDamage('corrupt', 'bad journal_seq');
  return seq;
}
