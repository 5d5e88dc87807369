/**
 * The repository's state database: sql.js in memory, made durable and shared between processes (two VS Code
 * windows and the CLI) by a snapshot file plus an append-only write-ahead journal.
 *
 * - Every acknowledged transaction is one fsynced journal record holding the statements it ran, appended
 *   under the cross-process lock after catching up with records other processes appended (journalFile.ts).
 * - Every `compactEvery` records the whole database is exported to the snapshot and the journal is replaced
 *   by an empty one sealing it (snapshot.ts). The snapshot's `meta.journal_seq` names the last record it
 *   contains, so a crash between the two renames never applies a record twice.
 * - Proven damage is moved aside (never deleted) and a fresh database is created (quarantine.ts); a file that
 *   cannot be read is retried, then reported with nothing changed (storeFiles.ts).
 * - Reads cannot write, writes are recorded (readOnlyGuard.ts); schemas are migrated forward only (migrations.ts).
 *
 * The store owns two `meta` keys: `journal_seq` (updated in every journaled transaction, so all processes
 * hold identical databases) and `lineage` (a random id fixed by the first migration).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Database, SqlJsStatic } from 'sql.js';
import { AvhError } from '../errors';
import {
  ARCHIVE_FILE,
  ArchiveDamage,
  DEFAULT_ARCHIVE_KEEP,
  DEFAULT_ARCHIVE_MARGIN,
  TurnArchive,
  archiveIdentities,
  archivedRows,
  forgetArchive,
  promoteRows,
} from './archive';
import { silentLog, type EventLog } from '../log';
import { writeFileAtomic } from './atomicWrite';
import { applyPragmas, journalSeq, lineage } from './databaseMeta';
import {
  JOURNAL_HEADER_SIZE,
  decodeJournalHeader,
  encodeRecord,
  type JournalStatement,
  type SqlParams,
} from './journal';
import { journalFileKey, type JournalState } from './journalAppend';
import { JournalFile, replay } from './journalFile';
import { assertKnownSchema, migrate } from './migrations';
import { moveAside, removeLeftoverTemps } from './quarantine';
import {
  ReadModifiedDatabase,
  guardedQuery,
  isThenable,
  readerOf,
  recordTransaction,
  type StoreReader,
  type StoreTx,
} from './readOnlyGuard';
import { acquireLock, type LockHandle } from './pidLock';
import { openSnapshot, isSealed, journalHeaderFor, writeCompaction } from './snapshot';
import { SCHEMA_VERSION } from './schema';
import { DEFAULT_COMPACT_EVERY, JOURNAL_FILE, LOCK_FILE, MAX_JOURNAL_BYTES, SNAPSHOT_FILE } from './storeLayout';
import { loadSqlJs } from './sqlJsLoader';
import {
  READ_RETRY_DELAYS_MS,
  StoreDamage,
  StoreUnreadable,
  errnoCode,
  readOrNull,
  retryUnreadable,
  type StoreFileSystem,
} from './storeFiles';

export type { SqlParams, SqlValue } from './journal';
export type { Row, StoreReader, StoreTx } from './readOnlyGuard';
export type { StoreFileSystem } from './storeFiles';

export interface StoreOptions {
  /** How long to wait for another process's write lock (default 10 s). */
  lockTimeoutMs?: number;
  /** Journal records between compactions (default DEFAULT_COMPACT_EVERY). */
  compactEvery?: number;
  log?: EventLog;
  /** The file-system seam for reads (default node:fs); tests inject transient errors through it. */
  files?: StoreFileSystem;
  /** Waits between retries of a failed read (default READ_RETRY_DELAYS_MS). */
  readRetryDelaysMs?: readonly number[];
  /**
   * Finished turns kept in the hot database, newest first; older ones move to the history archive (default
   * DEFAULT_ARCHIVE_KEEP).
   */
  archiveKeep?: number;
  /** A rotation runs at a compaction only when at least this many turns can move (default DEFAULT_ARCHIVE_MARGIN). */
  archiveMargin?: number;
}

export interface ReadOptions {
  /**
   * The read can reach old turns (history pages, lookups by id or version, counts over the whole history): `turns`
   * then reads as hot ∪ archive, loading the archive on first use. Off for everything on the turn, hook and
   * restore hot path, which never loads it.
   */
  history?: boolean;
}

export interface StoreOpenResult {
  store: DurableStore;
  /**
   * Set when the files on disk were damaged: they were moved aside and an empty store created in their place.
   * Whatever they held (a recovery latch, an operation in flight) is unknown from here on.
   */
  quarantined?: { movedTo: string; reason: 'corrupt' | 'unreadable' };
}

export { SNAPSHOT_FILE, JOURNAL_FILE, LOCK_FILE, DEFAULT_COMPACT_EVERY } from './storeLayout';
export { ARCHIVE_FILE, DEFAULT_ARCHIVE_KEEP, DEFAULT_ARCHIVE_MARGIN };
const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

export class DurableStore {
  readonly path: string;
  private readonly journal: JournalFile;
  private readonly lockPath: string;
  private readonly lockTimeoutMs: number;
  private readonly compactEvery: number;
  private readonly log: EventLog;
  private readonly files: StoreFileSystem;
  private readonly retryDelays: readonly number[];
  private readonly archive: TurnArchive;
  private readonly archiveKeep: number;
  private readonly archiveMargin: number;
  private rotationBlocked = false;

  private db: Database | null = null;
  private appliedSeq = 0;
  private needsReload = false;
  private failure: AvhError | null = null;
  private closed = false;
  private compactionQueued = false;
  private queue: Promise<unknown> = Promise.resolve();
  private lastJobEnd = Number.NEGATIVE_INFINITY;

  private constructor(
    private readonly sql: SqlJsStatic,
    private readonly dir: string,
    options: StoreOptions,
  ) {
    this.path = path.join(dir, SNAPSHOT_FILE);
    this.files = options.files ?? fs;
    this.journal = new JournalFile(path.join(dir, JOURNAL_FILE), this.files);
    this.lockPath = path.join(dir, LOCK_FILE);
    this.lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
    this.compactEvery = Math.max(1, Math.floor(options.compactEvery ?? DEFAULT_COMPACT_EVERY));
    this.log = options.log ?? silentLog;
    this.retryDelays = options.readRetryDelaysMs ?? READ_RETRY_DELAYS_MS;
    this.archive = new TurnArchive(sql, path.join(dir, ARCHIVE_FILE), this.files);
    this.archiveKeep = Math.max(0, Math.floor(options.archiveKeep ?? DEFAULT_ARCHIVE_KEEP));
    this.archiveMargin = Math.max(1, Math.floor(options.archiveMargin ?? DEFAULT_ARCHIVE_MARGIN));
  }

  /**
   * Opens (creating if needed) the store in `dir`, migrated to SCHEMA_VERSION and caught up with every
   * acknowledged write. Proven damage is moved aside, never deleted; a file that cannot be read is retried,
   * then refused with nothing changed; a newer schema is refused.
   */
  static async open(dir: string, options: StoreOptions = {}): Promise<StoreOpenResult> {
    try {
      fs.mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw new AvhError(
        'store-unavailable',
        `Could not create the state directory (${errnoCode(error)})`,
        { dir },
        { cause: error },
      );
    }
    const store = new DurableStore(await loadSqlJs(), dir, options);
    const lock = await store.lock('state-store-open');
    let quarantined: StoreOpenResult['quarantined'];
    try {
      removeLeftoverTemps(dir);
      await retryUnreadable(
        () => {
          try {
            store.loadLocked();
          } catch (error) {
            if (!(error instanceof StoreDamage)) throw error;
            quarantined = { movedTo: store.quarantineLocked(error), reason: error.reason };
            store.loadLocked();
          }
        },
        dir,
        store.retryDelays,
      );
      store.migrateLocked();
    } catch (error) {
      store.dispose();
      if (error instanceof AvhError) throw error;
      throw new AvhError('store-unavailable', 'Could not open the state database', { dir }, { cause: error });
    } finally {
      lock.release();
    }
    return quarantined ? { store, quarantined } : { store };
  }

  /**
   * Runs `fn` synchronously in one SQLite transaction under the cross-process write lock, after catching up
   * with every write other processes acknowledged. Resolves only once the writes are fsynced to the journal.
   * If `fn` throws, everything rolls back and the error propagates unchanged.
   */
  transaction<T>(fn: (tx: StoreTx) => T): Promise<T> {
    return this.caughtUpUnderLock('state-store-write', () => this.commitLocked(fn));
  }

  /**
   * Runs `fn` synchronously against a state that includes every write acknowledged (by any process) before the call.
   * `history`: `turns` includes the archived turns (see ReadOptions).
   */
  read<T>(fn: (reader: StoreReader) => T, options: ReadOptions = {}): Promise<T> {
    return this.enqueue(async () => {
      this.assertUsable();
      if (!this.isCurrent()) {
        const lock = await this.lock('state-store-read');
        try {
          await this.catchUpWithRetries();
        } finally {
          lock.release();
        }
      }
      const db = this.requireDb();
      const reader = readerOf((sql, params, first) => this.query(db, sql, params, first));
      const result = options.history ? await this.withHistoryView(false, () => fn(reader)) : fn(reader);
      if (isThenable(result)) {
        (result as Promise<unknown>).then(undefined, () => undefined);
        throw new AvhError('invalid-input', 'DurableStore.read callback must be synchronous (it returned a Promise)');
      }
      return result;
    });
  }

  /**
   * Brings archived turns back into the hot table before a write touches them (Undo of an old turn): `pick` reads
   * hot ∪ archive and names the turns; those only the archive holds are copied back in one journaled transaction.
   * Returns how many were copied. Costs nothing (no archive load) when the hot database names no archive.
   */
  promoteTurns(pick: (reader: StoreReader) => readonly string[]): Promise<number> {
    return this.caughtUpUnderLock('state-store-write', async () => {
      const db = this.requireDb();
      const reader = readerOf((sql, params, first) => this.query(db, sql, params, first));
      if (archiveIdentities(reader).length === 0) return 0;
      const rows = await this.withHistoryView(true, () => archivedRows(reader, pick(reader)));
      if (rows.length === 0) return 0;
      this.commitLocked((tx) => promoteRows(tx, rows));
      this.log.info('store.archive.promoted', { turns: rows.length });
      return rows.length;
    });
  }

  /**
   * Runs `fn` like read(), under the write lock, and returns with its result the journal state it saw: the hook
   * fast path's facts file is keyed to it and trusted only while the journal on disk is still exactly that state.
   */
  readWithJournalState<T>(fn: (reader: StoreReader) => T): Promise<{ result: T; journal: JournalState }> {
    return this.caughtUpUnderLock('state-store-read', () => {
      const db = this.requireDb();
      const result = fn(readerOf((sql, params, first) => this.query(db, sql, params, first)));
      const journal = {
        lineage: lineage(db),
        baseSeq: this.journal.base,
        lastSeq: this.appliedSeq,
        key: journalFileKey(this.dir, this.journal.statOpen()),
      };
      return { result, journal };
    });
  }

  /** True while the history archive is loaded in this process (tests check the hot path never loads it). */
  get archiveLoaded(): boolean {
    return this.archive.attached;
  }

  /**
   * Runs `fn` with `turns` reading hot ∪ archive. A damaged, foreign or missing archive file is moved aside (never
   * deleted), the hot database stops naming it, and the read fails with a notice saying so; newer history is intact.
   */
  private async withHistoryView<T>(locked: boolean, fn: () => T): Promise<T> {
    const db = this.requireDb();
    try {
      await retryUnreadable(() => this.archive.openView(db), this.dir, this.retryDelays);
    } catch (error) {
      if (!(error instanceof ArchiveDamage)) throw error;
      await this.quarantineArchive(locked, error); // returns only when, caught up, the archive opened after all
    }
    try {
      return fn();
    } finally {
      this.archive.closeView(db);
    }
  }

  private async quarantineArchive(locked: boolean, damage: ArchiveDamage): Promise<void> {
    const lock = locked ? null : await this.lock('state-archive-quarantine');
    try {
      if (!locked) await this.catchUpWithRetries();
      const db = this.requireDb();
      // Another process may have rotated since: only a file that still does not match is moved aside.
      try {
        this.archive.openView(db);
        return;
      } catch (error) {
        if (!(error instanceof ArchiveDamage)) throw error;
      }
      this.archive.detach(db);
      const movedTo = fs.existsSync(this.archive.path)
        ? moveAside(this.dir, [this.archive.path], new StoreDamage('corrupt', damage.what))
        : null;
      this.commitLocked(forgetArchive);
      this.log.error('store.archive.quarantined', { what: damage.what, movedAside: movedTo !== null });
      throw new AvhError(
        'store-unavailable',
        movedTo
          ? `The history archive (older turns) was damaged (${damage.what}); it was moved aside to ${movedTo}. Recent history is intact; older turns are listed from their commits only.`
          : `The history archive (older turns) is missing; recent history is intact, older turns are listed from their commits only.`,
        { what: damage.what },
      );
    } finally {
      lock?.release();
    }
  }

  /** Waits for queued work (including a pending compaction), then releases the database and the journal. */
  close(): Promise<void> {
    return this.enqueue(async () => {
      this.dispose();
    });
  }

  // ---- queue, lock, state ----

  /** Queued, under the cross-process lock (`purpose` names it), caught up with every acknowledged write: then `fn`. */
  private caughtUpUnderLock<T>(purpose: string, fn: () => T | Promise<T>): Promise<T> {
    return this.enqueue(async () => {
      this.assertUsable();
      const lock = await this.lock(purpose);
      try {
        await this.catchUpWithRetries();
        return await fn();
      } finally {
        lock.release();
      }
    });
  }

  /**
   * Runs jobs one at a time. A job that follows another back to back first yields an event-loop turn, so a
   * burst of store calls neither blocks the host's other work nor keeps a waiter's poll timer (another store
   * on this directory) from finding the lock free. An isolated call starts at once.
   */
  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.queue
      .then(() =>
        performance.now() - this.lastJobEnd < 2 ? new Promise<void>((resolve) => setImmediate(resolve)) : undefined,
      )
      .then(job)
      .finally(() => {
        this.lastJobEnd = performance.now();
      });
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async lock(purpose: string): Promise<LockHandle> {
    try {
      return await acquireLock(this.lockPath, { timeoutMs: this.lockTimeoutMs, purpose });
    } catch (error) {
      if (error instanceof AvhError) throw error;
      throw new AvhError(
        'store-unavailable',
        `Could not take the state lock (${errnoCode(error)})`,
        {},
        { cause: error },
      );
    }
  }

  private assertUsable(): void {
    if (this.closed) throw new AvhError('store-unavailable', 'The state store is closed');
    if (this.failure) throw this.failure;
  }

  private requireDb(): Database {
    if (!this.db) throw new AvhError('store-unavailable', 'The state database is not loaded');
    return this.db;
  }

  private dispose(): void {
    this.closed = true;
    this.archive.forget();
    this.journal.close();
    this.db?.close();
    this.db = null;
  }

  /** Lock-free check: the journal is the file we hold open and has not grown since we last read it. */
  private isCurrent(): boolean {
    return !this.needsReload && this.db !== null && this.journal.isCurrent();
  }

  // ---- loading and catching up ----

  /**
   * Reads the snapshot and replays the journal after it; truncates a torn tail. Throws StoreDamage for
   * damaged bytes, StoreUnreadable for files that could not be read. Caller holds the lock.
   */
  private loadLocked(): void {
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
  private catchUpWithRetries(): Promise<void> {
    return retryUnreadable(() => this.catchUpLocked(), this.dir, this.retryDelays);
  }

  /** Brings the in-memory database up to date with the journal on disk. Caller holds the lock. */
  private catchUpLocked(): void {
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

  private reloadLocked(why: string): void {
    this.loadLocked();
    this.log.info('store.reloaded', { why, seq: this.appliedSeq });
  }

  // ---- writing ----

  private query<T>(db: Database, sql: string, params: SqlParams | undefined, first: boolean): T[] {
    try {
      return guardedQuery<T>(db, sql, params, first);
    } catch (error) {
      if (error instanceof ReadModifiedDatabase) this.needsReload = true;
      throw error;
    }
  }

  private runTransaction<T>(fn: (tx: StoreTx) => T): { result: T; statements: JournalStatement[] } {
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
  private commitLocked<T>(fn: (tx: StoreTx) => T): T {
    const { result, statements } = this.runTransaction(fn);
    if (statements.length > 0) this.appendLocked(statements);
    return result;
  }

  /** Makes a committed in-memory transaction durable. On failure the memory is discarded and reloaded. */
  private appendLocked(statements: JournalStatement[]): void {
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
    if (this.compactionDue()) this.scheduleCompaction();
  }

  private compactionDue(): boolean {
    return this.appliedSeq - this.journal.base >= this.compactEvery || this.journal.offset >= MAX_JOURNAL_BYTES;
  }

  /** Compaction runs as its own queued job so the transaction that triggered it is acknowledged first. */
  private scheduleCompaction(): void {
    if (this.compactionQueued) return;
    this.compactionQueued = true;
    void this.enqueue(async () => {
      this.compactionQueued = false;
      if (this.closed || this.failure) return;
      let lock: LockHandle;
      try {
        lock = await this.lock('state-store-compact');
      } catch {
        return; // busy: the next write retries
      }
      try {
        this.catchUpLocked();
        if (this.compactionDue()) {
          this.rotateIfDueLocked();
          // A rotation whose journal append failed left memory that must not become the snapshot: reload first.
          if (this.needsReload) this.reloadLocked('rotation-failed');
          this.compactLocked();
        }
      } catch (error) {
        this.log.warn('store.compaction.failed', { code: errnoCode(error) });
      } finally {
        lock.release();
      }
    });
  }

  /** Writes the whole database as the new snapshot, then starts an empty journal sealing it. Caller holds the lock. */
  private compactLocked(): void {
    const started = performance.now();
    const db = this.requireDb();
    this.archive.detach(db); // sql.js's export() re-opens the database; the archive is loaded again when a read needs it
    const bytes = writeCompaction(db, this.path, this.journal.path, this.appliedSeq);
    this.journal.attach();
    this.journal.base = this.appliedSeq;
    this.log.info('store.compacted', {
      seq: this.appliedSeq,
      bytes,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  }

  /**
   * Moves old finished turns to the history archive when enough can move (rare by design) and no restore is in
   * flight. A failure leaves everything as it was (the archive file is only ever replaced by a superset).
   */
  private rotateIfDueLocked(): void {
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

  private migrateLocked(): void {
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

  // ---- quarantine ----

  /** Moves the journal and snapshot aside under one timestamp; returns the snapshot's (or journal's) new path. */
  private quarantineLocked(damage: StoreDamage): string {
    this.journal.close();
    this.db?.close();
    this.db = null;
    const movedTo = moveAside(this.dir, [this.journal.path, this.path], damage);
    this.log.warn('store.quarantined', { reason: damage.reason, what: damage.what });
    return movedTo;
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
