import * as fs from 'node:fs';
import * as path from 'node:path';
import { untrackedCacheMode } from './statusProbe';

/**
 * Large repositories (issue 36; docs/design/git-and-performance.md, "Large repositories"): above this many index
 * entries, a repository without an untracked cache is told once (hook) and by doctor which setting makes every
 * event's one look at the working tree cheaper.
 */
export const LARGE_REPOSITORY_ENTRIES = 100_000;

/** LARGE_REPOSITORY_ENTRIES; the test build may lower it (AVH_TEST_LARGE_REPOSITORY_ENTRIES), never dist/. */
function largeAbove(): number {
  if (typeof AVH_PRODUCTION_BUILD === 'undefined' && process.env.AVH_TEST_LARGE_REPOSITORY_ENTRIES)
    return Number(process.env.AVH_TEST_LARGE_REPOSITORY_ENTRIES);
  return LARGE_REPOSITORY_ENTRIES;
}

/**
 * What `bench/RESULTS.md` measured for the setting ("Large repository", 250,000 files): the probe's status took
 * about half as long once the user's own `git status` had built the cache. Quoted, not measured again here: a cache
 * is only built by a status that may write the index, which doctor and our hooks never run.
 */
export const UNTRACKED_CACHE_GAIN =
  'measured at 250,000 files: the status each prompt and Stop waits for, 450 → 250 ms';

export const UNTRACKED_CACHE_FIX = 'git config core.untrackedCache true && git status';

export interface IndexScale {
  /** Entries in the index file (its header's count; 0 when there is no index). */
  entries: number;
  /** The mode of the untracked cache the index holds, or null. */
  untrackedCache: 'normal' | 'all' | null;
}

/** The index's size and its untracked cache, from the file's first 12 bytes and its end (no git process). */
export function indexScale(gitDir: string): IndexScale {
  let entries = 0;
  let fd: number | null = null;
  try {
    fd = fs.openSync(path.join(gitDir, 'index'), 'r');
    const header = Buffer.alloc(12);
    if (fs.readSync(fd, header, 0, 12, 0) === 12 && header.toString('latin1', 0, 4) === 'DIRC')
      entries = header.readUInt32BE(8);
  } catch {
    // no index: an empty repository
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
  return { entries, untrackedCache: entries > largeAbove() ? untrackedCacheMode(gitDir) : null };
}

/** Whether the repository is large (LARGE_REPOSITORY_ENTRIES). */
export function isLarge(scale: IndexScale): boolean {
  return scale.entries > largeAbove();
}

/** Whether the repository is large and git has nothing that makes its status cheaper (doctor's warning). */
export function needsUntrackedCache(scale: IndexScale): boolean {
  return isLarge(scale) && scale.untrackedCache === null;
}

/**
 * The hook's one line about a large repository, the first time only (a marker file in `stateDir`, created with
 * `wx`: two events at once print it once). Null when there is nothing to say, it was said, or the repository has no
 * state yet. Never throws: a hint must not fail an event.
 */
export function largeRepositoryHintOnce(gitDir: string, stateDir: string): string | null {
  const marker = path.join(stateDir, 'hint-large-repository');
  try {
    if (fs.existsSync(marker) || !fs.existsSync(stateDir)) return null;
    const scale = indexScale(gitDir);
    if (!needsUntrackedCache(scale)) return null;
    fs.writeFileSync(marker, '', { flag: 'wx', mode: 0o600 });
    return (
      `agent-versions: this repository tracks ${scale.entries.toLocaleString('en-US')} files; ` +
      `\`${UNTRACKED_CACHE_FIX}\` would make the look at the working tree before and after every turn cheaper ` +
      `(${UNTRACKED_CACHE_GAIN}). Said once; \`agent-versions doctor\` says it again.`
    );
  } catch {
    return null;
  }
}
