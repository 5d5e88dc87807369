/**
 * The repository's state database: sql.js in memory, made durable and shared between processes (two VS Code
 * windows and the CLI) by a snapshot file plus an append-only write-ahead journal.
 *
 * - Every acknowledged transaction is one fsynced journal record holding the statements it ran, appended
 *   under the cross-process lock after catching up with records other processes appended.
 * - Every `compactEvery` records the whole database is exported to the snapshot (temp + fsync + rename) and
 *   the journal is replaced by an empty one. The snapshot's `meta.journal_seq` names the last record it
 *   contains, so a crash between the two renames never applies a record twice.
 * - A damaged snapshot or journal is moved aside (never deleted) and a fresh database is created.
 *
 * The store owns two `meta` keys: `journal_seq` (updated in every journaled transaction, so all processes
 * hold identical databases) and `lineage` (a random id fixed by the first migration).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BindParams, Database, SqlJsStatic, Statement } from 'sql.js';
import { AvhError } from '../errors';
import { silentLog, type EventLog } from '../log';
import { fsyncDirectory, writeAll, writeFileAtomic } from './atomicWrite';
import {
  JOURNAL_HEADER_SIZE,
  checksum,
  decodeJournalHeader,
  encodeJournalHeader,
  encodeRecord,
  hasValidRecordAfter,
  readRecordAt,
  type JournalRecord,
  type JournalStatement,
  type SqlParams,
  type SqlValue,
} from './journal';
import { acquireLock, type LockHandle } from './pidLock';
import { MIGRATIONS, SCHEMA_VERSION } from './schema';
import { loadSqlJs } from './sqlJsLoader';

export type { SqlParams, SqlValue } from './journal';
export type Row = Record<string, SqlValue>;

export interface StoreReader {
  get<T = Row>(sql: string, params?: SqlParams): T | undefined;
  all<T = Row>(sql: string, params?: SqlParams): T[];
}

/** Used synchronously inside `transaction()`. Writes go through `run` only: it is what the journal records. */
export interface StoreTx extends StoreReader {
  /** A write. Params must be literal values so replaying the journal reproduces it exactly (no random(), no 'now'). */
  run(sql: string, params?: SqlParams): void;
}

export interface StoreOptions {
  /** How long to wait for another process's write lock (default 10 s). */
  lockTimeoutMs?: number;
  /** Journal records between compactions (default DEFAULT_COMPACT_EVERY). */
  compactEvery?: number;
  log?: EventLog;
}

export interface StoreOpenResult {
  store: DurableStore;
  /** Set when the files on disk were damaged: they were moved aside and an empty store created in their place. */
  quarantined?: { movedTo: string; reason: 'corrupt' | 'unreadable' };
}

export const SNAPSHOT_FILE = 'state.sqlite';
export const JOURNAL_FILE = 'state.journal';
export const LOCK_FILE = 'state.lock';
/**
 * Records between compactions, tuned with bench/storeBench.ts. The CLI opens the store in a new process per
 * invocation, where cold wasm replays a record in ~0.2-0.35 ms at 100k turns (vs ~0.05 ms warm), so the
 * journal is kept short; a compaction costs ~5 ms at 1k turns, ~30 ms at 10k and ~250 ms at 100k, so 100
 * records between them adds at most ~2.5 ms per write, paid after the write is acknowledged.
 */
export const DEFAULT_COMPACT_EVERY = 100;
const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
/** Compact early when large blobs make the journal big even with few records. */
const MAX_JOURNAL_BYTES = 8 * 1024 * 1024;
/** The store owns transaction boundaries; these inside tx.run would break the journal's record = transaction rule. */
const FORBIDDEN_IN_TX = /^\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE|ATTACH|DETACH|VACUUM)\b/i;
const RESERVE_PAGES_MIN = 16;
const RESERVE_PAGES_MAX = 4096;
const SET_JOURNAL_SEQ = "INSERT OR REPLACE INTO meta (key, value) VALUES ('journal_seq', ?)";

/** Damage found on disk; `open` quarantines on it, a running store refuses further work. */
class StoreDamage extends Error {
  constructor(
    readonly reason: 'corrupt' | 'unreadable',
    readonly what: string,
  ) {
    super(`state database ${reason}: ${what}`);
  }
}

const TABLES_BY_VERSION: readonly string[][] = MIGRATIONS.map((statements) =>
  statements.flatMap((sql) => /^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?["`]?(\w+)/i.exec(sql)?.[1] ?? []),
);

function isThenable(value: unknown): boolean {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function copyParams(params: SqlParams): SqlParams {
  const copy = (v: SqlValue): SqlValue => (v instanceof Uint8Array ? v.slice() : v);
  if (Array.isArray(params)) return (params as readonly SqlValue[]).map(copy);
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, copy(v)]));
}

function errnoCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : 'unknown';
}

function statOrNull(file: string): fs.Stats | null {
  try {
    return fs.statSync(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw error;
  }
}

function readAt(fd: number, start: number, end: number): Buffer {
  const buf = Buffer.alloc(end - start);
  let done = 0;
  while (done < buf.length) {
    const n = fs.readSync(fd, buf, done, buf.length - done, start + done);
    if (n === 0) return buf.subarray(0, done);
    done += n;
  }
  return buf;
}

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

export class DurableStore {
  readonly path: string;
  private readonly journalPath: string;
  private readonly lockPath: string;
  private readonly lockTimeoutMs: number;
  private readonly compactEvery: number;
  private readonly log: EventLog;

  private db: Database | null = null;
  private journalFd: number | null = null;
  private journalDev = -1;
  private journalIno = -1;
  /** Byte offset up to which this process has applied the journal (always a record boundary). */
  private journalOffset = 0;
  private journalBase = 0;
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
    this.journalPath = path.join(dir, JOURNAL_FILE);
    this.lockPath = path.join(dir, LOCK_FILE);
    this.lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
    this.compactEvery = Math.max(1, Math.floor(options.compactEvery ?? DEFAULT_COMPACT_EVERY));
    this.log = options.log ?? silentLog;
  }

  /**
   * Opens (creating if needed) the store in `dir`, migrated to SCHEMA_VERSION and caught up with every
   * acknowledged write. Damaged files are moved aside, never deleted; a newer schema is refused.
   */
  static async open(dir: string, options: StoreOptions = {}): Promise<StoreOpenResult> {
    try {
      fs.mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw new AvhError('store-unavailable', `Could not create the state directory (${errnoCode(error)})`, { dir }, { cause: error });
    }
    const store = new DurableStore(await loadSqlJs(), dir, options);
    const lock = await store.lock('state-store-open');
    let quarantined: StoreOpenResult['quarantined'];
    try {
      store.removeLeftoverTemps();
      try {
        store.loadLocked();
      } catch (error) {
        if (!(error instanceof StoreDamage)) throw error;
        quarantined = { movedTo: store.quarantineLocked(error), reason: error.reason };
        store.loadLocked();
      }
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
    return this.enqueue(async () => {
      this.assertUsable();
      const lock = await this.lock('state-store-write');
      try {
        this.catchUpLocked();
        const { result, statements } = this.runTransaction(fn);
        if (statements.length > 0) this.appendLocked(statements);
        return result;
      } finally {
        lock.release();
      }
    });
  }

  /** Runs `fn` synchronously against a state that includes every write acknowledged (by any process) before the call. */
  read<T>(fn: (reader: StoreReader) => T): Promise<T> {
    return this.enqueue(async () => {
      this.assertUsable();
      if (!this.isCurrent()) {
        const lock = await this.lock('state-store-read');
        try {
          this.catchUpLocked();
        } finally {
          lock.release();
        }
      }
      const db = this.requireDb();
      const reader: StoreReader = {
        get: <R>(sql: string, params?: SqlParams) => this.query<R>(db, sql, params, true)[0],
        all: <R>(sql: string, params?: SqlParams) => this.query<R>(db, sql, params, false),
      };
      const result = fn(reader);
      if (isThenable(result)) {
        (result as Promise<unknown>).then(undefined, () => undefined);
        throw new AvhError('invalid-input', 'DurableStore.read callback must be synchronous (it returned a Promise)');
      }
      return result;
    });
  }

  /** Waits for queued work (including a pending compaction), then releases the database and the journal. */
  close(): Promise<void> {
    return this.enqueue(async () => {
      this.dispose();
    });
  }

  // ---- queue, lock, state ----

  /**
   * Runs jobs one at a time. A job that follows another back to back first yields an event-loop turn, so a
   * burst of store calls neither blocks the host's other work nor keeps a waiter's poll timer (another store
   * on this directory) from finding the lock free. An isolated call starts at once.
   */
  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.queue
      .then(() => (performance.now() - this.lastJobEnd < 2 ? new Promise<void>((resolve) => setImmediate(resolve)) : undefined))
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
      throw new AvhError('store-unavailable', `Could not take the state lock (${errnoCode(error)})`, {}, { cause: error });
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
    this.closeJournal();
    this.db?.close();
    this.db = null;
  }

  private closeJournal(): void {
    if (this.journalFd !== null) fs.closeSync(this.journalFd);
    this.journalFd = null;
    this.journalDev = -1;
    this.journalIno = -1;
  }

  /** Lock-free check: the journal is the file we hold open and has not grown since we last read it. */
  private isCurrent(): boolean {
    if (this.needsReload || !this.db || this.journalFd === null) return false;
    const st = statOrNull(this.journalPath);
    return st !== null && st.dev === this.journalDev && st.ino === this.journalIno && st.size === this.journalOffset;
  }

  // ---- loading ----

  private applyPragmas(db: Database): void {
    // The schema declares foreign keys; replay must run under the same pragmas as the original write.
    db.run('PRAGMA foreign_keys = ON');
    // The database lives in sql.js memory and is made durable by our journal, not by SQLite's: an in-memory
    // rollback journal and no syncs roughly halve the cost of a commit at 100k turns.
    db.exec('PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF');
  }

  private scalar(db: Database, sql: string): SqlValue {
    return db.exec(sql)[0]?.values[0]?.[0] ?? null;
  }

  private userVersion(db: Database): number {
    return Number(this.scalar(db, 'PRAGMA user_version'));
  }

  private tableNames(db: Database): Set<string> {
    const rows = db.exec("SELECT name FROM sqlite_master WHERE type = 'table'")[0]?.values ?? [];
    return new Set(rows.map((r) => String(r[0])));
  }

  private metaValue(db: Database, key: string): string | null {
    if (!this.tableNames(db).has('meta')) return null;
    const row = db.exec('SELECT value FROM meta WHERE key = ?', [key])[0]?.values[0];
    return row ? String(row[0]) : null;
  }

  /** The database's lineage id ('' before the first migration creates one). */
  private lineage(db: Database): string {
    return this.metaValue(db, 'lineage') ?? '';
  }

  private snapshotSeq(db: Database): number {
    const value = this.metaValue(db, 'journal_seq');
    const seq = value === null ? 0 : Number(value);
    if (!Number.isSafeInteger(seq) || seq < 0) throw new StoreDamage('corrupt', 'bad journal_seq');
    return seq;
  }

  /** `deep`: also run quick_check, for a snapshot the journal header does not seal (slow: a full scan). */
  private openSnapshot(bytes: Uint8Array, deep: boolean): Database {
    const headerProblem = checkSqliteHeader(bytes);
    if (headerProblem) throw new StoreDamage('corrupt', `snapshot ${headerProblem}`);
    let db: Database | null = null;
    try {
      db = new this.sql.Database(bytes);
      this.applyPragmas(db);
      if (deep && this.scalar(db, 'PRAGMA quick_check') !== 'ok') throw new StoreDamage('corrupt', 'snapshot failed quick_check');
      const version = this.userVersion(db);
      // A newer version's database is healthy, just not ours to read: refuse, never move it aside.
      if (version > SCHEMA_VERSION) throw this.newerSchemaError(version);
      const tables = this.tableNames(db);
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

  private newerSchemaError(version: number): AvhError {
    return new AvhError(
      'store-unavailable',
      `The state database was written by a newer version of Agent Version History (schema ${version}; this version supports ${SCHEMA_VERSION}). Update the extension and CLI.`,
      { schemaVersion: version, supportedVersion: SCHEMA_VERSION },
    );
  }

  /**
   * Reads the snapshot and replays the journal after it; truncates a torn tail. Throws StoreDamage for
   * damaged files. Caller holds the lock.
   */
  private loadLocked(): void {
    this.closeJournal();
    this.db?.close();
    this.db = null;
    this.needsReload = false;

    const snapshot = this.readOrNull(this.path, 'snapshot');
    const journal = this.readJournal();
    const header = journal.length > 0 ? decodeJournalHeader(journal) : null;
    if (journal.length > 0 && header === null) throw new StoreDamage('corrupt', 'journal header');
    if (!snapshot && header && header.snapshotLength > 0) throw new StoreDamage('corrupt', 'snapshot missing');
    const sealed =
      snapshot !== null &&
      header !== null &&
      header.snapshotLength === snapshot.length &&
      header.snapshotCrc === checksum(snapshot);
    // An unsealed snapshot (crash between the two renames of a compaction, or changed from outside) gets the
    // full check once, then a compaction seals it again.
    const reseal = (snapshot !== null && !sealed) || header === null;

    const db = snapshot ? this.openSnapshot(snapshot, !sealed) : new this.sql.Database();
    if (!snapshot) this.applyPragmas(db);
    this.db = db;
    const version = this.userVersion(db);
    if (version > SCHEMA_VERSION) throw this.newerSchemaError(version);
    const snapshotSeq = this.snapshotSeq(db);
    this.appliedSeq = snapshotSeq;

    if (header === null) {
      // No journal yet (new store) or an empty file: start one continuing from the snapshot.
      writeFileAtomic(this.journalPath, encodeJournalHeader({ baseSeq: snapshotSeq, lineage: this.lineage(db), snapshotLength: 0, snapshotCrc: 0 }));
      this.attachJournal();
      this.journalBase = snapshotSeq;
      if (reseal && snapshot) this.compactLocked();
      return;
    }
    if (header.lineage !== this.lineage(db)) throw new StoreDamage('corrupt', 'journal belongs to another database');
    // A journal that starts after the snapshot means records the snapshot lacks were lost.
    if (header.baseSeq > snapshotSeq) throw new StoreDamage('corrupt', 'journal newer than snapshot');
    this.journalBase = header.baseSeq;
    let expected = header.baseSeq + 1;
    this.applyWindow(journal, JOURNAL_HEADER_SIZE, (record) => {
      if (record.seq !== expected) throw new StoreDamage('corrupt', 'journal sequence gap');
      expected++;
      return record.seq > snapshotSeq; // records up to the snapshot's seq are already in it
    });
    const after = this.userVersion(db);
    if (after > SCHEMA_VERSION) throw this.newerSchemaError(after);
    if (reseal) {
      this.log.warn('store.snapshot.resealed', { snapshotSeq, journalBase: header.baseSeq });
      this.compactLocked();
    }
  }

  /** Attaches the journal (if there is one) and reads it through that descriptor: the bytes and the identity we keep are one file. */
  private readJournal(): Buffer {
    try {
      this.attachJournal();
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return Buffer.alloc(0);
      throw new StoreDamage('unreadable', `journal (${errnoCode(error)})`);
    }
    const fd = this.journalFd as number;
    try {
      return readAt(fd, 0, fs.fstatSync(fd).size);
    } catch (error) {
      throw new StoreDamage('unreadable', `journal (${errnoCode(error)})`);
    }
  }

  private readOrNull(file: string, what: string): Buffer | null {
    try {
      return fs.readFileSync(file);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return null;
      throw new StoreDamage('unreadable', `${what} (${errnoCode(error)})`);
    }
  }

  /** Opens the journal for append and remembers its identity, so a replacement by another process's compaction is noticed. */
  private attachJournal(): void {
    this.closeJournal();
    const fd = fs.openSync(this.journalPath, fs.constants.O_RDWR | fs.constants.O_APPEND);
    const st = fs.fstatSync(fd);
    this.journalFd = fd;
    this.journalDev = st.dev;
    this.journalIno = st.ino;
    this.journalOffset = JOURNAL_HEADER_SIZE;
  }

  /**
   * Applies the records in `buf` from `start` (buf begins at file offset `fileStart`), advancing journalOffset.
   * Invalid bytes at the end are a torn, never-acknowledged append: truncated away once the records before
   * them applied (we hold the lock).
   */
  private applyWindow(buf: Buffer, start: number, accept: (record: JournalRecord) => boolean, fileStart = 0): number {
    const records: JournalRecord[] = [];
    let end = start;
    let torn = false;
    for (;;) {
      const scan = readRecordAt(buf, end);
      if (scan.kind === 'end') break;
      if (scan.kind === 'invalid') {
        if (hasValidRecordAfter(buf, end)) throw new StoreDamage('corrupt', 'journal record damaged before its end');
        torn = true;
        break;
      }
      if (accept(scan.record)) records.push(scan.record);
      end = scan.next;
    }
    if (records.length > 0) this.applyRecords(records);
    this.journalOffset = fileStart + end;
    if (torn) {
      fs.ftruncateSync(this.journalFd as number, fileStart + end);
      this.log.warn('store.journal.torn-tail-truncated', { bytes: buf.length - end });
    }
    return records.length;
  }

  /**
   * Replays records in one SQLite transaction: the same statements in the same order as their original
   * transactions, but dirty pages are written once (measured ~0.5 ms per record at 100k turns when each
   * record commits on its own).
   */
  private applyRecords(records: JournalRecord[]): void {
    const db = this.requireDb();
    // Records repeat a few statement texts: prepare each once (Database.run would re-parse every time).
    const prepared = new Map<string, Statement>();
    const run = (sql: string, params: SqlParams | undefined) => {
      if (params === undefined) {
        db.run(sql); // may hold several statements, as Database.run ran it originally
        return;
      }
      let stmt = prepared.get(sql);
      if (!stmt) prepared.set(sql, (stmt = db.prepare(sql)));
      stmt.run(params as BindParams);
    };
    db.exec('BEGIN');
    let current = records[0].seq;
    try {
      for (const record of records) {
        current = record.seq;
        for (const statement of record.statements) run(statement.sql, statement.params);
        run(SET_JOURNAL_SEQ, [String(record.seq)]);
      }
      db.exec('COMMIT');
    } catch {
      try {
        db.exec('ROLLBACK');
      } catch {
        // already rolled back by SQLite
      }
      throw new StoreDamage('corrupt', `journal record ${current} does not replay`);
    } finally {
      for (const stmt of prepared.values()) stmt.free();
    }
    this.appliedSeq = records[records.length - 1].seq;
  }

  private setJournalSeq(db: Database, seq: number): void {
    db.run(SET_JOURNAL_SEQ, [String(seq)]);
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
      if (error instanceof AvhError) {
        this.failure = error;
        throw error;
      }
      this.needsReload = true;
      throw new AvhError('store-unavailable', `Could not read the state journal (${errnoCode(error)})`, {}, { cause: error });
    }
  }

  private catchUpInner(): void {
    if (this.needsReload || !this.db || this.journalFd === null) {
      this.reloadLocked('needed');
      return;
    }
    const st = statOrNull(this.journalPath);
    // Records appended to the journal we hold open come first, even if it was replaced since: a compactor
    // appends its last record to the old journal before replacing it.
    if (!this.drainAttached()) {
      this.reloadLocked('journal-shrank');
      return;
    }
    if (st === null) {
      // Deleted from outside: our memory is the best copy left, so persist it as a fresh snapshot.
      this.log.warn('store.journal.missing');
      this.compactLocked();
      return;
    }
    if (st.dev === this.journalDev && st.ino === this.journalIno) return;
    // Another process compacted. Its snapshot equals our state if it is of our database and starts where we are.
    this.attachJournal();
    const header = decodeJournalHeader(readAt(this.journalFd as number, 0, JOURNAL_HEADER_SIZE));
    if (header === null || header.baseSeq !== this.appliedSeq || header.lineage !== this.lineage(this.requireDb())) {
      this.reloadLocked('compacted-elsewhere');
      return;
    }
    this.journalBase = this.appliedSeq;
    this.log.info('store.journal.adopted', { seq: this.appliedSeq });
    if (!this.drainAttached()) this.reloadLocked('journal-shrank');
  }

  /** Applies records appended to the attached journal since we last read it; false if it shrank (reload needed). */
  private drainAttached(): boolean {
    const fd = this.journalFd as number;
    const size = fs.fstatSync(fd).size;
    if (size === this.journalOffset) return true;
    if (size < this.journalOffset) return false;
    const window = readAt(fd, this.journalOffset, size);
    let expected = this.appliedSeq + 1;
    const applied = this.applyWindow(
      window,
      0,
      (record) => {
        if (record.seq !== expected) throw new StoreDamage('corrupt', 'journal sequence gap');
        expected++;
        return true;
      },
      this.journalOffset,
    );
    if (applied > 0) {
      const version = this.userVersion(this.requireDb());
      if (version > SCHEMA_VERSION) throw this.newerSchemaError(version);
    }
    return true;
  }

  private reloadLocked(why: string): void {
    this.loadLocked();
    this.log.info('store.reloaded', { why, seq: this.appliedSeq });
  }

  // ---- writing ----

  private query<T>(db: Database, sql: string, params: SqlParams | undefined, first: boolean): T[] {
    const before = this.scalar(db, 'SELECT total_changes()');
    const stmt = db.prepare(sql);
    const rows: T[] = [];
    try {
      if (params !== undefined) stmt.bind(params as BindParams);
      while (stmt.step()) {
        rows.push(stmt.getAsObject() as T);
        if (first) break;
      }
    } finally {
      stmt.free();
    }
    // A write here would bypass the journal and exist only in this process's memory.
    if (this.scalar(db, 'SELECT total_changes()') !== before) {
      this.needsReload = true;
      throw new AvhError('invalid-input', 'Store reads must not modify the database; use tx.run for writes');
    }
    return rows;
  }

  private runTransaction<T>(fn: (tx: StoreTx) => T): { result: T; statements: JournalStatement[] } {
    const db = this.requireDb();
    const statements: JournalStatement[] = [];
    let active = true;
    const guard = () => {
      if (!active) throw new AvhError('invalid-input', 'A store transaction was used after it finished');
    };
    const tx: StoreTx = {
      run: (sql, params) => {
        guard();
        if (FORBIDDEN_IN_TX.test(sql)) throw new AvhError('invalid-input', 'tx.run cannot control transactions or attach databases');
        db.run(sql, (params ?? undefined) as BindParams);
        // Copied now: a caller reusing one params array across runs must not change what was journaled.
        statements.push(params === undefined ? { sql } : { sql, params: copyParams(params) });
      },
      get: <R>(sql: string, params?: SqlParams) => {
        guard();
        return this.query<R>(db, sql, params, true)[0];
      },
      all: <R>(sql: string, params?: SqlParams) => {
        guard();
        return this.query<R>(db, sql, params, false);
      },
    };
    db.exec('BEGIN');
    try {
      const result = fn(tx);
      if (isThenable(result)) {
        (result as Promise<unknown>).then(undefined, () => undefined);
        throw new AvhError('invalid-input', 'DurableStore.transaction callback must be synchronous (it returned a Promise)');
      }
      if (statements.length > 0) this.setJournalSeq(db, this.appliedSeq + 1);
      db.exec('COMMIT');
      return { result, statements };
    } catch (error) {
      try {
        db.exec('ROLLBACK');
      } catch {
        // SQLite had already ended the transaction (e.g. ON CONFLICT ROLLBACK): later statements may have
        // autocommitted outside the journal, so memory is no longer trusted.
        this.needsReload = true;
      }
      throw error;
    } finally {
      active = false;
    }
  }

  /** Makes a committed in-memory transaction durable. On failure the memory is discarded and reloaded. */
  private appendLocked(statements: JournalStatement[]): void {
    const fd = this.journalFd as number;
    const seq = this.appliedSeq + 1;
    const record = encodeRecord({ seq, statements });
    try {
      writeAll(fd, record);
      fs.fdatasyncSync(fd);
    } catch (error) {
      this.needsReload = true;
      try {
        // Do not leave a whole-but-unacknowledged record for others to apply.
        fs.ftruncateSync(fd, this.journalOffset);
      } catch {
        // A torn record is cut by the next writer; a whole one would be applied, though we reported failure.
      }
      throw new AvhError(
        'store-unavailable',
        `Could not write the state journal (${errnoCode(error)}); the change was not saved`,
        { statements: statements.length },
        { cause: error },
      );
    }
    this.appliedSeq = seq;
    this.journalOffset += record.length;
    if (this.appliedSeq - this.journalBase >= this.compactEvery || this.journalOffset >= MAX_JOURNAL_BYTES) {
      this.scheduleCompaction();
    }
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
        if (this.appliedSeq - this.journalBase >= this.compactEvery || this.journalOffset >= MAX_JOURNAL_BYTES) {
          this.compactLocked();
        }
      } catch (error) {
        this.log.warn('store.compaction.failed', { code: errnoCode(error) });
      } finally {
        lock.release();
      }
    });
  }

  /** Writes the whole database as the new snapshot, then starts an empty journal. Caller holds the lock. */
  private compactLocked(): void {
    const db = this.requireDb();
    const started = performance.now();
    // export() must run outside a transaction; older sql.js versions also reset pragmas while exporting.
    this.reserveFreePages(db);
    const bytes = db.export();
    this.applyPragmas(db);
    writeFileAtomic(this.path, bytes);
    writeFileAtomic(
      this.journalPath,
      encodeJournalHeader({ baseSeq: this.appliedSeq, lineage: this.lineage(db), snapshotLength: bytes.length, snapshotCrc: checksum(bytes) }),
    );
    this.attachJournal();
    this.journalBase = this.appliedSeq;
    this.log.info('store.compacted', { seq: this.appliedSeq, bytes: bytes.length, ms: Math.round((performance.now() - started) * 10) / 10 });
  }

  /**
   * Leaves ~2% spare pages on the snapshot's freelist. A process's first writes then reuse them: growing the
   * file instead makes sql.js copy the whole in-memory file (~100-150 ms at 64 MB), which would land on the
   * first write of every CLI invocation. Physical only: the logical content stays identical in every process.
   */
  private reserveFreePages(db: Database): void {
    const pageSize = Number(this.scalar(db, 'PRAGMA page_size'));
    const pageCount = Number(this.scalar(db, 'PRAGMA page_count'));
    const free = Number(this.scalar(db, 'PRAGMA freelist_count'));
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

  private migrateLocked(): void {
    const db = this.requireDb();
    const from = this.userVersion(db);
    if (from > SCHEMA_VERSION) throw this.newerSchemaError(from);
    if (from === SCHEMA_VERSION) return;
    for (let version = from; version < SCHEMA_VERSION; version++) {
      const { statements } = this.runTransaction((tx) => {
        for (const sql of MIGRATIONS[version]) tx.run(sql);
        tx.run(`PRAGMA user_version = ${version + 1}`);
        // Fixed once, as a literal, so every process replays the same id.
        if (this.lineage(db) === '' && this.tableNames(db).has('meta')) {
          tx.run("INSERT INTO meta (key, value) VALUES ('lineage', ?)", [randomUUID().replace(/-/g, '')]);
        }
      });
      this.appendLocked(statements);
    }
    // The snapshot file should carry the new schema, not only the journal.
    this.compactLocked();
    this.log.info('store.migrated', { from, to: SCHEMA_VERSION });
  }

  // ---- quarantine ----

  private removeLeftoverTemps(): void {
    // Temps belong to compactions; we hold the lock, so any that exist were left by a crash.
    for (const name of fs.readdirSync(this.dir)) {
      if (/^state\.(sqlite|journal)\.tmp-\d+$/.test(name)) fs.rmSync(path.join(this.dir, name), { force: true });
    }
  }

  /** Moves the snapshot and journal aside under one timestamp; returns the snapshot's (or journal's) new path. */
  private quarantineLocked(damage: StoreDamage): string {
    this.closeJournal();
    this.db?.close();
    this.db = null;
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    let suffix = `corrupt-${stamp}`;
    for (let n = 1; fs.existsSync(`${this.path}.${suffix}`) || fs.existsSync(`${this.journalPath}.${suffix}`); n++) {
      suffix = `corrupt-${stamp}-${n}`;
    }
    let movedTo = '';
    for (const file of [this.journalPath, this.path]) {
      if (!fs.existsSync(file)) continue;
      try {
        fs.renameSync(file, `${file}.${suffix}`);
      } catch (error) {
        throw new AvhError('store-unavailable', `The state database is damaged and could not be moved aside (${errnoCode(error)})`, {
          reason: damage.reason,
        });
      }
      movedTo = `${file}.${suffix}`;
    }
    fsyncDirectory(this.dir);
    this.log.warn('store.quarantined', { reason: damage.reason, what: damage.what });
    return movedTo;
  }
}
