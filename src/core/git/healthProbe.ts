import * as fs from 'node:fs';
import * as path from 'node:path';
import { simpleGit, SimpleGit } from 'simple-git';
import { GitRepository } from './repository';
import { baseEnv, GitCommandError, gitExecutable, messageFor, reasonFromStderr, runGit } from './gitRunner';
import type { GateFacts } from './repositoryGate';
import {
  healthFromStatus,
  missingHealth,
  operationsInProgress,
  PROBE_STATUS_ARGS,
  repositoryExists,
  RepositoryHealth,
} from './statusProbe';

export { GIT_OPERATIONS, operationsInProgress, parseStatus, PROBE_STATUS_ARGS } from './statusProbe';
export type { GitOperation, RepositoryHealth, WorkingTreeCounts } from './statusProbe';

/**
 * The single source of truth for repository health (SPEC §5.5): restore preflight, failure disposition,
 * reconciliation and recovery acceptance all call this. Read-only: GIT_OPTIONAL_LOCKS=0 keeps status from
 * rewriting the index, so the probe never changes a byte of the repository. Uncommitted changes inside a
 * submodule's own working tree are not ours to capture or restore (we record submodules by commit), so they
 * do not count as dirt; a submodule checked out at another commit does.
 */
export async function inspectRepositoryHealth(repo: GitRepository): Promise<RepositoryHealth> {
  if (!repositoryExists(repo)) return missingHealth();
  const args = [...PROBE_STATUS_ARGS];
  let stdout: string;
  try {
    stdout = await probeGit(repo.root).raw(args);
  } catch (error) {
    const stderr = error instanceof Error ? error.message : '';
    const reason = reasonFromStderr(stderr);
    throw new GitCommandError(reason, args, 128, messageFor(reason, args, 128), stderr);
  }
  return healthFromStatus(repo, stdout);
}

/**
 * The probe runs through simple-git, as the project's stack asks: `status` always prints (at least the branch
 * header), so simple-git's wait for silent commands never applies (bench/RESULTS.md). Completion on `close` only,
 * our stripped environment minus the variables simple-git refuses to pass (editor, pager, askpass: status uses
 * none of them), and GIT_OPTIONAL_LOCKS=0 so the probe never rewrites the index.
 */
function probeGit(root: string): SimpleGit {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(baseEnv({ GIT_OPTIONAL_LOCKS: '0' }))) {
    if (value === undefined || SIMPLE_GIT_REFUSED.test(name)) continue;
    env[name] = value;
  }
  // The resolved absolute git (never one from the repository); simple-git vets binary names by character class,
  // so a path outside it (spaces, say) needs its explicit opt-in — the path is ours, not the repository's.
  const binary = gitExecutable(root);
  const unsafe = /^([a-z]:)?([a-z0-9/.\\_~-]+)$/i.test(binary) ? {} : { unsafe: { allowUnsafeCustomBinary: true } };
  return simpleGit({
    baseDir: root,
    binary,
    ...unsafe,
    maxConcurrentProcesses: 1,
    completion: { onClose: true, onExit: false },
    timeout: { block: 120_000 },
  }).env(env);
}

const SIMPLE_GIT_REFUSED =
  /^(editor|pager|prefix|ssh_askpass|git_(askpass|editor|pager|sequence_editor|exec_path|external_diff|proxy_command|template_dir|ssh|ssh_command|config\w*))$/i;

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
  const oid = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
  try {
    let common = gitDir;
    try {
      common = path.resolve(gitDir, fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim());
    } catch {
      /* not a linked worktree */
    }
    let value: string | null = null;
    try {
      value = fs.readFileSync(path.join(common, ref), 'utf8').trim();
    } catch {
      const packed = fs.readFileSync(path.join(common, 'packed-refs'), 'utf8');
      const line = packed.split('\n').find((l) => l.endsWith(` ${ref}`));
      value = line ? line.slice(0, line.indexOf(' ')) : null;
    }
    return value && oid.test(value) ? { branch: ref.slice('refs/heads/'.length), head: value } : null;
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
    [head = null, ...resolved] = (await runGit(repo.root, ['rev-parse', 'HEAD', ...revs])).stdout.trim().split('\n');
  } catch {
    head = null; // unborn branch
  }
  let unmerged = false;
  if (operations.length === 0 && (indexLocked || !headRef || !head)) {
    unmerged =
      (await runGit(repo.root, ['ls-files', '--unmerged', '-z'], { env: { GIT_OPTIONAL_LOCKS: '0' } })).stdout.length >
      0;
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
