/**
 * Appending one record to the store's journal without sql.js, for the CLI's hook fast path (docs/design.md,
 * "Fast hook events"). The record is the same bytes DurableStore.transaction would append, under the same lock
 * file and protocol, with the next sequence number, fsynced; every process (the extension, the next CLI) applies
 * it by replaying the journal as it applies any other process's write. It is written only when the journal on
 * disk is exactly the state the caller's facts describe, and never when a compaction is due (the full store
 * compacts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { failpoint } from '../failpoints';
import { encodeRecord, type JournalStatement } from './journal';
import { JournalFile } from './journalFile';
import { acquireLock } from './pidLock';
import { DEFAULT_COMPACT_EVERY, JOURNAL_FILE, LOCK_FILE, MAX_JOURNAL_BYTES, SNAPSHOT_FILE } from './storeLayout';

/** A journal state a process saw under the lock: what it held and the files' identity then. */
export interface JournalState {
  lineage: string;
  /** The sequence number the journal continues from (its header's). */
  baseSeq: number;
  /** The last record applied. */
  lastSeq: number;
  /**
   * Identity of the journal and snapshot files (device, inode, size, change time): any append, truncation or compaction
   * changes it.
   */
  key: string;
}

function statKey(st: fs.BigIntStats | null): string {
  return st ? `${st.dev}:${st.ino}:${st.size}:${st.ctimeNs}` : '-';
}

function statOrNull(file: string): fs.BigIntStats | null {
  try {
    return fs.statSync(file, { bigint: true });
  } catch {
    return null;
  }
}

/**
 * The identity of the store's files in `dir` now; `journal` is the open journal's own stat when the caller holds it.
 */
export function journalFileKey(
  dir: string,
  journal: fs.BigIntStats | null = statOrNull(path.join(dir, JOURNAL_FILE)),
): string {
  return `${statKey(journal)}/${statKey(statOrNull(path.join(dir, SNAPSHOT_FILE)))}`;
}

export type AppendOutcome =
  | { kind: 'appended'; state: JournalState }
  /** Another process wrote (or compacted, or cut a torn tail) since the state was seen: nothing was written. */
  | { kind: 'stale' }
  /** The record would make a compaction due: nothing was written; the full store writes it and compacts. */
  | { kind: 'compaction-due' };

/**
 * Appends `statements` as record `expected.lastSeq + 1` under the store's write lock, only if the journal is
 * still exactly `expected`. Resolves once the record is fsynced; a crash before that leaves at most a torn tail,
 * which every reader treats as never acknowledged and cuts off.
 */
export async function appendRecordIfUnchanged(
  dir: string,
  expected: JournalState,
  statements: JournalStatement[],
  lockTimeoutMs: number,
): Promise<AppendOutcome> {
  const record = encodeRecord({ seq: expected.lastSeq + 1, statements });
  const lock = await acquireLock(path.join(dir, LOCK_FILE), { timeoutMs: lockTimeoutMs, purpose: 'state-store-write' });
  try {
    const journal = new JournalFile(path.join(dir, JOURNAL_FILE), fs);
    try {
      journal.attach();
    } catch {
      return { kind: 'stale' };
    }
    try {
      const st = journal.statOpen();
      const onDisk = statOrNull(journal.path);
      if (!onDisk || onDisk.ino !== st.ino || onDisk.dev !== st.dev || journalFileKey(dir, st) !== expected.key)
        return { kind: 'stale' };
      // The header too: a file system with coarse change times could show a new journal of an old one's size and inode.
      const header = journal.readHeader();
      if (!header || header.baseSeq !== expected.baseSeq || header.lineage !== expected.lineage)
        return { kind: 'stale' };
      if (
        expected.lastSeq + 1 - expected.baseSeq >= DEFAULT_COMPACT_EVERY ||
        Number(st.size) + record.length >= MAX_JOURNAL_BYTES
      ) {
        return { kind: 'compaction-due' };
      }
      journal.offset = Number(st.size);
      if (typeof AVH_PRODUCTION_BUILD === 'undefined') tearAppendAtFailpoint(journal.path, record);
      journal.append(record);
      failpoint('hook-fast:after-append');
      // Acknowledged: nothing after this may throw (the caller would take the event for not recorded).
      let key = '';
      try {
        key = journalFileKey(dir, journal.statOpen());
      } catch {
        // An empty key matches no journal: the facts written from this state are simply stale.
      }
      return { kind: 'appended', state: { ...expected, lastSeq: expected.lastSeq + 1, key } };
    } finally {
      quietly(() => journal.close());
    }
  } finally {
    quietly(() => lock.release());
  }
}

/** A lock file or descriptor that cannot be released goes with this process (a lock naming a dead process is stale). */
function quietly(release: () => void): void {
  try {
    release();
  } catch {
    // see above
  }
}

/** Test-only (compiled out of the bundles users get): half the record reaches the file, then the process dies. */
function tearAppendAtFailpoint(file: string, record: Buffer): void {
  if (process.env.AVH_FAILPOINT !== 'hook-fast:torn-append') return;
  fs.appendFileSync(file, record.subarray(0, record.length >> 1));
  fs.fdatasyncSync(fs.openSync(file, 'r'));
  failpoint('hook-fast:torn-append');
}
