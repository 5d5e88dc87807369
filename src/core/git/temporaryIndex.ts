import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomUuid } from '../randomId';
import type { LockLiveness } from '../store/lockLiveness';
import { processGit } from './gitRunner';
import type { GitRepository } from './repository';

/**
 * Temporary index files: the commit path stages into a copy of the index, never into the user's. They live in
 * `<stateDir>/tmp`, named after the process that made them, so a crash's leftovers can be told from live ones.
 */

/**
 * Temporary index files are named `index-<pid>-<start time or empty>-<uuid>` so leftovers of a dead process can be told
 * apart.
 */
const TEMP_INDEX_PREFIX = 'index-';
const TEMP_INDEX_NAME = /^index-(\d+)-(\d*)-[0-9a-f-]{36}(\.lock)?$/;

/** `<pid>-<start time>` of this process as the lock liveness provider sees it (start time empty where unknown). */
function ownIncarnation(liveness: LockLiveness): string {
  return `${process.pid}-${liveness.startTime(process.pid) ?? ''}`;
}

/**
 * Whether the process recorded as `pid` (with start time `start`, empty when unknown) is certainly gone, judged by
 * the same liveness provider as our lock files: the pid no longer exists, or it now names a process that started
 * at another time. A pid that exists with no start time to compare is alive (never guessed dead).
 */
export function recordedProcessGone(
  pid: number,
  start: string,
  liveness: LockLiveness = processGit().liveness(),
): boolean {
  if (pid === process.pid) return start !== '' && String(liveness.startTime(pid) ?? start) !== start;
  if (!liveness.pidExists(pid)) return true;
  if (start === '') return false;
  const now = liveness.startTime(pid);
  return now !== null && String(now) !== start;
}

/**
 * Housekeeping after a crash: temporary index copies (and their git locks) in `<stateDir>/tmp` whose creating
 * process is gone. Never touches one of a live process (its commit path may be using it). Returns how many it removed.
 */
export function removeOrphanedTemporaryIndexes(repo: GitRepository): number {
  const dir = path.join(repo.stateDir, 'tmp');
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const match = TEMP_INDEX_NAME.exec(name);
    if (!match || !recordedProcessGone(Number(match[1]), match[2], repo.git.liveness())) continue;
    fs.rmSync(path.join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

/**
 * A temporary index beside the real one, seeded from a copy of it (keeping its mtime, so git's racy-entry checks stay
 * right).
 */
export class TemporaryIndex {
  private constructor(
    readonly file: string,
    readonly seededFrom: fs.BigIntStats | null,
  ) {}

  /** A new copy of the repository's index (none yet: an empty one) in `<stateDir>/tmp`; the real one is only read. */
  static create(repo: GitRepository): TemporaryIndex {
    const dir = path.join(repo.stateDir, 'tmp');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${TEMP_INDEX_PREFIX}${ownIncarnation(repo.git.liveness())}-${randomUuid()}`);
    const real = path.join(repo.gitDir, 'index');
    let stat: fs.BigIntStats | null = null;
    try {
      stat = fs.statSync(real, { bigint: true });
      fs.copyFileSync(real, file);
      // Never newer than the original: an index newer than a same-second edit would hide that edit from git.
      const mtime = Number(stat.mtimeNs / 1000n) / 1e6 - 1e-6;
      const atime = Number(stat.atimeNs / 1000n) / 1e6;
      fs.utimesSync(file, atime, mtime);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      stat = null; // no index yet (fresh repository): git starts from an empty one
    }
    return new TemporaryIndex(file, stat);
  }

  /** A second copy of the same seed (same bytes and times), for a git command that must not share this one's file. */
  twin(repo: GitRepository): TemporaryIndex {
    const name = `${TEMP_INDEX_PREFIX}${ownIncarnation(repo.git.liveness())}-${randomUuid()}`;
    const file = path.join(repo.stateDir, 'tmp', name);
    if (this.seededFrom) {
      fs.copyFileSync(this.file, file);
      const stat = fs.statSync(this.file, { bigint: true });
      fs.utimesSync(file, Number(stat.atimeNs / 1000n) / 1e6, Number(stat.mtimeNs / 1000n) / 1e6);
    }
    return new TemporaryIndex(file, this.seededFrom);
  }

  /** The environment that points a git command at this index instead of the real one. */
  get env(): Record<string, string> {
    return { GIT_INDEX_FILE: this.file };
  }

  /** Removes the copy and any lock git left beside it. Safe to call more than once. */
  dispose(): void {
    fs.rmSync(this.file, { force: true });
    fs.rmSync(`${this.file}.lock`, { force: true });
  }
}
