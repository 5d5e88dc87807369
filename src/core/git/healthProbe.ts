import * as fs from 'node:fs';
import * as path from 'node:path';
import { commonGitDir } from './gitDirs';
import { hiddenEntryCount } from './indexFlags';
import { FULL_OID } from '../domain/objectId';
import type { GitRepository } from './repository';
import type { GateFacts } from './repositoryGate';
import {
  healthFromStatus,
  missingHealth,
  operationsInProgress,
  PROBE_ENV,
  repositoryExists,
  RepositoryHealth,
  runProbeStatus,
} from './statusProbe';

export { GIT_OPERATIONS, operationsInProgress, parseStatus, PROBE_STATUS_ARGS } from './statusProbe';
export type { GitOperation, RepositoryHealth, WorkingTreeCounts } from './statusProbe';

/**
 * The single source of truth for repository health (docs/product-contract.md §5.5): restore preflight, failure
 * disposition, reconciliation and recovery acceptance all call this. Read-only: GIT_OPTIONAL_LOCKS=0 keeps status from
 * rewriting the index, so the probe never changes a byte of the repository. Uncommitted changes inside a
 * submodule's own working tree are not ours to capture or restore (we record submodules by commit), so they
 * do not count as dirt; a submodule checked out at another commit does.
 *
 * It runs through the repository's git client like every other command, no longer through simple-git. Measured
 * on this project's machine (2 cores, load 6-9), both in one process alternating, p50 simple-git → client: 200
 * files 5.5 → 5.0 ms and 6.1 → 5.8 ms, 2,000 files 10.3 → 9.0 ms and 10.7 → 9.8 ms (101 runs); 20,000 files
 * 96.4 → 101.5 ms, and with each side's launcher started 80.0 → 75.4 ms (41 runs). The same within noise:
 * `status` always prints, so simple-git's 50 ms wait after silent commands (bench §2.5) never applied. What
 * decided: loading simple-git costs 22-77 ms here (every activation and every full CLI command; 150 KB of each
 * bundle), it spawned in the extension host itself where the client uses the launcher, and it needed an
 * environment filter and an error conversion of its own beside the one stderr table.
 */
export async function inspectRepositoryHealth(
  repo: GitRepository,
  started?: Promise<string>,
): Promise<RepositoryHealth> {
  if (!repositoryExists(repo)) return missingHealth();
  // `started`: the probe's status already run in this repository (statusProbe.ts takeHandedOverStatus); one that
  // failed (killed, say) is run again.
  const status = started
    ? started.catch(() => runProbeStatus(repo.root, repo.gitDir, repo.git))
    : runProbeStatus(repo.root, repo.gitDir, repo.git);
  const hiddenEntries = hiddenEntryCount(repo); // read while the status runs (statusProbe.ts inspectHealthDirect)
  return healthFromStatus(repo, await status, hiddenEntries);
}

/** How long a restore's probe waits for another process's index.lock to go before its gate refuses (issue 25). */
export const INDEX_LOCK_GATE_WAIT_MS = 2000;
const INDEX_LOCK_GATE_POLL_MS = 25;

/**
 * The probe for a gate where a held index.lock blocks (a restore writes the index): an editor refreshing the
 * index holds it for milliseconds, so while it is held the probe waits for it to go (bounded, one `stat` per
 * poll), then looks again. Still held after the wait: the health says so and the gate refuses, nothing changed.
 */
export async function inspectHealthPastIndexLock(
  repo: GitRepository,
  waitMs = INDEX_LOCK_GATE_WAIT_MS,
): Promise<RepositoryHealth> {
  const health = await inspectRepositoryHealth(repo);
  if (!health.indexLocked) return health;
  const lock = path.join(repo.gitDir, 'index.lock');
  const started = Date.now();
  while (fs.existsSync(lock) && Date.now() - started < waitMs)
    await new Promise((resolve) => setTimeout(resolve, INDEX_LOCK_GATE_POLL_MS));
  return fs.existsSync(lock) ? health : inspectRepositoryHealth(repo);
}

/** The full ref HEAD points at (`refs/heads/x`), read from the git dir's HEAD file; null when detached. */
export function readSymbolicHead(gitDir: string): string | null {
  try {
    const content = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
    const match = /^ref: (refs\/heads\/.+)$/.exec(content);
    return match ? match[1] : null;
  } catch {
    return null;
  }
}

/**
 * HEAD's branch and commit read from the ref files alone (loose ref in the common git dir, else packed-refs), no
 * git process. A guess for starting lookups early: callers compare it with what git itself reports (the health
 * probe) and discard it when they differ. Null whenever the files do not say it plainly (detached, unborn, a
 * symbolic or unusual ref, another ref storage).
 */
export function guessBranchTip(gitDir: string): { branch: string; head: string } | null {
  const ref = readSymbolicHead(gitDir);
  if (!ref) return null;
  try {
    const common = commonGitDir(gitDir);
    let value: string | null = null;
    try {
      value = fs.readFileSync(path.join(common, ref), 'utf8').trim();
    } catch {
      const packed = fs.readFileSync(path.join(common, 'packed-refs'), 'utf8');
      const line = packed.split('\n').find((l) => l.endsWith(` ${ref}`));
      value = line ? line.slice(0, line.indexOf(' ')) : null;
    }
    return value && FULL_OID.test(value) ? { branch: ref.slice('refs/heads/'.length), head: value } : null;
  } catch {
    return null;
  }
}

/**
 * The gate's facts without a working-tree scan, for the commit path: marker files, HEAD's file and one
 * rev-parse (which also resolves `revs`, e.g. trees the caller needs). Unmerged entries are looked up only when
 * a lower-ranked blocker would otherwise be named; otherwise the commit path's own write-tree finds them.
 * Read-only.
 */
export async function quickGateFacts(
  repo: GitRepository,
  revs: readonly string[] = [],
): Promise<{ facts: GateFacts; resolved: string[] }> {
  if (!repositoryExists(repo)) {
    return {
      facts: {
        exists: false,
        operations: [],
        unmerged: false,
        indexLocked: false,
        detached: false,
        unborn: false,
        head: null,
        branch: null,
      },
      resolved: [],
    };
  }
  const headRef = readSymbolicHead(repo.gitDir);
  const operations = operationsInProgress(repo.gitDir);
  const indexLocked = fs.existsSync(path.join(repo.gitDir, 'index.lock'));
  let head: string | null = null;
  let resolved: string[] = [];
  try {
    [head = null, ...resolved] = (await repo.git.run(repo.root, ['rev-parse', 'HEAD', ...revs])).stdout
      .trim()
      .split('\n');
  } catch {
    head = null; // unborn branch
  }
  let unmerged = false;
  if (operations.length === 0 && (indexLocked || !headRef || !head)) {
    unmerged = (await repo.git.run(repo.root, ['ls-files', '--unmerged', '-z'], { env: PROBE_ENV })).stdout.length > 0;
  }
  return {
    facts: {
      exists: true,
      operations,
      unmerged,
      indexLocked,
      detached: !headRef,
      unborn: !head,
      head,
      branch: headRef ? headRef.slice('refs/heads/'.length) : null,
    },
    resolved,
  };
}
