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
import type { SqlJsStatic } from 'sql.js';
import { AvhError } from '../errors';
import { silentLog, type EventLog } from '../log';
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
import { lineage } from './databaseMeta';
import { journalFileKey, type JournalState } from './journalAppend';
import { JournalFile } from './journalFile';
import { acquireLock, type LockHandle } from './pidLock';
import { moveAside, removeLeftoverTemps } from './quarantine';
import { isThenable, type StoreReader, type StoreTx } from './readOnlyGuard';
import { DEFAULT_COMPACT_EVERY, JOURNAL_FILE, LOCK_FILE, SNAPSHOT_FILE } from './storeLayout';
import { loadSqlJs } from './sqlJsLoader';
import { READ_RETRY_DELAYS_MS, StoreDamage, errnoCode, retryUnreadable, type StoreFileSystem } from './storeFiles';
import { StoreReplica } from './storeReplica';

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

/**
 * The repository's state store: one job at a time in this process, each under the cross-process lock and caught up
 * with every write acknowledged elsewhere (the copy of the database and its journal: storeReplica.ts).
 */
export class DurableStore {
  readonly path: string;
  private readonly dir: string;
  private readonly replica: StoreReplica;
  private readonly lockPath: string;
  private readonly lockTimeoutMs: number;
  private readonly log: EventLog;
  private readonly retryDelays: readonly number[];
  private closed = false;
  private compactionQueued = false;
  private queue: Promise<unknown> = Promise.resolve();
  private lastJobEnd = Number.NEGATIVE_INFINITY;

  private constructor(sql: SqlJsStatic, dir: string, options: StoreOptions) {
    this.path = path.join(dir, SNAPSHOT_FILE);
    this.dir = dir;
    const files = options.files ?? fs;
    this.lockPath = path.join(dir, LOCK_FILE);
    this.lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
    this.log = options.log ?? silentLog;
    this.retryDelays = options.readRetryDelaysMs ?? READ_RETRY_DELAYS_MS;
    this.replica = new StoreReplica({
      sql,
      dir,
      path: this.path,
      files,
      journal: new JournalFile(path.join(dir, JOURNAL_FILE), files),
      archive: new TurnArchive(sql, path.join(dir, ARCHIVE_FILE), files),
      log: this.log,
      retryDelays: this.retryDelays,
      compactEvery: Math.max(1, Math.floor(options.compactEvery ?? DEFAULT_COMPACT_EVERY)),
      archiveKeep: Math.max(0, Math.floor(options.archiveKeep ?? DEFAULT_ARCHIVE_KEEP)),
      archiveMargin: Math.max(1, Math.floor(options.archiveMargin ?? DEFAULT_ARCHIVE_MARGIN)),
      onCompactionDue: () => this.scheduleCompaction(),
    });
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
            store.replica.loadLocked();
          } catch (error) {
            if (!(error instanceof StoreDamage)) throw error;
            quarantined = { movedTo: store.replica.quarantineLocked(error), reason: error.reason };
            store.replica.loadLocked();
          }
        },
        dir,
        store.retryDelays,
      );
      store.replica.migrateLocked();
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
    return this.caughtUpUnderLock('state-store-write', () => this.replica.commitLocked(fn));
  }

  /**
   * Runs `fn` synchronously against a state that includes every write acknowledged (by any process) before the call.
   * `history`: `turns` includes the archived turns (see ReadOptions).
   */
  read<T>(fn: (reader: StoreReader) => T, options: ReadOptions = {}): Promise<T> {
    return this.enqueue(async () => {
      this.assertUsable();
      if (!this.replica.isCurrent()) {
        const lock = await this.lock('state-store-read');
        try {
          await this.replica.catchUpWithRetries();
        } finally {
          lock.release();
        }
      }
      const reader = this.replica.reader();
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
      const reader = this.replica.reader();
      if (archiveIdentities(reader).length === 0) return 0;
      const rows = await this.withHistoryView(true, () => archivedRows(reader, pick(reader)));
      if (rows.length === 0) return 0;
      this.replica.commitLocked((tx) => promoteRows(tx, rows));
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
      const db = this.replica.requireDb();
      const result = fn(this.replica.reader());
      const journal = {
        lineage: lineage(db),
        baseSeq: this.replica.journal.base,
        lastSeq: this.replica.appliedSeq,
        key: journalFileKey(this.dir, this.replica.journal.statOpen()),
      };
      return { result, journal };
    });
  }

  /** True while the history archive is loaded in this process (tests check the hot path never loads it). */
  get archiveLoaded(): boolean {
    return this.replica.archive.attached;
  }

  /**
   * Runs `fn` with `turns` reading hot ∪ archive. A damaged, foreign or missing archive file is moved aside (never
   * deleted), the hot database stops naming it, and the read fails with a notice saying so; newer history is intact.
   */
  private async withHistoryView<T>(locked: boolean, fn: () => T): Promise<T> {
    const db = this.replica.requireDb();
    try {
      await retryUnreadable(() => this.replica.archive.openView(db), this.dir, this.retryDelays);
    } catch (error) {
      if (!(error instanceof ArchiveDamage)) throw error;
      await this.quarantineArchive(locked, error); // returns only when, caught up, the archive opened after all
    }
    try {
      return fn();
    } finally {
      this.replica.archive.closeView(db);
    }
  }

  private async quarantineArchive(locked: boolean, damage: ArchiveDamage): Promise<void> {
    const lock = locked ? null : await this.lock('state-archive-quarantine');
    try {
      if (!locked) await this.replica.catchUpWithRetries();
      const db = this.replica.requireDb();
      // Another process may have rotated since: only a file that still does not match is moved aside.
      try {
        this.replica.archive.openView(db);
        return;
      } catch (error) {
        if (!(error instanceof ArchiveDamage)) throw error;
      }
      this.replica.archive.detach(db);
      const movedTo = fs.existsSync(this.replica.archive.path)
        ? moveAside(this.dir, [this.replica.archive.path], new StoreDamage('corrupt', damage.what))
        : null;
      this.replica.commitLocked(forgetArchive);
      this.log.error('store.archive.quarantined', { what: damage.what, movedAside: movedTo !== null });
      throw new AvhError(
        'store-unavailable',
        movedTo
          ? `The history archive (older turns) was damaged (${damage.what}); it was moved aside to ${movedTo}. ` +
              'Recent history is intact; older turns are listed from their commits only.'
          : 'The history archive (older turns) is missing; recent history is intact, older turns are listed from ' +
              'their commits only.',
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

  /** Queued, under the cross-process lock (`purpose` names it), caught up with every acknowledged write: then `fn`. */
  private caughtUpUnderLock<T>(purpose: string, fn: () => T | Promise<T>): Promise<T> {
    return this.enqueue(async () => {
      this.assertUsable();
      const lock = await this.lock(purpose);
      try {
        await this.replica.catchUpWithRetries();
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
    if (this.replica.failure) throw this.replica.failure;
  }

  private dispose(): void {
    this.closed = true;
    this.replica.dispose();
  }

  /** Compaction runs as its own queued job so the transaction that triggered it is acknowledged first. */
  private scheduleCompaction(): void {
    if (this.compactionQueued) return;
    this.compactionQueued = true;
    void this.enqueue(async () => {
      this.compactionQueued = false;
      if (this.closed || this.replica.failure) return;
      let lock: LockHandle;
      try {
        lock = await this.lock('state-store-compact');
      } catch {
        return; // busy: the next write retries
      }
      try {
        this.replica.catchUpLocked();
        if (this.replica.compactionDue()) {
          this.replica.rotateIfDueLocked();
          // A rotation whose journal append failed left memory that must not become the snapshot: reload first.
          if (this.replica.needsReload) this.replica.reloadLocked('rotation-failed');
          this.replica.compactLocked();
        }
      } catch (error) {
        this.log.warn('store.compaction.failed', { code: errnoCode(error) });
      } finally {
        lock.release();
      }
    });
  }
}
