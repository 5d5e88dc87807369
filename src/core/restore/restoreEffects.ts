import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { isAvhError } from '../errors';
import { runGit } from '../git/gitRunner';
import { compareAndSetRef, createCommit, installIndex, TemporaryIndex, writeWorkingTree } from '../git/workingTree';
import { INTERRUPTED_SUBJECT, restoreSubject } from '../turns/promptSummary';
import { readSymbolicHead } from '../turns/turnLedger';
import { failpoint } from '../failpoints';
import type { OperationRow } from './operationRecords';

/**
 * The restore's git effects. Each is safe to run twice: it first checks whether its result is already in
 * place. Every commit we make carries `Agent-Operation: <id>` so a crash can be classified by probing git.
 */

export const branchRef = (op: OperationRow) => `refs/heads/${op.source_branch}`;
/** The commit the restore builds on: the preserved partial work when there is one, else the source HEAD. */
export const baseOf = (op: OperationRow) => op.preserve_commit ?? op.source_head;
const opDate = (op: OperationRow) => Math.floor(op.started_at / 1000);

export async function currentHead(ctx: RepoContext): Promise<string | null> {
  try {
    return (await runGit(ctx.repo.root, ['rev-parse', '--verify', '-q', 'HEAD'])).stdout.trim() || null;
  } catch {
    return null;
  }
}

/** If `commit` is this operation's own preservation commit (child of the source HEAD with our trailer), true. */
export async function isOwnPreserveCommit(ctx: RepoContext, op: OperationRow, commit: string): Promise<boolean> {
  const { stdout } = await runGit(ctx.repo.root, ['log', '-1', '--format=%P%x00%(trailers:key=Agent-Operation,valueonly,separator=%x2c)', commit, '--']);
  const [parents, trailer] = stdout.trim().split('\0');
  return parents === op.source_head && (trailer ?? '').trim() === op.id;
}

/** Commits the whole dirty tree as `[Interrupted] …` on the branch (durably) and makes it the index. */
export async function preserveDirtyTree(ctx: RepoContext, op: OperationRow): Promise<string> {
  const head = await currentHead(ctx);
  if (head && head !== op.source_head && (await isOwnPreserveCommit(ctx, op, head))) return head;
  const index = TemporaryIndex.create(ctx.repo);
  try {
    const tree = await writeWorkingTree(ctx.repo, index);
    failpoint('preserve-dirty-tree:after-write-tree');
    const trailers = [`Agent-Operation: ${op.id}`, ...(op.turn_id ? [`Agent-Turn: ${op.turn_id}`] : [])].join('\n');
    const commit = await createCommit(ctx.repo, { tree, parents: [op.source_head], message: `${INTERRUPTED_SUBJECT}\n\n${trailers}\n`, durable: true, date: opDate(op) });
    failpoint('preserve-dirty-tree:after-commit');
    await compareAndSetRef(ctx.repo, branchRef(op), commit, op.source_head, 'agent-versions: save partial changes', true);
    failpoint('preserve-dirty-tree:after-update-ref');
    if (!installIndex(ctx.repo, index, true)) await runGit(ctx.repo.root, ['reset', '-q']);
    return commit;
  } finally {
    index.dispose();
  }
}

/** Builds the forward `[Restore]` commit object (target tree, parent = base); deterministic, so a re-run makes the same oid. */
export async function writeRestoreCommit(ctx: RepoContext, op: OperationRow): Promise<string> {
  const trailers = [`Agent-Operation: ${op.id}`, ...(op.turn_id && op.kind === 'undo' ? [`Agent-Undo-Turn: ${op.turn_id}`] : [])].join('\n');
  return createCommit(ctx.repo, {
    tree: `${op.target_commit}^{tree}`,
    parents: [baseOf(op)],
    message: `${restoreSubject(op.target_commit)}\n\n${trailers}\n`,
    date: opDate(op),
  });
}

/** True when the index equals `commit`'s tree and every tracked file matches the index, with no untracked files. */
export async function worktreeMatches(ctx: RepoContext, commit: string): Promise<boolean> {
  const env = { GIT_OPTIONAL_LOCKS: '0' };
  const cached = await runGit(ctx.repo.root, ['diff-index', '--cached', '--quiet', '--no-renames', commit, '--'], { env, okCodes: [1] });
  if (cached.code !== 0) return false;
  const files = await runGit(ctx.repo.root, ['diff-files', '--quiet', '--no-renames', '--ignore-submodules=dirty'], { env, okCodes: [1] });
  if (files.code !== 0) return false;
  const others = await runGit(ctx.repo.root, ['ls-files', '--others', '--exclude-standard', '-z', '--directory', '--no-empty-directory'], { env });
  return others.stdout.length === 0;
}

export interface TreeChange {
  path: string;
  /** The mode in the commit compared from ('000000' when that commit does not have the path). */
  oldMode: string;
  /** The mode and blob in the target ('000000' / null when the target deletes the path). */
  mode: string;
  oid: string | null;
}

/** The entries that differ between two commits: what a worktree update from `from` to `to` writes or deletes. */
export async function treeChanges(ctx: RepoContext, from: string, to: string): Promise<TreeChange[]> {
  const { stdout } = await runGit(ctx.repo.root, ['diff-tree', '-r', '-z', '--no-renames', from, to, '--']);
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
 * How many ignored files (or ignored files standing where a folder must go) sit where the restore would write.
 * git's worktree update treats ignored files as expendable; we never touch them, so such a restore is refused
 * before the worktree moves. `changes` compare the target with a commit equal to the working tree minus ignored
 * files (HEAD of a clean tree, or the [Interrupted] commit just made), so whatever exists at a path that commit
 * lacks is ignored.
 */
export function ignoredFilesInTheWay(ctx: RepoContext, changes: readonly TreeChange[]): number {
  const inTheWay = changes
    .filter((c) => c.oid !== null && c.oldMode === '000000')
    .map((c) => occupiedPrefix(ctx.repo.root, c.path))
    .filter((p): p is string => p !== null);
  return new Set(inTheWay).size;
}

/** The path itself if something exists there, or the first parent folder position that holds a non-folder. */
function occupiedPrefix(root: string, rel: string): string | null {
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const prefix = parts.slice(0, i).join('/');
    try {
      if (!fs.lstatSync(path.join(root, prefix)).isDirectory()) return prefix;
    } catch {
      return null; // the folder does not exist yet: nothing in the way below it
    }
  }
  try {
    fs.lstatSync(path.join(root, rel));
    return rel;
  } catch {
    return null;
  }
}

const MAX_PROVEN_FILES = 2000;
const MAX_PROVEN_BYTES = 64 * 1024 * 1024;

/**
 * Proves the restore's postcondition cheaply, right after this process moved the branch to the restore
 * commit: HEAD is still attached to the branch, the index equals the restore commit, and every path the update
 * wrote holds exactly the target blob and mode (deleted paths are gone). The rest of the tree was clean at
 * preflight and was not written (and read-tree wrote the index from the restore commit), so the working tree
 * equals the target. Returns false whenever it cannot prove it (a filter or line-ending conversion, a large
 * update, anything unexpected); the caller then runs the full probe.
 */
export function restoredPathsMatch(ctx: RepoContext, op: OperationRow, changes: readonly TreeChange[]): boolean {
  if (changes.length > MAX_PROVEN_FILES || readSymbolicHead(ctx.repo.gitDir) !== branchRef(op)) return false;
  let bytes = 0;
  for (const change of changes) {
    const file = path.join(ctx.repo.root, change.path);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      if (change.oid === null) continue; // deleted, as it should be
      return false;
    }
    if (change.oid === null) return false;
    let data: Buffer;
    if (change.mode === '120000') {
      if (!st.isSymbolicLink()) return false;
      data = Buffer.from(fs.readlinkSync(file));
    } else if (change.mode === '100644' || change.mode === '100755') {
      if (!st.isFile() || ((st.mode & 0o100) !== 0) !== (change.mode === '100755')) return false;
      bytes += st.size;
      if (bytes > MAX_PROVEN_BYTES) return false;
      data = fs.readFileSync(file);
    } else {
      return false; // submodules and anything else: let the full probe decide
    }
    const oid = crypto.createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
    if (oid !== change.oid) return false;
  }
  return true;
}

/** Moves index and working tree from base to the restore commit with a two-tree merge (refuses to overwrite local changes). */
export async function updateWorktree(ctx: RepoContext, op: OperationRow, restoreCommit: string): Promise<void> {
  await runGit(ctx.repo.root, ['read-tree', '-m', '-u', baseOf(op), restoreCommit]);
}

/** Compare-and-set the branch from base to the restore commit; already there (a re-run) counts as done. */
export async function updateBranch(ctx: RepoContext, op: OperationRow, restoreCommit: string): Promise<void> {
  try {
    await compareAndSetRef(ctx.repo, branchRef(op), restoreCommit, baseOf(op), `agent-versions: ${op.kind}`);
  } catch (error) {
    if (isAvhError(error, 'ref-moved') && (await currentHead(ctx)) === restoreCommit) return;
    throw error;
  }
}
