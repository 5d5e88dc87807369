import * as fs from 'node:fs';
import * as path from 'node:path';
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

/** The git executable a spawn of `git` would start: the first match on PATH (no process started). */
export function findGitExecutable(env: NodeJS.ProcessEnv = process.env): string | null {
  const names = process.platform === 'win32' ? ['git.exe', 'git.cmd'] : ['git'];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const name of names) {
      const candidate = path.resolve(dir, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) return candidate;
      } catch {
        // not here
      }
    }
  }
  return null;
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
    quarantined = fs.readdirSync(repo.stateDir).filter((n) => n.startsWith(`${SNAPSHOT_FILE}.corrupt-`)).sort();
  } catch {
    // no state directory yet
  }
  return { dir: repo.stateDir, snapshotBytes: size(SNAPSHOT_FILE), journalBytes: size(JOURNAL_FILE), quarantined };
}
