import type { Database, SqlJsStatic } from 'sql.js';
import { AvhError } from '../errors';
import type { EventLog } from '../log';
import { ArchiveDamage, TurnArchive } from './archive';
import { writeFileAtomic } from './atomicWrite';
import { applyPragmas, journalSeq, lineage } from './databaseMeta';
import {
  JOURNAL_HEADER_SIZE,
  decodeJournalHeader,
  encodeRecord,
  type JournalStatement,
  type SqlParams,
} from './journal';
import { JournalFile, replay } from './journalFile';
import { assertKnownSchema, migrate } from './migrations';
import { moveAside } from './quarantine';
import {
  ReadModifiedDatabase,
  guardedQuery,
  readerOf,
  recordTransaction,
  type StoreReader,
  type StoreTx,
} from './readOnlyGuard';
import { SCHEMA_VERSION } from './schema';
import { openSnapshot, isSealed, journalHeaderFor, writeCompaction } from './snapshot';
import { MAX_JOURNAL_BYTES } from './storeLayout';
import {
  StoreDamage,
  StoreUnreadable,
  errnoCode,
  readOrNull,
  retryUnreadable,
  type StoreFileSystem,
} from './storeFiles';

/** What a replica is made of: the files it mirrors and what it reports to. */
export interface ReplicaFiles {
  sql: SqlJsStatic;
  dir: string;
  /** The snapshot file. */
  path: string;
  files: StoreFileSystem;
  journal: JournalFile;
  archive: TurnArchive;
  log: EventLog;
  retryDelays: readonly number[];
  compactEvery: number;
  /** Finished turns kept hot, and the fewest a rotation moves (StoreOptions.archiveKeep, archiveMargin). */
  archiveKeep: number;
  archiveMargin: number;
  /** Called when an append made a compaction due (the store queues it as a job of its own). */
  onCompactionDue: () => void;
}

/**
 * This process's copy of the state database (durableStore.ts): loaded from the snapshot and the journal after it,
 * caught up with the records other processes append, and every write of ours made durable as one journal record.
 * Every method named `…Locked` (and catchUpWithRetries) runs with the cross-process lock held by its caller.
 */
export class StoreReplica {
  readonly dir: string;
  readonly journal: JournalFile;
  readonly archive: TurnArchive;
  db: Database | null = null;
  appliedSeq = 0;
  /** Memory may differ from the files (a failed read or write): the next catch-up reloads from disk. */
  needsReload = false;
  /** Damage or a newer schema seen while catching up: every later call fails with it until the store is reopened. */
  failure: AvhError | null = null;
  private readonly sql: SqlJsStatic;
  private readonly path: string;
  private readonly files: StoreFileSystem;
  private readonly log: EventLog;
  private readonly retryDelays: readonly number[];
  private readonly compactEvery: number;
  private readonly onCompactionDue: () => void;
  private readonly archiveKeep: number;
  private readonly archiveMargin: number;
  private rotationBlocked = false;

  constructor(parts: ReplicaFiles) {
    this.sql = parts.sql;
    this.dir = parts.dir;
    this.path = parts.path;
    this.files = parts.files;
    this.journal = parts.journal;
    this.archive = parts.archive;
    this.log = parts.log;
    this.retryDelays = parts.retryDelays;
    this.compactEvery = parts.compactEvery;
    this.onCompactionDue = parts.onCompactionDue;
    this.archiveKeep = parts.archiveKeep;
    this.archiveMargin = parts.archiveMargin;
  }

  /** A reader of the loaded database: a statement that writes fails (and the copy is reloaded before the next use). */
  reader(): StoreReader {
    const db = this.requireDb();
    return readerOf((sql, params, first) => this.query(db, sql, params, first));
  }

  /** The loaded database; fails when none is (the store is closed, or a load failed). */
  requireDb(): Database {
    if (!this.db) throw new AvhError('store-unavailable', 'The state database is not loaded');
    return this.db;
  }

  /** Lock-free check: the journal is the file we hold open and has not grown since we last read it. */
  isCurrent(): boolean {
    return !this.needsReload && this.db !== null && this.journal.isCurrent();
  }

  /** Releases the database, the journal descriptor and the archive; the files are left as they are. */
  dispose(): void {
    this.archive.forget();
    this.journal.close();
    this.db?.close();
    this.db = null;
  }

  /**
   * Reads the snapshot and replays the journal after it; truncates a torn tail. Throws StoreDamage for
   * damaged bytes, StoreUnreadable for files that could not be read. Caller holds the lock.
   */
  loadLocked(): void {
    this.archive.forget();
    this.journal.close();
    this.db?.close();
    this.db = null;
    this.needsReload = false;

    const snapshot = readOrNull(this.files, this.path, 'snapshot');
    const bytes = this.journal.attachAndReadAll();
    const header = bytes.length > 0 ? decodeJournalHeader(bytes) : null;
    if (bytes.length > 0 && header === null) throw new StoreDamage('corrupt', 'journal header');
    if (!snapshot && header && header.snapshotLength > 0) throw new StoreDamage('corrupt', 'snapshot missing');
    const sealed = snapshot !== null && header !== null && isSealed(snapshot, header);
    // An unsealed snapshot (crash between the two renames of a compaction, or changed from outside) gets the
    // full check once, then a compaction seals it again.
    const reseal = (snapshot !== null && !sealed) || header === null;

    const db = snapshot ? openSnapshot(this.sql, snapshot, !sealed) : new this.sql.Database();
    if (!snapshot) applyPragmas(db);
    this.db = db;
    assertKnownSchema(db);
    const snapshotSeq = journalSeq(db);
    this.appliedSeq = snapshotSeq;

    if (header === null) {
      // No journal yet (new store) or an empty file: start one continuing from the snapshot.
      writeFileAtomic(this.journal.path, journalHeaderFor(db, snapshotSeq));
      this.journal.attach();
      this.journal.base = snapshotSeq;
      if (reseal && snapshot) this.compactLocked();
      return;
    }
    if (header.lineage !== lineage(db)) throw new StoreDamage('corrupt', 'journal belongs to another database');
    // A journal that starts after the snapshot means records the snapshot lacks were lost.
    if (header.baseSeq > snapshotSeq) throw new StoreDamage('corrupt', 'journal newer than snapshot');
    this.journal.base = header.baseSeq;
    let expected = header.baseSeq + 1;
    this.replayWindow(bytes, JOURNAL_HEADER_SIZE, 0, (record) => {
      if (record.seq !== expected) throw new StoreDamage('corrupt', 'journal sequence gap');
      expected++;
      return record.seq > snapshotSeq; // records up to the snapshot's seq are already in it
    });
    assertKnownSchema(db);
    if (reseal) {
      this.log.warn('store.snapshot.resealed', { snapshotSeq, journalBase: header.baseSeq });
      this.compactLocked();
    }
  }

  /**
   * Applies records of `buf` (which begins at file offset `fileStart`) and advances the applied offset; cuts a torn
   * tail.
   */
  private replayWindow(buf: Buffer, start: number, fileStart: number, accept: Parameters<typeof replay>[3]): number {
    const result = replay(this.requireDb(), buf, start, accept);
    if (result.lastSeq !== null) this.appliedSeq = result.lastSeq;
    this.journal.offset = fileStart + result.end;
    if (result.torn) {
      this.journal.truncate(fileStart + result.end);
      this.log.warn('store.journal.torn-tail-truncated', { bytes: buf.length - result.end });
    }
    return result.applied;
  }

  /**
   * Catches up under the caller's lock, retrying reads that failed; "cannot read …, nothing changed" after the last.
   */
  catchUpWithRetries(): Promise<void> {
    return retryUnreadable(() => this.catchUpLocked(), this.dir, this.retryDelays);
  }

  /** Brings the in-memory database up to date with the journal on disk. Caller holds the lock. */
  catchUpLocked(): void {
    try {
      this.catchUpInner();
    } catch (error) {
      if (error instanceof StoreDamage) {
        this.needsReload = true;
        this.failure = new AvhError(
          'store-unavailable',
          `The state database is damaged (${error.reason}); reopen it to move the damaged files aside`,
          { reason: error.reason },
        );
        this.log.error('store.damaged', { reason: error.reason, what: error.what });
        throw this.failure;
      }
      if (error instanceof StoreUnreadable) {
        // Not damage: memory may be half caught up, so reload from disk on the next try.
        this.needsReload = true;
        this.log.warn('store.read-failed', { what: error.what, code: error.code });
        throw error;
      }
      if (error instanceof AvhError) {
        this.failure = error;
        throw error;
      }
      this.needsReload = true;
      throw new AvhError(
        'store-unavailable',
        `Could not read the state journal (${errnoCode(error)})`,
        {},
        { cause: error },
      );
    }
  }

  private catchUpInner(): void {
    if (this.needsReload || !this.db || !this.journal.attached) {
      this.reloadLocked('needed');
      return;
    }
    const onDisk = this.journal.onDisk();
    // Records appended to the journal we hold open come first, even if it was replaced since: a compactor
    // appends its last record to the old journal before replacing it.
    if (!this.drainAttached()) {
      this.reloadLocked('journal-shrank');
      return;
    }
    if (onDisk === 'missing') {
      // Deleted from outside: our memory is the best copy left, so persist it as a fresh snapshot.
      this.log.warn('store.journal.missing');
      this.compactLocked();
      return;
    }
    if (onDisk === 'same') return;
    // Another process compacted. Its snapshot equals our state if it is of our database and starts where we are.
    this.journal.attach();
    const header = this.journal.readHeader();
    if (header === null || header.baseSeq !== this.appliedSeq || header.lineage !== lineage(this.requireDb())) {
      this.reloadLocked('compacted-elsewhere');
      return;
    }
    this.journal.base = this.appliedSeq;
    this.log.info('store.journal.adopted', { seq: this.appliedSeq });
    if (!this.drainAttached()) this.reloadLocked('journal-shrank');
  }

  /** Applies records appended to the attached journal since we last read it; false if it shrank (reload needed). */
  private drainAttached(): boolean {
    const size = this.journal.size();
    if (size === this.journal.offset) return true;
    if (size < this.journal.offset) return false;
    let expected = this.appliedSeq + 1;
    const applied = this.replayWindow(this.journal.readNew(size), 0, this.journal.offset, (record) => {
      if (record.seq !== expected) throw new StoreDamage('corrupt', 'journal sequence gap');
      expected++;
      return true;
    });
    if (applied > 0) assertKnownSchema(this.requireDb());
    return true;
  }

  /** Loads again from the files (memory could differ from them); `why` goes to the log. */
  reloadLocked(why: string): void {
    this.loadLocked();
    this.log.info('store.reloaded', { why, seq: this.appliedSeq });
  }

  query<T>(db: Database, sql: string, params: SqlParams | undefined, first: boolean): T[] {
    try {
      return guardedQuery<T>(db, sql, params, first);
    } catch (error) {
      if (error instanceof ReadModifiedDatabase) this.needsReload = true;
      throw error;
    }
  }

  runTransaction<T>(fn: (tx: StoreTx) => T): { result: T; statements: JournalStatement[] } {
    const db = this.requireDb();
    return recordTransaction(
      db,
      fn,
      this.appliedSeq + 1,
      (sql, params, first) => this.query(db, sql, params, first),
      () => {
        this.needsReload = true;
      },
    );
  }

  /** Runs `fn` as one transaction and makes what it wrote durable. Caller holds the lock and is caught up. */
  commitLocked<T>(fn: (tx: StoreTx) => T): T {
    const { result, statements } = this.runTransaction(fn);
    if (statements.length > 0) this.appendLocked(statements);
    return result;
  }

  /** Makes a committed in-memory transaction durable. On failure the memory is discarded and reloaded. */
  appendLocked(statements: JournalStatement[]): void {
    const seq = this.appliedSeq + 1;
    try {
      this.journal.append(encodeRecord({ seq, statements }));
    } catch (error) {
      this.needsReload = true;
      throw new AvhError(
        'store-unavailable',
        `Could not write the state journal (${errnoCode(error)}); the change was not saved`,
        { statements: statements.length },
        { cause: error },
      );
    }
    this.appliedSeq = seq;
    if (this.compactionDue()) this.onCompactionDue();
  }

  /** Whether the journal has grown enough (records or bytes) for a compaction. */
  compactionDue(): boolean {
    return this.appliedSeq - this.journal.base >= this.compactEvery || this.journal.offset >= MAX_JOURNAL_BYTES;
  }

  /** Writes the whole database as the new snapshot, then starts an empty journal sealing it. Caller holds the lock. */
  compactLocked(): void {
    const started = performance.now();
    const db = this.requireDb();
    // sql.js's export() re-opens the database; the archive is loaded again when a read needs it.
    this.archive.detach(db);
    const bytes = writeCompaction(db, this.path, this.journal.path, this.appliedSeq);
    this.journal.attach();
    this.journal.base = this.appliedSeq;
    this.log.info('store.compacted', {
      seq: this.appliedSeq,
      bytes,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  }

  /** Migrates the schema forward to SCHEMA_VERSION (journaled), then compacts so the snapshot carries it. */
  migrateLocked(): void {
    const from = migrate(
      this.requireDb(),
      (fn) => this.runTransaction(fn),
      (statements) => this.appendLocked(statements),
    );
    if (from === null) return;
    // The snapshot file should carry the new schema, not only the journal.
    this.compactLocked();
    this.log.info('store.migrated', { from, to: SCHEMA_VERSION });
  }

  /** Moves the journal and snapshot aside under one timestamp; returns the snapshot's (or journal's) new path. */
  quarantineLocked(damage: StoreDamage): string {
    this.journal.close();
    this.db?.close();
    this.db = null;
    const movedTo = moveAside(this.dir, [this.journal.path, this.path], damage);
    this.log.warn('store.quarantined', { reason: damage.reason, what: damage.what });
    return movedTo;
  }

  /**
   * Moves old finished turns to the history archive when enough can move (rare by design) and no restore is in
   * flight. A failure leaves everything as it was (the archive file is only ever replaced by a superset).
   */
  rotateIfDueLocked(): void {
    const db = this.requireDb();
    if (this.rotationBlocked || !TurnArchive.rotationDue(db, this.archiveKeep, this.archiveMargin)) return;
    const started = performance.now();
    try {
      const { moved, archiveBytes } = this.archive.rotate(db, this.archiveKeep, {
        journaled: (fn) => this.commitLocked(fn),
      });
      // Physical only (every process holds the same rows): the snapshot written next shrinks to the hot set. SQLite
      // keeps rowids through VACUUM's copy; were any renumbered, this memory would differ from other processes',
      // so it is dropped and reloaded from disk instead (the rotation stays; the snapshot keeps its free pages).
      const before = rowidFingerprint(db);
      db.exec('VACUUM');
      applyPragmas(db);
      if (rowidFingerprint(db) !== before) {
        this.log.warn('store.archive.vacuum-renumbered');
        this.reloadLocked('vacuum-renumbered');
      }
      this.log.info('store.archive.rotated', {
        moved,
        archiveBytes,
        ms: Math.round((performance.now() - started) * 10) / 10,
      });
    } catch (error) {
      // A damaged archive is left for the next history read, which moves it aside and says so; until then this
      // process stops retrying (each try would read the whole file).
      if (error instanceof ArchiveDamage) this.rotationBlocked = true;
      this.log.warn('store.archive.rotation-failed', {
        what: error instanceof ArchiveDamage ? error.what : errnoCode(error),
      });
    }
  }
}

/** Row count, rowid sum and maximum of every table: what VACUUM must leave unchanged. */
function rowidFingerprint(db: Database): string {
  const tables = (
    db.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")[0]
      ?.values ?? []
  ).map((r) => String(r[0]));
  return JSON.stringify(
    tables.map(
      (t) => db.exec(`SELECT COUNT(*), TOTAL(rowid), MAX(rowid) FROM "${t.replace(/"/g, '""')}"`)[0]?.values[0],
    ),
  );
}
