import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitCommandError } from './gitErrors';
import { readRef } from './refUpdate';
import type { GitRepository } from './repository';
import { recordedProcessGone, type TemporaryIndex } from './temporaryIndex';

/**
 * Making a temporary index the repository's index after a commit path moved the branch, under git's own
 * index.lock protocol, and the marker that records an index still to repair when that could not be done.
 */

const INDEX_REPAIR_FILE = 'index-repair';

/** Records, before the ref moves, that the index must follow `commit` on `ref` (what reconciliation repairs). */
export function recordIndexRepair(repo: GitRepository, ref: string, commit: string): void {
  fs.mkdirSync(repo.stateDir, { recursive: true });
  fs.writeFileSync(path.join(repo.stateDir, INDEX_REPAIR_FILE), `${ref} ${commit}\n`);
}

/** Drops the marker: the index followed, or the ref never moved. */
export function clearIndexRepair(repo: GitRepository): void {
  fs.rmSync(path.join(repo.stateDir, INDEX_REPAIR_FILE), { force: true });
}

/** How long an install waits for another process's index.lock to go (an editor refreshing the index holds it). */
export const INDEX_LOCK_WAIT_MS = 2000;
const INDEX_LOCK_POLL_MS = 25;

/**
 * After the branch moved: the index becomes the new commit's tree. While another process holds index.lock it waits
 * (bounded: INDEX_LOCK_WAIT_MS); when the index cannot be swapped in (still locked, or the index changed
 * meanwhile), git rebuilds it from HEAD (`reset -q`: staging only, files kept); when even that fails, the marker
 * stays for reconciliation. Never throws: the commit stands either way.
 */
export async function followIndex(repo: GitRepository, index: TemporaryIndex, durable: boolean): Promise<boolean> {
  try {
    let outcome = tryInstallIndex(repo, index, durable);
    for (let waited = 0; outcome === 'locked' && waited < INDEX_LOCK_WAIT_MS; waited += INDEX_LOCK_POLL_MS) {
      await new Promise((resolve) => setTimeout(resolve, INDEX_LOCK_POLL_MS));
      outcome = tryInstallIndex(repo, index, durable);
    }
    if (outcome !== 'installed') await repo.git.run(repo.root, ['reset', '-q']);
    clearIndexRepair(repo);
    return true;
  } catch {
    return false;
  }
}

/** Whether a commit path left an index repair for reconciliation (a marker file; no git process). */
export function indexRepairPending(repo: GitRepository): boolean {
  return fs.existsSync(path.join(repo.stateDir, INDEX_REPAIR_FILE));
}

/**
 * Reconciliation: finishes an index repair a failed or crashed commit path left recorded. Only while the ref
 * still holds that commit and HEAD is on it; otherwise the user moved on and the marker is dropped. Returns
 * whether it repaired the index.
 */
export async function repairRecordedIndex(repo: GitRepository): Promise<boolean> {
  const marker = path.join(repo.stateDir, INDEX_REPAIR_FILE);
  let text: string;
  try {
    text = fs.readFileSync(marker, 'utf8');
  } catch {
    return false;
  }
  const [ref, commit] = text.trim().split(' ');
  const onIt = ref !== undefined && (await readRef(repo, 'HEAD')) === commit && (await readRef(repo, ref)) === commit;
  if (onIt) {
    try {
      await repo.git.run(repo.root, ['reset', '-q']);
    } catch (error) {
      // Another process still holds index.lock (after the client's own retries): the marker waits for the next
      // command; nothing of ours needs the real index meanwhile (the commit path stages into a copy).
      if (error instanceof GitCommandError && error.reason === 'index-locked') return false;
      throw error;
    }
  }
  fs.rmSync(marker, { force: true });
  return onIt;
}

/**
 * Makes `index` the repository's index, under git's own index.lock protocol, but only if the real index is
 * unchanged since `index` was copied from it; otherwise the user's index is left for git to refresh.
 * Returns false when the lock was held or the index changed (the commit stands; only staging info differs).
 */
export function installIndex(repo: GitRepository, index: TemporaryIndex, durable = false): boolean {
  return tryInstallIndex(repo, index, durable) === 'installed';
}

/** installIndex, telling a held lock (worth waiting for) from an index that changed (never installed). */
function tryInstallIndex(
  repo: GitRepository,
  index: TemporaryIndex,
  durable: boolean,
): 'installed' | 'locked' | 'changed' {
  const real = path.join(repo.gitDir, 'index');
  const lock = `${real}.lock`;
  let fd: number;
  try {
    fd = fs.openSync(lock, 'wx');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EEXIST' ? 'locked' : 'changed';
  }
  try {
    // Name ourselves in the lock so a crash here leaves a lock that clearOwnStaleIndexLock can prove is ours.
    fs.writeSync(fd, `${INDEX_LOCK_MARKER}${process.pid}:${repo.git.liveness().startTime(process.pid) ?? ''}\n`);
    const now = statOrNull(real);
    const before = index.seededFrom;
    const unchanged =
      before === null
        ? now === null
        : now !== null && now.ino === before.ino && now.size === before.size && now.mtimeNs === before.mtimeNs;
    if (!unchanged) return 'changed';
    if (durable) {
      const tfd = fs.openSync(index.file, 'r');
      try {
        fs.fsyncSync(tfd);
      } finally {
        fs.closeSync(tfd);
      }
    }
    fs.renameSync(index.file, real);
    return 'installed';
  } finally {
    fs.closeSync(fd);
    fs.rmSync(lock, { force: true });
  }
}

const INDEX_LOCK_MARKER = 'agent-versions:';

/**
 * Removes `.git/index.lock` only when it is one that installIndex created and its process is certainly gone (a
 * SIGKILL in that instant). Any other index.lock belongs to git or another tool and is left alone. Returns whether it
 * removed one.
 */
export function clearOwnStaleIndexLock(repo: GitRepository): boolean {
  const lock = path.join(repo.gitDir, 'index.lock');
  let text: string;
  try {
    text = fs.readFileSync(lock, 'utf8');
  } catch {
    return false;
  }
  const match = new RegExp(`^${INDEX_LOCK_MARKER}(\\d+):(\\d*)\n$`).exec(text);
  if (!match) return false;
  // Judged by the lock liveness provider: a holder whose start time is unknown (off Linux) is alive while its pid
  // exists.
  if (!recordedProcessGone(Number(match[1]), match[2], repo.git.liveness())) return false;
  fs.rmSync(lock, { force: true });
  return true;
}

function statOrNull(p: string): fs.BigIntStats | null {
  try {
    return fs.statSync(p, { bigint: true });
  } catch {
    return null;
  }
}
