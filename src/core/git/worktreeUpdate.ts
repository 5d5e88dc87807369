import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../errors';
import { localOnlyChanges, restoreLocalOnlyFiles } from './localOnlyFiles';
import { printableName } from './pathBytes';
import { objectFormatOf, type GitRepository, type ObjectFormat } from './repository';

/** The git side of a restore's worktree update: what it changes, whether it may, doing it, and checking it. */

export interface TreeChange {
  path: string;
  /** The mode and blob in the commit compared from ('000000' / null when that commit does not have the path). */
  oldMode: string;
  oldOid: string | null;
  /** The mode and blob in the target ('000000' / null when the target deletes the path). */
  mode: string;
  oid: string | null;
}

/**
 * The entries that differ between two commits: what a worktree update from `from` to `to` writes or deletes (local-only
 * files included: localOnlyFiles.ts). Read-only.
 */
export async function treeChanges(repo: GitRepository, from: string, to: string): Promise<TreeChange[]> {
  // diff-tree reads the index before it looks at its two trees, which it never needs them for (~10 ms at 20,000
  // files here): it is pointed at an index file that does not exist, which git reads as empty.
  const { stdout } = await repo.git.run(repo.root, ['diff-tree', '-r', '-z', '--no-renames', from, to, '--'], {
    env: { GIT_INDEX_FILE: absentIndex(repo) },
  });
  const fields = stdout.split('\0');
  const changes: TreeChange[] = [];
  // Local-only files (skip-worktree / assume-unchanged by the user) differ between the commits' local layers.
  const local = localOnlyChanges(repo, from, to);
  for (let i = 0; i + 1 < fields.length; i += 2) {
    // ":<old mode> <new mode> <old oid> <new oid> <status>" then the path.
    const [oldMode, newMode, oldOid, newOid, status] = fields[i].slice(1).split(' ');
    changes.push({
      path: fields[i + 1],
      oldMode,
      oldOid: status === 'A' ? null : oldOid,
      mode: newMode,
      oid: status === 'D' ? null : newOid,
    });
  }
  const listed = new Set(changes.map((c) => c.path));
  // A local-only file whose branch entry changes too is refused by the update itself (restoreLocalOnlyFiles).
  for (const change of await local) if (!listed.has(change.path)) changes.push(change);
  return changes;
}

/** A path in our state folder that is never created: an index git reads as empty. */
const absentIndex = (repo: GitRepository) => path.join(repo.stateDir, 'never-an-index');

/** Above this many paths, `pathsHold` asks git about them in several commands (each command line stays short). */
const PATHS_PER_COMMAND = 500;

/**
 * Whether the index and the working tree hold, at every path of `changes`, what `commit` has there: each change's
 * target (`side` 'new') or what it changed from ('old'); absent where that side has nothing. A restore's worktree
 * update writes only these paths, so for an Undo that keeps later work this is its postcondition and what
 * classifies it after a failure; the rest of the tree may hold the user's own uncommitted edits. File contents are
 * compared as git would store them (`hash-object` applies the path's filters). Read-only.
 */
export async function pathsHold(
  repo: GitRepository,
  commit: string,
  changes: readonly TreeChange[],
  side: 'old' | 'new',
): Promise<boolean> {
  const env = { GIT_OPTIONAL_LOCKS: '0', GIT_LITERAL_PATHSPECS: '1' };
  for (let i = 0; i < changes.length; i += PATHS_PER_COMMAND) {
    const paths = changes.slice(i, i + PATHS_PER_COMMAND).map((c) => c.path);
    const index = await repo.git.run(
      repo.root,
      ['diff-index', '--cached', '--quiet', '--no-renames', '--ignore-submodules=none', commit, '--', ...paths],
      { env, okCodes: [1] },
    );
    if (index.code !== 0) return false;
  }
  const hashed: { path: string; oid: string }[] = [];
  const format = await objectFormatOf(repo);
  for (const change of changes) {
    const [mode, oid] = side === 'new' ? [change.mode, change.oid] : [change.oldMode, change.oldOid];
    const file = path.join(repo.root, change.path);
    let st: fs.Stats | null = null;
    try {
      st = fs.lstatSync(file);
    } catch {
      st = null; // absent (or a file stands where a parent folder would be)
    }
    if (oid === null) {
      if (st && !st.isDirectory()) return false;
      continue;
    }
    if (mode === '160000') continue; // a submodule: its index entry (checked above) is what the update writes
    if (!st) return false;
    if (mode === '120000') {
      if (!st.isSymbolicLink() || blobOid(Buffer.from(fs.readlinkSync(file)), format) !== oid) return false;
    } else if (mode === '100644' || mode === '100755') {
      // The executable bit is the index entry's (checked above): a file system without one (core.fileMode=false)
      // must not make a finished update look partial.
      if (!st.isFile()) return false;
      // hash-object reads paths a line each: a name with a line break is compared unfiltered (fails closed).
      if (change.path.includes('\n')) {
        if (blobOid(fs.readFileSync(file), format) !== oid) return false;
      } else hashed.push({ path: change.path, oid });
    } else {
      return false; // anything else: not something this check can vouch for
    }
  }
  if (hashed.length === 0) return true;
  const { stdout } = await repo.git.run(repo.root, ['hash-object', '--stdin-paths'], {
    input: hashed.map((h) => `${h.path}\n`).join(''),
  });
  const oids = stdout.split('\n');
  return hashed.every((h, i) => oids[i] === h.oid);
}

/** The oid git gives `data` as a blob (its bytes as they are: no filters) in a repository of `format`. */
export function blobOid(data: Buffer, format: ObjectFormat): string {
  return crypto.createHash(format).update(`blob ${data.length}\0`).update(data).digest('hex');
}

/**
 * Ignored paths (`git check-ignore`) that an update applying `changes` would really overwrite or remove: an
 * ignored file standing where the target writes a file, or where the target needs a folder; ignored files inside
 * a folder the target replaces with a file. A path the compared commit tracks is the update's own business (a
 * file→folder, symlink↔file or mode change), never "in the way". `changes` compare the target with a commit
 * equal to the working tree minus ignored files, and the index equals that commit. Read-only.
 */
export async function ignoredPathsInTheWay(repo: GitRepository, changes: readonly TreeChange[]): Promise<string[]> {
  const tracked = new Set(changes.filter((c) => c.oldMode !== '000000').map((c) => c.path));
  const files = new Set<string>();
  const folders = new Set<string>();
  for (const change of changes) {
    if (change.oid === null) continue;
    const occupied = occupiedPosition(repo.root, change.path);
    if (!occupied || tracked.has(occupied.path)) continue;
    if (occupied.folder) folders.add(occupied.path);
    else files.add(occupied.path);
  }
  const ignored = new Set<string>();
  if (files.size > 0) {
    // check-ignore reads pathspecs: a leading `./` keeps a name like `:(glob)*` literal.
    const { stdout } = await repo.git.run(repo.root, ['check-ignore', '-z', '--stdin'], {
      input: [...files].map((f) => `./${f}`).join('\0'),
      okCodes: [1],
    });
    for (const p of stdout.split('\0')) if (p) ignored.add(p.replace(/^\.\//, ''));
  }
  if (folders.size > 0) {
    const { stdout } = await repo.git.run(repo.root, [
      '--literal-pathspecs',
      'ls-files',
      '-z',
      '--others',
      '--ignored',
      '--exclude-standard',
      '--',
      ...folders,
    ]);
    for (const p of stdout.split('\0')) if (p) ignored.add(p);
  }
  return [...ignored].sort();
}

/**
 * What stands where the update writes `rel`: a non-folder at a parent position, the path itself, or (when the
 * path itself is a folder and a file must go there) that folder. Null when nothing is in the way.
 */
function occupiedPosition(root: string, rel: string): { path: string; folder: boolean } | null {
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const prefix = parts.slice(0, i).join('/');
    try {
      if (!fs.lstatSync(path.join(root, prefix)).isDirectory()) return { path: prefix, folder: false };
    } catch {
      return null; // the folder does not exist yet: nothing in the way below it
    }
  }
  try {
    return { path: rel, folder: fs.lstatSync(path.join(root, rel)).isDirectory() };
  } catch {
    return null;
  }
}

/** True when the index equals `commit`'s tree and every tracked file matches the index, with no untracked files
 * (nested repositories, which we never version, do not count). Read-only. */
export async function worktreeMatches(repo: GitRepository, commit: string): Promise<boolean> {
  const env = { GIT_OPTIONAL_LOCKS: '0' };
  const cached = await repo.git.run(repo.root, ['diff-index', '--cached', '--quiet', '--no-renames', commit, '--'], {
    env,
    okCodes: [1],
  });
  if (cached.code !== 0) return false;
  const files = await repo.git.run(repo.root, ['diff-files', '--quiet', '--no-renames', '--ignore-submodules=dirty'], {
    env,
    okCodes: [1],
  });
  if (files.code !== 0) return false;
  const others = await repo.git.run(
    repo.root,
    ['ls-files', '--others', '--exclude-standard', '-z', '--directory', '--no-empty-directory'],
    { env },
  );
  return (
    others.stdout.split('\0').filter((p) => p && !(p.endsWith('/') && fs.existsSync(path.join(repo.root, p, '.git'))))
      .length === 0
  );
}

/**
 * Moves index and working tree from `from` to `to` with a two-tree merge (git refuses to overwrite local changes).
 * Local-only files (skip-worktree / assume-unchanged by the user, which read-tree leaves alone) are checked first
 * and written from `target`'s local layer when it has one (localOnlyFiles.ts); `target` is null for an update that
 * keeps them as they are (an Undo that keeps later work).
 */
export async function updateWorktreeBetween(
  repo: GitRepository,
  from: string,
  to: string,
  target: string | null = null,
): Promise<void> {
  await restoreLocalOnlyFiles(repo, from, to, target);
  const { stderr } = await repo.git.run(repo.root, ['read-tree', '-m', '-u', from, to]);
  // read-tree only warns (exit 0) about a file it could not remove or write, or a smudge filter that failed: the
  // update is then not what it says, and the restore must not be proven by the files' bytes (the preflight,
  // writeBlockers.ts, refuses the causes it can see before anything moves).
  const unwritten = /unable to (?:unlink '(.+?)'|create file (.+?)): /.exec(stderr);
  if (unwritten)
    throw new AvhError('folder-read-only', `${printableName(unwritten[1] ?? unwritten[2])} could not be written.`);
  if (/external filter .* failed/.test(stderr))
    throw new AvhError('filter-failed', 'A smudge filter failed, so a file was written in its stored form.');
}
