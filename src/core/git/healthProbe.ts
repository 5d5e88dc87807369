import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitRepository } from './repository';
import { runGit } from './gitRunner';

export const GIT_OPERATIONS = ['merge', 'rebase', 'am', 'cherry-pick', 'revert', 'bisect'] as const;
export type GitOperation = (typeof GIT_OPERATIONS)[number];

export interface WorkingTreeCounts {
  staged: number;
  unstaged: number;
  untracked: number;
  unmerged: number;
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
  clean: boolean;
}

const NO_COUNTS: WorkingTreeCounts = { staged: 0, unstaged: 0, untracked: 0, unmerged: 0 };

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

/**
 * The single source of truth for repository health (SPEC §5.5): restore preflight, failure disposition,
 * reconciliation and recovery acceptance all call this. Read-only: GIT_OPTIONAL_LOCKS=0 keeps status from
 * rewriting the index, so the probe never changes a byte of the repository. Uncommitted changes inside a
 * submodule's own working tree are not ours to capture or restore (we record submodules by commit), so they
 * do not count as dirt; a submodule checked out at another commit does.
 */
export async function inspectRepositoryHealth(repo: GitRepository): Promise<RepositoryHealth> {
  if (!fs.existsSync(repo.root) || !fs.existsSync(repo.gitDir)) {
    return { exists: false, head: null, branch: null, detached: false, unborn: false, operations: [], indexLocked: false, counts: NO_COUNTS, clean: false };
  }
  const { stdout } = await runGit(repo.root, ['status', '--porcelain=v2', '--branch', '-z', '--no-renames', '--untracked-files=all', '--ignore-submodules=dirty'], {
    env: { GIT_OPTIONAL_LOCKS: '0' },
  });
  const parsed = parseStatus(stdout);
  return {
    exists: true,
    ...parsed,
    operations: operationsInProgress(repo.gitDir),
    indexLocked: fs.existsSync(path.join(repo.gitDir, 'index.lock')),
  };
}

/** Parses `git status --porcelain=v2 --branch -z` output into head/branch and change counts. */
export function parseStatus(stdout: string): Pick<RepositoryHealth, 'head' | 'branch' | 'detached' | 'unborn' | 'counts' | 'clean'> {
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
      if (xy[1] !== '.') counts.unstaged++;
    } else if (record.startsWith('u ')) {
      counts.unmerged++;
    } else if (record.startsWith('? ')) {
      counts.untracked++;
    }
  }
  const clean = counts.staged + counts.unstaged + counts.untracked + counts.unmerged === 0;
  return { head, branch, detached, unborn, counts, clean };
}
