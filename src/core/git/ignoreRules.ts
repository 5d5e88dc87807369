import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createCommit } from './commitObjects';
import { fsPath } from './pathBytes';
import { readRef } from './refUpdate';
import { type GitRepository, objectFormatOf } from './repository';
import { TemporaryIndex } from './temporaryIndex';
import { blobOid, type TreeChange } from './worktreeUpdate';

/**
 * Restores across a change of ignore rules (issue 33; docs/design/ignore-rules.md). A version holds what `git add -A`
 * saw, so a turn that moves a rule changes which files its versions hold, though the files themselves did not move:
 *
 * - A file ignored by the rules of the state a restore goes to is not part of that state: the restore never deletes
 *   it (it stays on disk, ignored again). An Undo still deletes such a file when it was born after the undone turn
 *   began (the turn created it; its bytes are in the turn's version).
 * - An Undo of a turn whose rules hid files it created (build output and its `.gitignore` line) takes those files
 *   away too, as the state before the turn did not have them; their bytes go first into a private commit,
 *   `refs/agent-versions/ignored/<operation>`, and Redo of that Undo writes them back.
 *
 * All of it runs only when the two commits' `.gitignore` files differ. The rules of a commit are its `.gitignore`
 * files with today's `.git/info/exclude` and `core.excludesFile` (those live outside the tree).
 */

export const IGNORED_REF_PREFIX = 'refs/agent-versions/ignored/';
/** Output bigger than this in all is left on disk rather than copied into the repository's objects. */
const MAX_SAVED_BYTES = 50 * 1024 * 1024;

/** Whether any `.gitignore` differs between two commits (one diff-tree of the names). */
export async function ignoreRulesDiffer(repo: GitRepository, a: string, b: string): Promise<boolean> {
  const { stdout } = await repo.git.run(repo.root, [
    'diff-tree',
    '-r',
    '-z',
    '--name-only',
    '--no-renames',
    a,
    b,
    '--',
    ':(glob)**/.gitignore',
  ]);
  return stdout.split('\0').some((p) => p.length > 0);
}

/**
 * Which of `paths` the rules of `commit` ignore: its `.gitignore` files written into a scratch repository (with
 * this repository's info/exclude; core.excludesFile is read from the user's config as git reads it), asked with
 * `check-ignore --no-index`. Read-only for the repository.
 */
export async function ignoredAt(repo: GitRepository, commit: string, paths: readonly string[]): Promise<Set<string>> {
  const ignored = new Set<string>();
  if (paths.length === 0) return ignored;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-rules-'));
  try {
    await repo.git.run(scratch, ['init', '-q', '--template=', scratch]);
    // ls-tree takes no pathspec magic: the whole listing, filtered here (only when the rules moved).
    const { stdout } = await repo.git.run(repo.root, ['ls-tree', '-r', '-z', commit]);
    for (const entry of stdout.split('\0')) {
      const tab = entry.indexOf('\t');
      if (tab < 0) continue;
      const [, type, oid] = entry.slice(0, tab).split(' ');
      const rel = entry.slice(tab + 1);
      if (type !== 'blob' || path.posix.basename(rel) !== '.gitignore') continue;
      const file = path.join(scratch, rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, (await repo.git.run(repo.root, ['cat-file', 'blob', oid])).stdout);
    }
    const exclude = path.join(repo.gitDir, 'info', 'exclude');
    if (fs.existsSync(exclude)) {
      fs.mkdirSync(path.join(scratch, '.git', 'info'), { recursive: true });
      fs.copyFileSync(exclude, path.join(scratch, '.git', 'info', 'exclude'));
    }
    const asked = await repo.git.run(scratch, ['check-ignore', '--no-index', '-z', '--stdin'], {
      input: paths.map((p) => `./${p}`).join('\0'),
      okCodes: [1],
    });
    for (const p of asked.stdout.split('\0')) if (p) ignored.add(p.replace(/^\.\//, ''));
    return ignored;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** Born at or after `since` (ms): the file was created then. Unknown birth (0) is never "after". */
function bornSince(root: string, rel: string, since: number): boolean {
  try {
    const born = fs.lstatSync(fsPath(path.join(root, rel))).birthtimeMs;
    return born > 0 && born >= since;
  } catch {
    return false;
  }
}

/**
 * Before a worktree update from `from` to `to`: the files it deletes that `to`'s rules ignore and that stay on disk
 * (`bornAfter`: an Undo's turn start; files born since are the turn's and go). Their bytes are in `from`.
 */
export async function ignoredDeletionsToKeep(
  repo: GitRepository,
  to: string,
  changes: readonly TreeChange[],
  bornAfter: number | null,
): Promise<TreeChange[]> {
  const deleted = changes.filter((c) => c.oid === null && c.oldOid !== null && c.oldMode !== '160000');
  if (deleted.length === 0) return [];
  const ignored = await ignoredAt(
    repo,
    to,
    deleted.map((c) => c.path),
  );
  return deleted.filter((c) => ignored.has(c.path) && !(bornAfter !== null && bornSince(repo.root, c.path, bornAfter)));
}

/**
 * Moves `paths` into a folder of the state directory before a worktree update, so the update neither deletes
 * them nor refuses to write over them; `back` puts the same files (same inode, birth time) where they were after
 * it. Their bytes are also in a commit the restore reads (nothing is lost if a crash leaves them aside).
 */
export function moveAside(repo: GitRepository, opId: string, paths: readonly string[]): { back: () => void } {
  const aside = path.join(repo.stateDir, 'tmp', `aside-${opId.replace(/[^0-9A-Za-z-]/g, '_')}`);
  const moved: string[] = [];
  for (const p of paths) {
    const from = fsPath(path.join(repo.root, p));
    const to = fsPath(path.join(aside, p));
    fs.mkdirSync(path.dirname(path.join(aside, p)), { recursive: true });
    fs.renameSync(from, to);
    moved.push(p);
  }
  return {
    back: () => {
      for (const p of moved) {
        fs.mkdirSync(path.dirname(path.join(repo.root, p)), { recursive: true });
        fs.renameSync(fsPath(path.join(aside, p)), fsPath(path.join(repo.root, p)));
      }
      fs.rmSync(aside, { recursive: true, force: true });
    },
  };
}

/** `paths` written from `commit` into the working tree where nothing stands now (index untouched). */
async function writeFrom(repo: GitRepository, commit: string, paths: readonly string[]): Promise<void> {
  const absent = paths.filter((p) => !exists(repo.root, p));
  if (absent.length === 0) return;
  await repo.git.run(
    repo.root,
    ['restore', `--source=${commit}`, '--worktree', '--pathspec-from-file=-', '--pathspec-file-nul'],
    { env: { GIT_LITERAL_PATHSPECS: '1' }, input: absent.map((p) => `${p}\0`).join('') },
  );
}

function exists(root: string, rel: string): boolean {
  try {
    fs.lstatSync(fsPath(path.join(root, rel)));
    return true;
  } catch {
    return false;
  }
}

/**
 * The ignored entries on disk, relative to the root: files, and folders git ignores as a whole (`--directory`: one
 * entry ending in `/`, not walked). Read-only.
 */
export async function ignoredEntries(repo: GitRepository): Promise<string[]> {
  const { stdout } = await repo.git.run(repo.root, [
    'ls-files',
    '-z',
    '--others',
    '--ignored',
    '--exclude-standard',
    '--directory',
  ]);
  return stdout.split('\0').filter((p) => p.length > 0);
}

/**
 * Ignored files on disk that `to`'s rules would show (they would be left behind as untracked files, in no commit)
 * and that were born at or after `since`: an undone turn's output its own rule hid. Read-only.
 */
export async function hiddenOutputSince(repo: GitRepository, to: string, since: number): Promise<string[]> {
  const { stdout } = await repo.git.run(repo.root, ['ls-files', '-z', '--others', '--ignored', '--exclude-standard']);
  const candidates = stdout.split('\0').filter((p) => p.length > 0 && bornSince(repo.root, p, since));
  if (candidates.length === 0) return [];
  const stillIgnored = await ignoredAt(repo, to, candidates);
  const inTarget = new Set(
    (await repo.git.run(repo.root, ['ls-tree', '-r', '-z', '--name-only', to], {})).stdout
      .split('\0')
      .filter((p) => p.length > 0),
  );
  return candidates.filter((p) => !stillIgnored.has(p) && !inTarget.has(p));
}

/**
 * Saves `files` (repository-relative) into a private commit under `refs/agent-versions/ignored/<opId>` (durable),
 * then deletes them; over MAX_SAVED_BYTES in all, nothing is saved or deleted. Returns what was taken away.
 */
export async function saveAndRemove(repo: GitRepository, opId: string, files: readonly string[]): Promise<string[]> {
  if (files.length === 0) return [];
  let total = 0;
  for (const f of files) total += fs.lstatSync(fsPath(path.join(repo.root, f))).size;
  if (total > MAX_SAVED_BYTES) return [];
  const ref = `${IGNORED_REF_PREFIX}${opId}`;
  if (!(await readRef(repo, ref))) {
    const index = TemporaryIndex.create(repo);
    try {
      const env = { ...index.env, GIT_LITERAL_PATHSPECS: '1' };
      await repo.git.run(repo.root, ['read-tree', '--empty'], { env });
      await repo.git.run(repo.root, ['add', '-f', '--pathspec-from-file=-', '--pathspec-file-nul'], {
        env,
        input: files.map((f) => `${f}\0`).join(''),
      });
      const tree = (await repo.git.run(repo.root, ['write-tree'], { env })).stdout.trim();
      const commit = await createCommit(repo, {
        tree,
        parents: [],
        message: 'Agent Version History: ignored files an undone turn made\n',
        durable: true,
      });
      await repo.git.run(repo.root, ['update-ref', ref, commit]);
    } finally {
      index.dispose();
    }
  }
  for (const f of files) fs.rmSync(fsPath(path.join(repo.root, f)), { force: true });
  return [...files];
}

/** Redo of Undo `undoOpId`: the files it took away (saveAndRemove) written back where nothing stands now. */
export async function bringBackSaved(repo: GitRepository, undoOpId: string): Promise<void> {
  const saved = await readRef(repo, `${IGNORED_REF_PREFIX}${undoOpId}`);
  if (!saved) return;
  const { stdout } = await repo.git.run(repo.root, ['ls-tree', '-r', '-z', '--name-only', saved]);
  await writeFrom(
    repo,
    saved,
    stdout.split('\0').filter((p) => p.length > 0),
  );
}

/**
 * Ignored files standing where an update writes a file with the same bytes: nothing of theirs would be lost, so
 * they are not "in the way" (a Redo after an Undo that kept them). Read-only.
 */
export async function identicalIgnored(
  repo: GitRepository,
  changes: readonly TreeChange[],
  ignored: readonly string[],
): Promise<Set<string>> {
  const format = await objectFormatOf(repo);
  const wanted = new Map(changes.filter((c) => c.oid !== null && c.mode !== '120000').map((c) => [c.path, c.oid]));
  const same = new Set<string>();
  for (const p of ignored) {
    const oid = wanted.get(p);
    if (!oid) continue;
    try {
      const file = fsPath(path.join(repo.root, p));
      if (!fs.lstatSync(file).isFile()) continue;
      if (blobOid(fs.readFileSync(file), format) === oid) same.add(p);
    } catch {
      // unreadable: in the way, as before
    }
  }
  return same;
}
