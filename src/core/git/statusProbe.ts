/**
 * What `git status --porcelain=v2` and the marker files say about a working tree: the health probe's one command
 * and its parser. The probe (healthProbe.ts) and the CLI's hook fast path (which loads nothing else of the core;
 * docs/design.md "Fast hook events") run the same arguments and environment through the repository's git client.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GitClient } from './gitClient';
import { processGit } from './gitRunner';
import { hiddenEntryCount, readIndexTail } from './indexFlags';
import { guessRepositoryFromFiles, type GitRepository } from './repository';

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

/** Everything docs/product-contract.md §5.5 asks of repository health, from one status call plus marker files. */
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

/**
 * The probe's status in the mode the user's untracked cache serves (issue 36; docs/design/git-and-performance.md,
 * "Large repositories"): `--untracked-files=normal` when the index holds a cache built in that mode (the user's own
 * `git status` built it; git bypasses it for `all`), where git lists a new folder as one `dir/` entry; the files
 * of those folders are then listed by `ls-files --others` (lookingInto) and the output is rewritten to what
 * `--untracked-files=all` prints, so every reader of the probe's output sees the same records either way.
 */
export function probeStatusArgs(mode: UntrackedMode): readonly string[] {
  return mode === 'all'
    ? PROBE_STATUS_ARGS
    : PROBE_STATUS_ARGS.map((a) => (a === '--untracked-files=all' ? '--untracked-files=normal' : a));
}

export type UntrackedMode = 'all' | 'normal';

/**
 * How much of the index's end is read for its untracked cache (the extensions follow every entry; the cache takes
 * about 45 bytes per folder, so 8 MB holds one of some 180,000 folders).
 */
const UNTRACKED_CACHE_TAIL_BYTES = 8 << 20;
/** dir.h's DIR_SHOW_OTHER_DIRECTORIES: set in the cache's flags when `git status` built it in the normal mode. */
const DIR_SHOW_OTHER_DIRECTORIES = 1 << 1;

/**
 * The mode of the untracked cache in `gitDir`'s index (its `UNTR` extension), or null when it has none. Reads the
 * index's end only (no git process, no parsing of the entries): a candidate `UNTR` counts only when the extensions
 * from it reach the file's checksum exactly. A wrong answer could only cost time, never a file: both modes list the
 * same files (startProbeStatus).
 */
export function untrackedCacheMode(gitDir: string): UntrackedMode | null {
  try {
    const tail = readIndexTail(path.join(gitDir, 'index'), UNTRACKED_CACHE_TAIL_BYTES);
    return untrackedCacheModeOf(tail);
  } catch {
    return null;
  }
}

/** untrackedCacheMode's reading of the index's last bytes. Pure. */
export function untrackedCacheModeOf(tail: Buffer): UntrackedMode | null {
  for (let at = tail.lastIndexOf('UNTR'); at >= 0; at = at === 0 ? -1 : tail.lastIndexOf('UNTR', at - 1)) {
    if (at + 8 > tail.length || !extensionsReachChecksum(tail, at)) continue;
    const end = at + 8 + tail.readUInt32BE(at + 4);
    // The extension: a varint (git's encoding) and that many bytes of where the cache may be used, the stat data of
    // info/exclude and core.excludesFile (36 bytes each), then the 32-bit flags of the walk that built it.
    let p = at + 8;
    let byte = tail[p++];
    let identLength = byte & 0x7f;
    while (byte & 0x80 && p < end) {
      byte = tail[p++];
      identLength = ((identLength + 1) << 7) | (byte & 0x7f);
    }
    p += identLength + 72;
    if (p + 4 > end) return null;
    return tail.readUInt32BE(p) & DIR_SHOW_OTHER_DIRECTORIES ? 'normal' : 'all';
  }
  return null;
}

/** Whether the index extensions chained from `at` (signature, 32-bit size, data) end exactly at the checksum. */
function extensionsReachChecksum(tail: Buffer, at: number): boolean {
  for (const oidBytes of [20, 32]) {
    const checksumAt = tail.length - oidBytes;
    let p = at;
    while (p + 8 <= checksumAt && /^[A-Za-z]{4}$/.test(tail.toString('latin1', p, p + 4))) {
      p += 8 + tail.readUInt32BE(p + 4);
    }
    if (p === checksumAt) return true;
  }
  return false;
}

/**
 * `--untracked-files=normal` output rewritten to what `--untracked-files=all` prints: each new folder's `? dir/`
 * record replaced by its files (and the folders git would not descend into, a nested repository's `sub/`), as
 * `git ls-files --others --exclude-standard` lists them under it — the same rules status applies. Only the new
 * folders are looked into: a cost in proportion to them.
 */
async function lookingInto(root: string, git: GitClient, stdout: string): Promise<string> {
  const folders: string[] = [];
  const kept: string[] = [];
  for (const record of stdout.split('\0')) {
    if (record.length === 0) continue;
    if (record.startsWith('? ') && record.endsWith('/')) folders.push(record.slice(2));
    else kept.push(record);
  }
  if (folders.length === 0) return stdout;
  // Many folders: one walk of the tree rather than a command line of thousands of pathspecs.
  const pathspecs = folders.length <= 256 ? ['--', ...folders] : [];
  const { stdout: others } = await git.run(root, ['ls-files', '-z', '--others', '--exclude-standard', ...pathspecs], {
    env: { ...PROBE_ENV, GIT_LITERAL_PATHSPECS: '1' },
  });
  const under = pathspecs.length > 0 ? null : folders;
  for (const entry of others.split('\0')) {
    if (entry.length === 0) continue;
    if (under && !under.some((f) => entry.startsWith(f))) continue;
    kept.push(`? ${entry}`);
  }
  return kept.map((r) => `${r}\0`).join('');
}

/**
 * The whole health from the status output and the marker files. `hiddenEntries`: hiddenEntryCount, when the caller
 * read it while the status ran.
 */
export function healthFromStatus(
  repo: GitRepository,
  stdout: string,
  hiddenEntries: number = hiddenEntryCount(repo),
): RepositoryHealth {
  const parsed = parseStatus(stdout, (rel) => fs.existsSync(path.join(repo.root, rel, '.git')));
  return {
    exists: true,
    ...parsed,
    operations: operationsInProgress(repo.gitDir),
    indexLocked: fs.existsSync(path.join(repo.gitDir, 'index.lock')),
    hiddenEntries,
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
  gitDir: string = guessRepositoryFromFiles(root)?.gitDir ?? path.join(root, '.git'),
): Promise<string> {
  return runProbeStatus(root, gitDir, git, { stdoutViaFile: true, onSpawn });
}

/**
 * The probe's status output in `root` (git dir `gitDir`): PROBE_STATUS_ARGS' records, whichever mode served them
 * (probeStatusArgs). Read-only.
 */
export function runProbeStatus(
  root: string,
  gitDir: string,
  git: GitClient,
  options: { stdoutViaFile?: boolean; onSpawn?: (pid: number | undefined) => void } = {},
): Promise<string> {
  const mode = untrackedCacheMode(gitDir) === 'normal' ? 'normal' : 'all';
  const status = git.run(root, probeStatusArgs(mode), { env: PROBE_ENV, ...options }).then((r) => r.stdout);
  return mode === 'all' ? status : status.then((stdout) => lookingInto(root, git, stdout));
}

/**
 * The hook entry's early status (cli/hooks/earlyProbe.ts), handed to the full path when the fast path declined
 * (issue 36, one look at the working tree per event: a new chat's first prompt, a prompt with a note to deliver):
 * the first gate probe of the same repository that follows no settling takes it instead of running a status of its
 * own (operations/runOperation.ts). A declined event changed neither the tree nor the index, so the status is as good
 * as one run a moment later. Kept on `globalThis`: the entry and the full CLI are separate bundles in one process.
 */
const HANDED_OVER = Symbol.for('agent-versions.early-status');
type HandedOver = { root: string; status: Promise<string> };

export function handOverStatus(root: string, status: Promise<string>): void {
  (globalThis as Record<symbol, HandedOver | undefined>)[HANDED_OVER] = { root, status };
}

/** The handed-over status if it is `root`'s; either way it is gone after this call (one use). */
export function takeHandedOverStatus(root: string): Promise<string> | undefined {
  const slot = globalThis as Record<symbol, HandedOver | undefined>;
  const handed = slot[HANDED_OVER];
  slot[HANDED_OVER] = undefined;
  return handed?.root === root ? handed.status : undefined;
}

/**
 * The health probe for a process that lives for one hook event: the status output through a file (startProbeStatus);
 * `started` is that status already started in this repository's root. Read-only.
 */
export async function inspectHealthDirect(repo: GitRepository, started?: Promise<string>): Promise<RepositoryHealth> {
  if (!repositoryExists(repo)) return missingHealth();
  const status = started ?? startProbeStatus(repo.root, repo.git, undefined, repo.gitDir);
  // Read while the status runs (this process only waits for it): the index's flags, which only the user's own
  // commands change (at 250,000 files, 15-20 ms of reading and parsing off the event's path).
  const hiddenEntries = hiddenEntryCount(repo);
  return healthFromStatus(repo, await status, hiddenEntries);
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
