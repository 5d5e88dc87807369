import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../errors';
import { HEAVY_PATTERNS, LARGE_FILE_BYTES } from '../git/heavyFolders';
import { ignoredEntries } from '../git/ignoreRules';
import { compareAndSetRef, ZERO_OID } from '../git/refUpdate';
import type { GitRepository } from '../git/repository';
import type { RepositoryHealth } from '../git/statusProbe';
import { commitWorkingTree } from '../git/workingTree';
import { randomUuid } from '../randomId';
import type { JournalStatement } from '../store/journal';

/**
 * The one checkpoint sequence (issue 34; docs/design/command-checkpoints.md), shared by the full path
 * (commandCheckpoints.ts, under runOperation) and the hook's fast path (cli/hooks/fastPlans.ts, under the same
 * operation kind): whether there is anything to save, the snapshot commit, the ignored files copied aside, and the
 * row as one journal statement. No store, no sql.js: the hook's fast path loads it.
 */

export const CHECKPOINT_REF_PREFIX = 'refs/agent-versions/checkpoints/';
const SAVED_BYTES_CAP = 200 * 1024 * 1024;
/**
 * The most files of dependency and build folders one checkpoint copies: a folder that would pass it is left out whole
 * (it is reinstallable or rebuilt, and copying it would hold the agent's command up for seconds).
 */
const HEAVY_FILES_CAP = 5_000;
/** Up to this size a kept file is read and written whole; a larger one is copied by the system. */
const SMALL_FILE_BYTES = 1024 * 1024;
export const SAVED_FILES_MANIFEST = 'manifest.json';

/** What the classifier recognised (cli/hooks/destructiveCommand/), and the command's text. */
export interface CheckpointInput {
  chatId: string;
  /** The shell text the agent is about to run (stored with the turn, never logged). */
  command: string;
  /** What was recognised, content-free (`git reset --hard`). */
  label: string;
  /** The command can delete files git ignores: they are copied aside too. */
  reachesIgnored: boolean;
  /** It destroys only what differs from HEAD (`git pull`, `mv a b`): over a clean tree the tree needs no snapshot. */
  onlyOverChanges?: boolean;
  /** It can delete ignored dependency and build folders (`git clean -x`): they are kept too, whole, within budget. */
  reachesBuildFolders?: boolean;
  /** The paths its `rm` names (the classifier's `ignoredTargets`): only ignored files at or under them are kept. */
  ignoredTargets?: readonly string[];
}

/** Where the checkpoint is taken: the running turn, HEAD, and the status the gate decided on. */
export interface CheckpointAt {
  turnId: string;
  /** HEAD, the checkpoint's parent (null on an unborn branch: a root commit). */
  head: string | null;
  /** HEAD's tree when already known (one git process fewer). */
  headTree?: string;
  health: Pick<RepositoryHealth, 'clean' | 'counts' | 'nestedRepositories' | 'listed'>;
}

export interface TakenCheckpoint {
  id: string;
  commit: string;
  ref: string;
  savedFiles: number;
  /** The folder the ignored files were copied to, when any were. */
  savedDir: string | null;
  /** The `command_checkpoints` row, as the one statement both paths write. */
  statement: JournalStatement;
}

/** The folder of a checkpoint's saved ignored files (owner-only). */
export function savedFilesDir(stateDir: string, id: string): string {
  return path.join(stateDir, 'checkpoints', id);
}

/**
 * Takes the checkpoint, or returns null when the command can destroy nothing here: a command that destroys only
 * uncommitted work (`onlyOverChanges`) over a clean tree, unless it also reaches ignored files and there are some to
 * keep (`mv`/`cp` onto an ignored `.env`). The cheapest check first: the status the gate already read says clean; only
 * then, for a command that reaches ignored files, one `git ls-files` (the listing the copy needs anyway).
 */
export async function takeCheckpoint(
  repo: GitRepository,
  at: CheckpointAt,
  input: CheckpointInput,
  now: number,
): Promise<TakenCheckpoint | null> {
  let ignored: IgnoredFiles | null = null;
  if (input.onlyOverChanges && at.health.clean) {
    if (!input.reachesIgnored) return null;
    ignored = await listIgnoredFiles(repo, input);
    if (ignoredCount(ignored) === 0) return null;
  }
  const id = randomUuid();
  const ref = `${CHECKPOINT_REF_PREFIX}${id}`;
  const made = await commitWorkingTree(repo, {
    ref,
    expected: ZERO_OID,
    parent: at.head,
    ...(at.headTree !== undefined ? { parentTree: at.headTree } : {}),
    always: true,
    // The paths the status moments before listed are staged, nothing else is looked at (issue 36).
    listed: at.health.listed,
    message: `Agent Version History checkpoint before a command\n\nAgent-Turn: ${at.turnId}\nAgent-Checkpoint: ${id}\n`,
    reflog: 'agent-versions: checkpoint',
    installIndex: false,
  });
  if (!made.commit) throw new AvhError('git-failed', 'The checkpoint commit was not made.');
  let savedFiles = 0;
  if (input.reachesIgnored) {
    try {
      savedFiles = copyIgnoredFiles(repo, id, ignored ?? (await listIgnoredFiles(repo, input)));
    } catch (error) {
      await discardCheckpoint(repo, { ref, commit: made.commit, savedDir: savedFilesDir(repo.stateDir, id) });
      throw error;
    }
  }
  return {
    id,
    commit: made.commit,
    ref,
    savedFiles,
    savedDir: savedFiles > 0 ? savedFilesDir(repo.stateDir, id) : null,
    statement: {
      sql:
        'INSERT INTO command_checkpoints (id, turn_id, chat_id, command, label, commit_oid, saved_files, created_at) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      params: [id, at.turnId, input.chatId, input.command, input.label, made.commit, savedFiles, now],
    },
  };
}

/**
 * A checkpoint whose row was never written (the fast path's append declined, the full path's transaction failed):
 * its ref deleted by compare-and-set (only while it still names the commit made), its saved files removed.
 */
export async function discardCheckpoint(
  repo: GitRepository,
  taken: Pick<TakenCheckpoint, 'ref' | 'commit' | 'savedDir'>,
): Promise<void> {
  if (taken.savedDir !== null) fs.rmSync(taken.savedDir, { recursive: true, force: true });
  await compareAndSetRef(repo, taken.ref, ZERO_OID, taken.commit, 'agent-versions: checkpoint discarded');
}

export interface SavedEntry {
  path: string;
  mode: number;
  link?: string;
}

/**
 * The ignored files a command could delete, relative to the root: `plain` those outside dependency and build folders
 * (`.env`, local config), `heavy` each such folder (HEAVY_PATTERNS: `build/`, `node_modules/`, …) with its files, or
 * `null` when it holds more than HEAVY_FILES_CAP.
 */
interface IgnoredFiles {
  plain: string[];
  heavy: { folder: string; files: string[] | null }[];
}

/** How many files of the listing could be kept. */
function ignoredCount(ignored: IgnoredFiles): number {
  return ignored.plain.length + ignored.heavy.reduce((n, h) => n + (h.files?.length ?? 0), 0);
}

/**
 * Lists the ignored files, folders walked (`.git` never); the dependency and build folders only when the command
 * reaches them (`buildFolders`: `git clean -x`), each walk stopping past HEAVY_FILES_CAP files, so a big
 * `node_modules` costs at most that many entries.
 */
async function listIgnoredFiles(
  repo: GitRepository,
  input: Pick<CheckpointInput, 'reachesBuildFolders' | 'ignoredTargets'>,
): Promise<IgnoredFiles> {
  const buildFolders = input.reachesBuildFolders === true;
  const entries = await ignoredEntries(repo);
  const heavyNames = new Set(HEAVY_PATTERNS.map((p) => p.replace(/\/$/, '')));
  const listed: IgnoredFiles = { plain: [], heavy: [] };
  /** Walks `rel` into `into`; false once `into` holds more than `cap` files (the walk stopped). */
  const walk = (rel: string, depth: number, into: string[], cap: number, heavyFolders: boolean): boolean => {
    if (depth > 64) return true;
    let dirents: fs.Dirent[];
    try {
      dirents = fs.readdirSync(path.join(repo.root, rel), { withFileTypes: true });
    } catch {
      return true;
    }
    for (const e of dirents) {
      if (e.name === '.git') continue;
      const child = `${rel}/${e.name}`;
      if (!heavyFolders && heavyNames.has(e.name) && e.isDirectory()) {
        if (buildFolders) listed.heavy.push({ folder: child, files: heavyFiles(child) });
      } else if (e.isDirectory()) {
        if (!walk(child, depth + 1, into, cap, heavyFolders)) return false;
      } else if (e.isFile() || e.isSymbolicLink()) {
        into.push(child);
        if (into.length > cap) return false;
      }
    }
    return true;
  };
  const heavyFiles = (folder: string): string[] | null => {
    const files: string[] = [];
    return walk(folder, 0, files, HEAVY_FILES_CAP, true) ? files : null;
  };
  for (const entry of entries) {
    const rel = entry.replace(/\/$/, '');
    const parts = rel.split('/');
    const heavyAt = parts.findIndex((part) => heavyNames.has(part));
    if (heavyAt >= 0) {
      // Inside (or at) a dependency or build folder: that whole folder, listed once.
      const folder = parts.slice(0, heavyAt + 1).join('/');
      if (!buildFolders || listed.heavy.some((h) => h.folder === folder)) continue;
      const st = fs.lstatSync(path.join(repo.root, folder), { throwIfNoEntry: false });
      if (st?.isDirectory()) listed.heavy.push({ folder, files: heavyFiles(folder) });
      else if (heavyAt === parts.length - 1) listed.plain.push(rel);
    } else if (entry.endsWith('/')) walk(rel, 0, listed.plain, Number.POSITIVE_INFINITY, false);
    else listed.plain.push(rel);
  }
  const named = input.ignoredTargets && targetMatcher(repo.root, input.ignoredTargets);
  if (named) listed.plain = listed.plain.filter(named);
  return listed;
}

/**
 * Whether a file (relative to the root) may be at or under one of the paths an `rm` named. The hook is not told the
 * folder the agent's shell is in (a shell tool keeps its own; it may be outside the repository), so a relative path
 * is judged by its last name alone: whatever the folder, everything `rm` deletes has that name among its path's
 * names (`rm -rf ../app/logs` from anywhere deletes at or under some `…/logs`). More than the command deletes, never
 * less. An absolute path inside the repository is exact. Null — every ignored file — when a path could mean the whole
 * repository (`.`, `..`, the root itself) or is absolute outside it as written (maybe the repository by another name:
 * a symlinked folder).
 */
export function targetMatcher(root: string, targets: readonly string[]): ((file: string) => boolean) | null {
  const names = new Set<string>();
  const exact: string[] = [];
  for (const target of targets) {
    if (path.posix.isAbsolute(target)) {
      const rel = path.relative(root, path.resolve(target)).split(path.sep).join('/');
      if (rel === '' || rel === '..' || rel.startsWith('../')) return null;
      exact.push(rel);
      continue;
    }
    const name = path.posix.basename(path.posix.normalize(target));
    if (name === '.' || name === '..' || name === '' || name === '/') return null;
    names.add(name);
  }
  return (file) =>
    exact.some((at) => file === at || file.startsWith(`${at}/`)) || file.split('/').some((name) => names.has(name));
}

/**
 * Copies the ignored files: the plain ones first (files over LARGE_FILE_BYTES and past SAVED_BYTES_CAP left out),
 * then each dependency or build folder whole or not at all (half a `node_modules` brought back would be a broken
 * install): kept when its files fit in what is left of SAVED_BYTES_CAP and HEAVY_FILES_CAP and none is over
 * LARGE_FILE_BYTES. How many were kept.
 */
function copyIgnoredFiles(repo: GitRepository, id: string, ignored: IgnoredFiles): number {
  if (ignoredCount(ignored) === 0) return 0;
  const dir = savedFilesDir(repo.stateDir, id);
  fs.mkdirSync(path.join(dir, 'files'), { recursive: true, mode: 0o700 });
  const kept: SavedEntry[] = [];
  let bytes = 0;
  /** The folders made so far: a build folder's thousands of files share a few hundred. */
  const made = new Set<string>();
  const copy = (rel: string, st: fs.Stats): void => {
    const from = path.join(repo.root, rel);
    if (st.isSymbolicLink()) {
      kept.push({ path: rel, mode: 0o120000, link: fs.readlinkSync(from) });
      return;
    }
    const to = path.join(dir, 'files', rel);
    const folder = path.dirname(to);
    if (!made.has(folder)) {
      fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
      made.add(folder);
    }
    if (st.size <= SMALL_FILE_BYTES) {
      // Read and written with its mode at creation: a third of copyFileSync + chmod for a build folder's small files.
      fs.writeFileSync(to, fs.readFileSync(from), { mode: 0o600, flag: 'wx' });
    } else {
      fs.copyFileSync(from, to, fs.constants.COPYFILE_EXCL);
      fs.chmodSync(to, 0o600);
    }
    bytes += st.size;
    kept.push({ path: rel, mode: st.mode & 0o111 ? 0o100755 : 0o100644 });
  };
  for (const rel of ignored.plain) {
    try {
      const st = fs.lstatSync(path.join(repo.root, rel));
      if (st.isSymbolicLink() || (st.isFile() && st.size <= LARGE_FILE_BYTES && bytes + st.size <= SAVED_BYTES_CAP))
        copy(rel, st);
    } catch {
      // A file that vanished or cannot be read is not kept; the others are.
    }
  }
  let heavyKept = 0;
  for (const { files } of ignored.heavy) {
    if (files === null || heavyKept + files.length > HEAVY_FILES_CAP) continue;
    const stats = new Map<string, fs.Stats>();
    let folderBytes = 0;
    let tooLarge = false;
    for (const rel of files) {
      const st = fs.lstatSync(path.join(repo.root, rel), { throwIfNoEntry: false });
      if (!st || !(st.isFile() || st.isSymbolicLink())) continue;
      stats.set(rel, st);
      if (st.isFile()) folderBytes += st.size;
      if (st.size > LARGE_FILE_BYTES) tooLarge = true;
    }
    // A file over LARGE_FILE_BYTES is never kept, so neither is its folder (whole or not at all).
    if (tooLarge || bytes + folderBytes > SAVED_BYTES_CAP) continue;
    for (const [rel, st] of stats) {
      try {
        copy(rel, st);
      } catch {
        // As above: a file that vanished or cannot be read is not kept.
      }
    }
    heavyKept += files.length;
  }
  fs.writeFileSync(path.join(dir, SAVED_FILES_MANIFEST), JSON.stringify(kept), { mode: 0o600 });
  return kept.length;
}
