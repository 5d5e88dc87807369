import * as fs from 'node:fs';
import * as path from 'node:path';
import { safeMessage } from './errors';
import { gitExecutable } from './git/gitRunner';
import type { GitRepository } from './git/repository';
import { JOURNAL_FILE, SNAPSHOT_FILE } from './store/durableStore';

/**
 * Read-only facts for `agent-versions doctor` that the rest of the core has no reason to expose: where git is,
 * which version, whether commits have an identity, how big the state files are. Never changes a repository.
 */

/** The oldest git with `core.fsync` (2.36), which our durable commits rely on; older git silently ignores it. */
export const MIN_GIT_VERSION: readonly [number, number] = [2, 36];
/** The oldest git the test suite runs against. */
export const TESTED_GIT_VERSION: readonly [number, number] = [2, 39];

/**
 * The git Agent Version History runs for `folder` (the same resolution every git call uses: the configured path,
 * else PATH without relative entries or the repository's own folders), or why there is none. Starts no process.
 */
export function gitExecutableFor(folder: string): { path: string } | { problem: string } {
  try {
    return { path: gitExecutable(path.resolve(folder)) };
  } catch (error) {
    return { problem: safeMessage(error) };
  }
}

export { commitIdentity, gitVersion, versionAtLeast } from './git/gitFacts';
export type { GitVersion } from './git/gitFacts';

export interface StateFileFacts {
  dir: string;
  /** Bytes of the snapshot database and of its journal; null when the file does not exist. */
  snapshotBytes: number | null;
  journalBytes: number | null;
  /** Earlier state files moved aside as unreadable (`state.sqlite.corrupt-…`). */
  quarantined: string[];
}

/** Sizes of the repository's state files, from stat alone (the store is not opened or locked). */
export function stateFileFacts(repo: GitRepository): StateFileFacts {
  const size = (name: string) => {
    try {
      return fs.statSync(path.join(repo.stateDir, name)).size;
    } catch {
      return null;
    }
  };
  let quarantined: string[] = [];
  try {
    quarantined = fs
      .readdirSync(repo.stateDir)
      .filter((n) => n.startsWith(`${SNAPSHOT_FILE}.corrupt-`))
      .sort();
  } catch {
    // no state directory yet
  }
  return { dir: repo.stateDir, snapshotBytes: size(SNAPSHOT_FILE), journalBytes: size(JOURNAL_FILE), quarantined };
}
