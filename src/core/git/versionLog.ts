import type { GitClient } from './gitClient';
import { GitCommandError } from './gitErrors';
import { processGit } from './gitRunner';
import { FULL_OID } from '../domain/objectId';

/** One commit of the current branch as the Version History view needs it. */
export interface LoggedCommit {
  oid: string;
  subject: string;
  /** Commit time, seconds since the epoch. */
  time: number;
  /** The `Agent-Turn` trailer, when the commit is an agent turn's version. */
  turnId: string | null;
  filesChanged: number;
  insertions: number;
  deletions: number;
}

const FIELD = '\x1f';
const RECORD = '\x1e';

/**
 * The one `git log` the view runs per refresh: commit fields plus `--shortstat` against the first parent
 * (merges included), so files changed and +/− need no second process. Exported for the bench, which times
 * the same command raw.
 */
export function versionLogArgs(limit: number, skip = 0): string[] {
  return [
    'log',
    `--max-count=${limit}`,
    `--skip=${skip}`,
    '--no-color',
    // Counted on the stored bytes: never a user's textconv or external diff program per commit of the view.
    '--no-textconv',
    '--no-ext-diff',
    '--shortstat',
    '--diff-merges=first-parent',
    `--format=${RECORD}%H${FIELD}%ct${FIELD}%(trailers:key=Agent-Turn,valueonly,separator=%x2c)${FIELD}%s`,
    'HEAD',
    '--',
  ];
}

/**
 * Commits of HEAD's history, newest first (none on an unborn branch). Read-only: never touches refs, the index or
 * files.
 */
export async function readVersionLog(
  root: string,
  limit: number,
  skip = 0,
  git: GitClient = processGit(),
): Promise<LoggedCommit[]> {
  let stdout: string;
  try {
    ({ stdout } = await git.run(root, versionLogArgs(limit, skip)));
  } catch (error) {
    if (error instanceof GitCommandError && error.gitErrorCode === 'no-commits') return [];
    throw error;
  }
  return parseVersionLog(stdout);
}

/** The commits of versionLogArgs output, newest first. Pure. */
export function parseVersionLog(stdout: string): LoggedCommit[] {
  const commits: LoggedCommit[] = [];
  for (const record of stdout.split(RECORD)) {
    if (!record) continue;
    const newline = record.indexOf('\n');
    const header = newline < 0 ? record : record.slice(0, newline);
    const stat = newline < 0 ? '' : record.slice(newline + 1);
    const [oid, time, trailer, ...subject] = header.split(FIELD);
    if (!oid) continue;
    commits.push({
      oid,
      time: Number(time),
      turnId: trailer?.trim().split(',')[0] || null,
      subject: subject.join(FIELD),
      filesChanged: statNumber(stat, /(\d+) files? changed/),
      insertions: statNumber(stat, /(\d+) insertions?\(\+\)/),
      deletions: statNumber(stat, /(\d+) deletions?\(-\)/),
    });
  }
  return commits;
}

function statNumber(stat: string, pattern: RegExp): number {
  const match = pattern.exec(stat);
  return match ? Number(match[1]) : 0;
}

export type ChangeStatus = 'added' | 'deleted' | 'modified';

export interface ChangedFile {
  status: ChangeStatus;
  /** Path in the commit (for a deletion: the path in the parent). Renames are listed as a deletion plus an addition. */
  path: string;
}

/** Files a commit changed against its first parent (the empty tree for a root commit). Read-only. */
export async function changedFilesOf(
  root: string,
  oid: string,
  git: GitClient = processGit(),
): Promise<{ parent: string | null; files: ChangedFile[] }> {
  const { stdout: parents } = await git.run(root, ['rev-list', '--parents', '-n', '1', oid, '--']);
  const parent = parents.trim().split(' ')[1] ?? null;
  const args = parent
    ? ['diff-tree', '-r', '-z', '--no-renames', '--name-status', parent, oid, '--']
    : ['diff-tree', '-r', '-z', '--no-renames', '--name-status', '--root', oid, '--'];
  const { stdout } = await git.run(root, args);
  const parts = stdout.split('\0');
  // With --root git prints the commit id first; with two trees it does not.
  const start = parts[0] && FULL_OID.test(parts[0]) ? 1 : 0;
  const files: ChangedFile[] = [];
  for (let i = start; i + 1 < parts.length; i += 2) {
    const code = parts[i];
    const file = parts[i + 1];
    if (!code || !file) continue;
    files.push({ status: code.startsWith('A') ? 'added' : code.startsWith('D') ? 'deleted' : 'modified', path: file });
  }
  return { parent, files };
}

/** The text of `path` in commit `oid` (decoded as UTF-8), or null when the commit has no such file. Read-only. */
export async function readBlobAt(
  root: string,
  oid: string,
  path: string,
  git: GitClient = processGit(),
): Promise<string | null> {
  try {
    return (await git.run(root, ['cat-file', 'blob', `${oid}:${path}`])).stdout;
  } catch (error) {
    if (error instanceof GitCommandError) return null;
    throw error;
  }
}

/** `git log` of HEAD in `format` (newest first, `limit` from `skip`); null when HEAD has no commits yet. */
export async function versionRecords(
  root: string,
  limit: number,
  skip: number,
  format: string,
  git: GitClient = processGit(),
): Promise<string | null> {
  try {
    return (
      await git.run(root, [
        'log',
        `--max-count=${limit}`,
        `--skip=${skip}`,
        '--no-color',
        `--format=${format}`,
        'HEAD',
        '--',
      ])
    ).stdout;
  } catch {
    return null;
  }
}
