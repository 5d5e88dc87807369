/**
 * What `git status --porcelain=v2` and the marker files say about a working tree: the health probe's one command
 * and its parser. The probe (healthProbe.ts) and the CLI's hook fast path (which loads nothing else of the core;
 * docs/design.md "Fast hook events") run the same arguments and environment through the repository's git client.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GitClient } from './gitClient';
import { processGit } from './gitRunner';
import { hiddenEntryCount } from './indexFlags';
import type { GitRepository } from './repository';

export const GIT_OPERATIONS = ['merge', 'rebase', 'am', 'cherry-pick', 'revert', 'bisect'] as const;
export type GitOperation = (typeof GIT_OPERATIONS)[number];

export interface WorkingTreeCounts {
  staged: number;
  unstaged: number;
  untracked: number;
  unmerged: number;
}

/**
 * The paths one status listed, so a snapshot stages exactly those instead of looking at the whole tree again
 * (workingTreeSnapshot.ts; issue 36). With `--untracked-files=all`, git lists a folder only when it will not descend
 * into it (a nested repository).
 */
export interface StatusListing {
  /** Tracked paths whose file differs from the index (changed, deleted, type, a submodule's commit); unmerged ones. */
  changed: string[];
  /** New files: untracked, not ignored. */
  untracked: string[];
  /** Folders listed as untracked with a trailing slash (git would not descend into them), without it. */
  folders: string[];
}

/** Everything SPEC §5.5 asks of repository health, from one status call plus marker files. */
export interface RepositoryHealth {
  exists: boolean;
  /** HEAD's commit, or null when HEAD does not resolve (unborn branch, or repository missing). */
  head: string | null;
  /** The branch HEAD is attached to (short name), or null when detached. Present for an unborn branch too. */
  branch: string | null;
  detached: boolean;
  unborn: boolean;
  operations: GitOperation[];
  indexLocked: boolean;
  counts: WorkingTreeCounts;
  /** Folders with their own `.git` that are not registered submodules: never versioned, never counted as changes. */
  nestedRepositories: string[];
  clean: boolean;
  /**
   * Index entries whose changes `git status` cannot see (skip-worktree or assume-unchanged, file present): `clean`
   * says nothing about them, so a turn begun beside them takes a snapshot (localOnlyFiles.ts).
   */
  hiddenEntries: number;
  /** The paths the status listed (what a snapshot planned from this probe stages). */
  listed: StatusListing;
}

const NO_COUNTS: WorkingTreeCounts = { staged: 0, unstaged: 0, untracked: 0, unmerged: 0 };

/** The health of a repository whose folder or git dir is gone (a new object each time: callers may keep it). */
export function missingHealth(): RepositoryHealth {
  return {
    exists: false,
    head: null,
    branch: null,
    detached: false,
    unborn: false,
    operations: [],
    indexLocked: false,
    counts: { ...NO_COUNTS },
    nestedRepositories: [],
    clean: false,
    hiddenEntries: 0,
    listed: { changed: [], untracked: [], folders: [] },
  };
}

/** Whether the working folder and its git dir both still exist (two stats, no git process). */
export function repositoryExists(repo: GitRepository): boolean {
  return fs.existsSync(repo.root) && fs.existsSync(repo.gitDir);
}

/** Git operations in progress, from the marker files in the per-worktree git dir (no git process). */
export function operationsInProgress(gitDir: string): GitOperation[] {
  const has = (name: string) => fs.existsSync(path.join(gitDir, name));
  const found: GitOperation[] = [];
  if (has('MERGE_HEAD')) found.push('merge');
  if (has('rebase-merge') || (has('rebase-apply') && !has('rebase-apply/applying'))) found.push('rebase');
  if (has('rebase-apply/applying')) found.push('am');
  if (has('CHERRY_PICK_HEAD')) found.push('cherry-pick');
  if (has('REVERT_HEAD')) found.push('revert');
  if (has('sequencer') && !found.includes('cherry-pick') && !found.includes('revert')) {
    found.push(readSequencerKind(gitDir));
  }
  if (has('BISECT_LOG')) found.push('bisect');
  return found;
}

function readSequencerKind(gitDir: string): GitOperation {
  try {
    const todo = fs.readFileSync(path.join(gitDir, 'sequencer', 'todo'), 'utf8');
    return /^\s*revert\b/m.test(todo) ? 'revert' : 'cherry-pick';
  } catch {
    return 'cherry-pick';
  }
}

/** The probe's one git command (run with PROBE_ENV); the benchmark compares it with this exact line. */
export const PROBE_STATUS_ARGS: readonly string[] = [
  'status',
  '--porcelain=v2',
  '--branch',
  '-z',
  '--no-renames',
  '--untracked-files=all',
  '--ignore-submodules=dirty',
];

/** Read-only: GIT_OPTIONAL_LOCKS=0 keeps status from rewriting the index. */
export const PROBE_ENV: Readonly<Record<string, string>> = { GIT_OPTIONAL_LOCKS: '0' };

/** The whole health from the status output and the marker files. */
export function healthFromStatus(repo: GitRepository, stdout: string): RepositoryHealth {
  const parsed = parseStatus(stdout, (rel) => fs.existsSync(path.join(repo.root, rel, '.git')));
  return {
    exists: true,
    ...parsed,
    operations: operationsInProgress(repo.gitDir),
    indexLocked: fs.existsSync(path.join(repo.gitDir, 'index.lock')),
    hiddenEntries: hiddenEntryCount(repo),
  };
}

/**
 * The uncommitted paths `git status` lists (tracked changes and untracked files, as the probe sees them: the
 * pinned configuration looks at the files, whatever a file-system monitor says), for a refusal to name. Read-only.
 */
export async function uncommittedPaths(repo: GitRepository): Promise<string[]> {
  const args = ['status', '--porcelain=v1', '-z', '--no-renames', '--untracked-files=all', '--ignore-submodules=dirty'];
  const { stdout } = await repo.git.run(repo.root, args, { env: PROBE_ENV });
  return stdout
    .split('\0')
    .filter((record) => record.length > 3)
    .map((record) => record.slice(3));
}

/**
 * Starts the health probe's exact status command and environment (PROBE_ENV: read-only) in `root`, for the hook
 * fast path: its output through a file, its stderr dropped (a failure only makes the fast path decline; the full
 * path's own probe then reports it).
 */
export function startProbeStatus(
  root: string,
  git: GitClient = processGit(),
  onSpawn?: (pid: number | undefined) => void,
): Promise<string> {
  return git.run(root, PROBE_STATUS_ARGS, { env: PROBE_ENV, stdoutViaFile: true, onSpawn }).then((r) => r.stdout);
}

/**
 * The health probe for a process that lives for one hook event: the status output through a file (startProbeStatus);
 * `started` is that status already started in this repository's root. Read-only.
 */
export async function inspectHealthDirect(repo: GitRepository, started?: Promise<string>): Promise<RepositoryHealth> {
  if (!repositoryExists(repo)) return missingHealth();
  return healthFromStatus(repo, await (started ?? startProbeStatus(repo.root, repo.git)));
}

/**
 * Parses `git status --porcelain=v2 --branch -z` output into head/branch and change counts. With
 * `--untracked-files=all` git lists a folder (trailing slash) only when it will not descend into it: a nested
 * repository. `isRepository` confirms it has its own `.git`.
 */
export function parseStatus(
  stdout: string,
  isRepository: (rel: string) => boolean = () => false,
): Pick<
  RepositoryHealth,
  'head' | 'branch' | 'detached' | 'unborn' | 'counts' | 'nestedRepositories' | 'clean' | 'listed'
> {
  const nestedRepositories: string[] = [];
  const listed: StatusListing = { changed: [], untracked: [], folders: [] };
  let head: string | null = null;
  let branch: string | null = null;
  let detached = false;
  let unborn = false;
  const counts = { staged: 0, unstaged: 0, untracked: 0, unmerged: 0 };
  for (const record of stdout.split('\0')) {
    if (record.length === 0) continue;
    if (record.startsWith('# branch.oid ')) {
      const oid = record.slice('# branch.oid '.length);
      if (oid === '(initial)') unborn = true;
      else head = oid;
    } else if (record.startsWith('# branch.head ')) {
      const name = record.slice('# branch.head '.length);
      if (name === '(detached)') detached = true;
      else branch = name;
    } else if (record.startsWith('1 ') || record.startsWith('2 ')) {
      const xy = record.slice(2, 4);
      if (xy[0] !== '.') counts.staged++;
      if (xy[1] !== '.') {
        counts.unstaged++;
        listed.changed.push(statusRecordPath(record));
      }
    } else if (record.startsWith('u ')) {
      counts.unmerged++;
      listed.changed.push(statusRecordPath(record));
    } else if (record.startsWith('? ')) {
      const rel = record.slice(2);
      if (rel.endsWith('/')) listed.folders.push(rel.slice(0, -1));
      else listed.untracked.push(rel);
      if (rel.endsWith('/') && isRepository(rel)) nestedRepositories.push(rel.slice(0, -1));
      else counts.untracked++;
    }
  }
  const clean = counts.staged + counts.unstaged + counts.untracked + counts.unmerged === 0;
  return { head, branch, detached, unborn, counts, nestedRepositories, clean, listed };
}

/**
 * The path of a changed (`1 `), renamed (`2 `, its new path) or unmerged (`u `) record of
 * `git status --porcelain=v2 -z`: the rest after the record's fixed fields (a path may hold spaces).
 */
export function statusRecordPath(record: string): string {
  const count = record.startsWith('u ') ? 10 : record.startsWith('2 ') ? 9 : 8;
  let at = 0;
  for (let n = 0; n < count; n++) at = record.indexOf(' ', at) + 1;
  return record.slice(at);
}
