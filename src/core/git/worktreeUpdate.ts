import * as fs from 'node:fs';
import * as path from 'node:path';
import { runGit } from './gitRunner';
import { GitRepository } from './repository';

/** The git side of a restore's worktree update: what it changes, whether it may, doing it, and checking it. */

export interface TreeChange {
  path: string;
  /** The mode in the commit compared from ('000000' when that commit does not have the path). */
  oldMode: string;
  /** The mode and blob in the target ('000000' / null when the target deletes the path). */
  mode: string;
  oid: string | null;
}

/** The entries that differ between two commits: what a worktree update from `from` to `to` writes or deletes. Read-only. */
export async function treeChanges(repo: GitRepository, from: string, to: string): Promise<TreeChange[]> {
  const { stdout } = await runGit(repo.root, ['diff-tree', '-r', '-z', '--no-renames', from, to, '--']);
  const fields = stdout.split('\0');
  const changes: TreeChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    // ":<old mode> <new mode> <old oid> <new oid> <status>" then the path.
    const [oldMode, newMode, , newOid, status] = fields[i].slice(1).split(' ');
    changes.push({ path: fields[i + 1], oldMode, mode: newMode, oid: status === 'D' ? null : newOid });
  }
  return changes;
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
    const { stdout } = await runGit(repo.root, ['check-ignore', '-z', '--stdin'], { input: [...files].map((f) => `./${f}`).join('\0'), okCodes: [1] });
    for (const p of stdout.split('\0')) if (p) ignored.add(p.replace(/^\.\//, ''));
  }
  if (folders.size > 0) {
    const { stdout } = await runGit(repo.root, ['--literal-pathspecs', 'ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--', ...folders]);
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
  const cached = await runGit(repo.root, ['diff-index', '--cached', '--quiet', '--no-renames', commit, '--'], { env, okCodes: [1] });
  if (cached.code !== 0) return false;
  const files = await runGit(repo.root, ['diff-files', '--quiet', '--no-renames', '--ignore-submodules=dirty'], { env, okCodes: [1] });
  if (files.code !== 0) return false;
  const others = await runGit(repo.root, ['ls-files', '--others', '--exclude-standard', '-z', '--directory', '--no-empty-directory'], { env });
  return others.stdout.split('\0').filter((p) => p && !(p.endsWith('/') && fs.existsSync(path.join(repo.root, p, '.git')))).length === 0;
}

/** Moves index and working tree from `from` to `to` with a two-tree merge (git refuses to overwrite local changes). */
export async function updateWorktreeBetween(repo: GitRepository, from: string, to: string): Promise<void> {
  await runGit(repo.root, ['read-tree', '-m', '-u', from, to]);
}
