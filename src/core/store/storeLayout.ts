/**
 * The store's file names and write limits, apart from the sql.js code so the CLI's hook fast path (which appends
 * records without loading sql.js, src/core/store/journalAppend.ts) shares them without loading the engine.
 */
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
/** Compact early when large blobs make the journal big even with few records. */
export const MAX_JOURNAL_BYTES = 8 * 1024 * 1024;
