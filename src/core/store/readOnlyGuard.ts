/**
 * The only two ways code reaches the database: guarded reads, which refuse to modify it (a write there would
 * bypass the journal and exist only in this process's memory), and recorded transactions, whose `run`
 * statements become the journal record.
 */
import type { BindParams, Database } from 'sql.js';
import { AvhError } from '../errors';
import { scalar, SET_JOURNAL_SEQ } from './databaseMeta';
import type { JournalStatement, SqlParams, SqlValue } from './journal';

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

/** The store owns transaction boundaries; these inside tx.run would break the journal's record = transaction rule. */
const FORBIDDEN_IN_TX = /^\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE|ATTACH|DETACH|VACUUM)\b/i;

/** Whether `value` looks like a promise (a read or transaction callback must not return one). Pure. */
export function isThenable(value: unknown): boolean {
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

/** Thrown (after the caller's memory is marked for reload) when a read changed the database. */
export class ReadModifiedDatabase extends AvhError {
  constructor() {
    super('invalid-input', 'Store reads must not modify the database; use tx.run for writes');
  }
}

/** Runs a read; throws ReadModifiedDatabase if it changed anything. */
export function guardedQuery<T>(db: Database, sql: string, params: SqlParams | undefined, first: boolean): T[] {
  const before = scalar(db, 'SELECT total_changes()');
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
  if (scalar(db, 'SELECT total_changes()') !== before) throw new ReadModifiedDatabase();
  return rows;
}

/** The StoreReader over `query` (get: the first row, all: every row); reads only through it. */
export function readerOf(query: <T>(sql: string, params: SqlParams | undefined, first: boolean) => T[]): StoreReader {
  return {
    get: <R>(sql: string, params?: SqlParams) => query<R>(sql, params, true)[0],
    all: <R>(sql: string, params?: SqlParams) => query<R>(sql, params, false),
  };
}

export interface RecordedTransaction<T> {
  result: T;
  statements: JournalStatement[];
}

/**
 * Runs `fn` in one SQLite transaction and records its writes. `nextSeq` is stamped into meta in the same
 * transaction when anything was written. `onUntrusted` is called when SQLite ended the transaction itself:
 * later statements may have autocommitted outside the journal, so memory is no longer trusted.
 */
export function recordTransaction<T>(
  db: Database,
  fn: (tx: StoreTx) => T,
  nextSeq: number,
  query: <R>(sql: string, params: SqlParams | undefined, first: boolean) => R[],
  onUntrusted: () => void,
): RecordedTransaction<T> {
  const statements: JournalStatement[] = [];
  let active = true;
  const guard = () => {
    if (!active) throw new AvhError('invalid-input', 'A store transaction was used after it finished');
  };
  const tx: StoreTx = {
    run: (sql, params) => {
      guard();
      if (FORBIDDEN_IN_TX.test(sql))
        throw new AvhError('invalid-input', 'tx.run cannot control transactions or attach databases');
      db.run(sql, (params ?? undefined) as BindParams);
      // Copied now: a caller reusing one params array across runs must not change what was journaled.
      statements.push(params === undefined ? { sql } : { sql, params: copyParams(params) });
    },
    get: <R>(sql: string, params?: SqlParams) => {
      guard();
      return query<R>(sql, params, true)[0];
    },
    all: <R>(sql: string, params?: SqlParams) => {
      guard();
      return query<R>(sql, params, false);
    },
  };
  db.exec('BEGIN');
  try {
    const result = fn(tx);
    if (isThenable(result)) {
      (result as Promise<unknown>).then(undefined, () => undefined);
      throw new AvhError(
        'invalid-input',
        'DurableStore.transaction callback must be synchronous (it returned a Promise)',
      );
    }
    if (statements.length > 0) db.run(SET_JOURNAL_SEQ, [String(nextSeq)]);
    db.exec('COMMIT');
    return { result, statements };
  } catch (error) {
    try {
      db.exec('ROLLBACK');
    } catch {
      onUntrusted();
    }
    throw error;
  } finally {
    active = false;
  }
}
