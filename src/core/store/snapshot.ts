/**
 * The snapshot file: validating one before sql.js sees it, and compaction — exporting the whole database as
 * the new snapshot, sealed by the empty journal written after it (its header names the snapshot's length and
 * checksum and the last record it holds, so a crash between the two renames never applies a record twice).
 */
import type { Database, SqlJsStatic } from 'sql.js';
import { AvhError } from '../errors';
import { writeFileAtomic } from './atomicWrite';
import { applyPragmas, lineage, scalar, tableNames, userVersion } from './databaseMeta';
import { checksum, encodeJournalHeader } from './journal';
import { newerSchemaError, TABLES_BY_VERSION } from './migrations';
import { SCHEMA_VERSION } from './schema';
import { StoreDamage } from './storeFiles';

const RESERVE_PAGES_MIN = 16;
const RESERVE_PAGES_MAX = 4096;

/** Rejects files that cannot be a complete SQLite database before handing them to sql.js. */
function checkSqliteHeader(bytes: Uint8Array): string | null {
  if (bytes.length < 100) return 'too short';
  if (Buffer.from(bytes.buffer, bytes.byteOffset, 16).toString('latin1') !== 'SQLite format 3\0') return 'bad header';
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, 100);
  const rawPageSize = view.readUInt16BE(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return 'bad page size';
  if (bytes.length % pageSize !== 0) return 'truncated';
  // The in-header page count is authoritative only when the change counter matches version-valid-for.
  const pageCount = view.readUInt32BE(28);
  if (pageCount !== 0 && view.readUInt32BE(24) === view.readUInt32BE(92) && bytes.length !== pageCount * pageSize) {
    return 'truncated';
  }
  return null;
}

/**
 * Opens snapshot bytes as a database. `deep`: also run quick_check, for a snapshot the journal header does not
 * seal (slow: a full scan). Throws StoreDamage for damage, the newer-schema error for a newer database.
 */
export function openSnapshot(sql: SqlJsStatic, bytes: Uint8Array, deep: boolean): Database {
  const headerProblem = checkSqliteHeader(bytes);
  if (headerProblem) throw new StoreDamage('corrupt', `snapshot ${headerProblem}`);
  let db: Database | null = null;
  try {
    db = new sql.Database(bytes);
    applyPragmas(db);
    if (deep && scalar(db, 'PRAGMA quick_check') !== 'ok')
      throw new StoreDamage('corrupt', 'snapshot failed quick_check');
    const version = userVersion(db);
    // A newer version's database is healthy, just not ours to read: refuse, never move it aside.
    if (version > SCHEMA_VERSION) throw newerSchemaError(version);
    const tables = tableNames(db);
    for (const table of TABLES_BY_VERSION.slice(0, version).flat()) {
      if (!tables.has(table)) throw new StoreDamage('corrupt', 'snapshot lacks a required table');
    }
    return db;
  } catch (error) {
    db?.close();
    if (error instanceof StoreDamage || error instanceof AvhError) throw error;
    throw new StoreDamage('corrupt', 'snapshot is not a readable SQLite database');
  }
}

/** True when the journal header seals exactly these snapshot bytes. */
export function isSealed(snapshot: Uint8Array, header: { snapshotLength: number; snapshotCrc: number }): boolean {
  return header.snapshotLength === snapshot.length && header.snapshotCrc === checksum(snapshot);
}

/** An empty journal continuing from `baseSeq`; `snapshot` (when given) is the one it seals. */
export function journalHeaderFor(db: Database, baseSeq: number, snapshot?: Uint8Array): Buffer {
  return encodeJournalHeader({
    baseSeq,
    lineage: lineage(db),
    snapshotLength: snapshot?.length ?? 0,
    snapshotCrc: snapshot ? checksum(snapshot) : 0,
  });
}

/**
 * Writes the whole database as the new snapshot, then an empty journal sealing it (each temp + fsync + rename).
 * The caller holds the lock and attaches the new journal. Returns the snapshot's size.
 */
export function writeCompaction(db: Database, snapshotPath: string, journalPath: string, appliedSeq: number): number {
  // export() must run outside a transaction; older sql.js versions also reset pragmas while exporting.
  reserveFreePages(db);
  const bytes = db.export();
  applyPragmas(db);
  writeFileAtomic(snapshotPath, bytes);
  writeFileAtomic(journalPath, journalHeaderFor(db, appliedSeq, bytes));
  return bytes.length;
}

/**
 * Leaves ~2% spare pages on the snapshot's freelist. A process's first writes then reuse them: growing the
 * file instead makes sql.js copy the whole in-memory file (~100-150 ms at 64 MB), which would land on the
 * first write of every CLI invocation. Physical only: the logical content stays identical in every process.
 */
function reserveFreePages(db: Database): void {
  const pageSize = Number(scalar(db, 'PRAGMA page_size'));
  const pageCount = Number(scalar(db, 'PRAGMA page_count'));
  const free = Number(scalar(db, 'PRAGMA freelist_count'));
  const target = Math.min(RESERVE_PAGES_MAX, Math.max(RESERVE_PAGES_MIN, Math.ceil(pageCount * 0.02)));
  if (free >= target) return;
  db.exec('BEGIN');
  try {
    db.run('CREATE TABLE avh_free_page_reserve (b BLOB)');
    db.run('INSERT INTO avh_free_page_reserve VALUES (zeroblob(?))', [(target - free) * (pageSize - 8)]);
    db.run('DROP TABLE avh_free_page_reserve');
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}
