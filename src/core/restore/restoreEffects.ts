import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { AvhError, ErrorReason, isAvhError, NOTHING_CHANGED } from '../errors';
import { readSymbolicHead } from '../git/healthProbe';
import { uncommittedPaths } from '../git/statusProbe';
import { parentsAndTrailer, readHead } from '../git/history';
import { CommitSpec, commitWorkingTree, compareAndSetRef, createCommit, ZERO_OID } from '../git/workingTree';
import { printableName } from '../git/pathBytes';
import { failingFilters, readOnlyFolders } from '../git/writeBlockers';
import { blobOid, ignoredPathsInTheWay, TreeChange, treeChanges, updateWorktreeBetween } from '../git/worktreeUpdate';
import {
  bringBackSaved,
  hiddenOutputSince,
  identicalIgnored,
  ignoredDeletionsToKeep,
  ignoreRulesDiffer,
  moveAside,
  saveAndRemove,
} from '../git/ignoreRules';
import { getTurn } from '../turns/turnRecords';
import { INTERRUPTED_SUBJECT, restoreSubject, SAVED_EDITS_SUBJECT } from '../domain/promptSummary';
import { failpoint } from '../failpoints';
import type { OperationRow } from '../operations/operationRecords';

/**
 * The restore's git effects. Each is safe to run twice: it first checks whether its result is already in
 * place. Every commit we make carries `Agent-Operation: <id>` so a crash can be classified by probing git.
 */

export const branchRef = (op: OperationRow) => `refs/heads/${op.source_branch}`;
/** The commit the restore builds on: the preserved partial work when there is one, else the source HEAD. */
export const baseOf = (op: Pick<OperationRow, 'preserve_commit' | 'source_head'>) =>
  op.preserve_commit ?? op.source_head;
const opDate = (op: Pick<OperationRow, 'started_at'>) => Math.floor(op.started_at / 1000);

export async function currentHead(ctx: RepoContext): Promise<string | null> {
  return readHead(ctx.repo);
}

/** If `commit` is this operation's own preservation commit (child of the source HEAD with our trailer), true. */
export async function isOwnPreserveCommit(ctx: RepoContext, op: OperationRow, commit: string): Promise<boolean> {
  const { parents, value } = await parentsAndTrailer(ctx.repo, commit, 'Agent-Operation');
  return parents === (op.source_head === ZERO_OID ? '' : op.source_head) && value === op.id;
}

/**
 * Commits the whole dirty tree as `[Interrupted] …` on the branch (durably, staged tree kept reachable) and makes
 * it the index, through the one commit path. Runs only for a dirty tree, and leaves it clean: a retried Undo finds
 * nothing to preserve and makes no second [Interrupted] commit.
 */
export async function preserveDirtyTree(ctx: RepoContext, op: OperationRow): Promise<string> {
  const head = await currentHead(ctx);
  if (head && head !== op.source_head && (await isOwnPreserveCommit(ctx, op, head))) return head;
  // An Undo that keeps later work saves the user's own uncommitted edits, not a turn's partial work: no Agent-Turn.
  const keepsLater = op.scope !== 'everything';
  const trailers = [
    `Agent-Operation: ${op.id}`,
    ...(op.turn_id && !keepsLater ? [`Agent-Turn: ${op.turn_id}`] : []),
  ].join('\n');
  const result = await commitWorkingTree(ctx.repo, {
    ref: branchRef(op),
    expected: op.source_head,
    parent: op.source_head === ZERO_OID ? null : op.source_head, // an unborn branch: the saved work is its root commit
    always: true,
    message: `${keepsLater ? SAVED_EDITS_SUBJECT : INTERRUPTED_SUBJECT}\n\n${trailers}\n`,
    reflog: 'agent-versions: save partial changes',
    durable: true,
    date: opDate(op),
    installIndex: true,
    step: (name) => failpoint(`preserve-dirty-tree:${name}`),
  });
  return result.commit!;
}

/**
 * What the restore commit holds: a tree and its subject (`[Restore] …`, or `[Revert] …` for an Undo that keeps
 * later work).
 */
export interface RestoreContent {
  tree: string;
  subject: string;
}

/** The content of a restore to `target_commit` as a whole (Undo of everything since a turn, Redo, Restore). */
export const wholeTargetContent = (op: Pick<OperationRow, 'target_commit'>): RestoreContent => ({
  tree: `${op.target_commit}^{tree}`,
  subject: restoreSubject(op.target_commit),
});

type RestoreCommitInputs = Pick<
  OperationRow,
  'id' | 'kind' | 'scope' | 'turn_id' | 'target_commit' | 'preserve_commit' | 'source_head' | 'started_at'
>;

/** The forward restore commit: `content`'s tree, parent = base, the operation's trailers and date. */
function restoreCommitSpec(op: RestoreCommitInputs, content: RestoreContent): CommitSpec {
  const undoesTurn = op.turn_id && op.kind === 'undo' && op.scope !== 'file';
  const trailers = [`Agent-Operation: ${op.id}`, ...(undoesTurn ? [`Agent-Undo-Turn: ${op.turn_id}`] : [])].join('\n');
  return {
    tree: content.tree,
    parents: [baseOf(op)],
    message: `${content.subject}\n\n${trailers}\n`,
    date: opDate(op),
  };
}

const specKey = (spec: CommitSpec) => JSON.stringify([spec.tree, spec.parents, spec.message, spec.date]);

/**
 * A restore commit object written ahead, while planning still waits for the working-tree probe (an object only:
 * no ref, index or file changes; unused, it stays unreachable). The saga uses it only when it asks for exactly
 * the same commit (same tree, parent, message and date), else it writes its own.
 */
export interface PrewrittenCommit {
  key: string;
  commit: Promise<string | null>;
}

export function prewriteRestoreCommit(
  ctx: RepoContext,
  op: RestoreCommitInputs,
  content: RestoreContent = wholeTargetContent(op),
): PrewrittenCommit {
  const spec = restoreCommitSpec(op, content);
  return { key: specKey(spec), commit: createCommit(ctx.repo, spec).catch(() => null) };
}

/** Builds the forward restore commit object; deterministic, so a re-run makes the same oid. */
export async function writeRestoreCommit(
  ctx: RepoContext,
  op: OperationRow,
  content: RestoreContent = wholeTargetContent(op),
  prewritten: PrewrittenCommit | null = null,
): Promise<string> {
  const spec = restoreCommitSpec(op, content);
  const ahead = prewritten?.key === specKey(spec) ? await prewritten.commit : null;
  return ahead ?? createCommit(ctx.repo, spec);
}

const MAX_PROVEN_FILES = 2000;
const MAX_PROVEN_BYTES = 64 * 1024 * 1024;

/**
 * Proves the restore's postcondition cheaply, right after this process moved the branch to the restore
 * commit: HEAD is still attached to the branch, the index equals the restore commit, and every path the update
 * wrote holds exactly the target blob and mode (deleted paths are gone). The rest of the tree was clean at
 * preflight and was not written (and read-tree wrote the index from the restore commit), so the working tree
 * equals the target; for an Undo that keeps later work, whose postcondition is those paths alone (the rest may
 * hold the user's own edits), read-tree wrote their index entries from the restore commit. Returns false whenever it
 * cannot prove it (a filter or line-ending conversion, a large update, anything unexpected); the caller then runs the
 * full probe.
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
    // The repository's own hash (unknown only for a repository git did not resolve: then not proven here).
    if (!ctx.repo.objectFormat || blobOid(data, ctx.repo.objectFormat) !== change.oid) return false;
  }
  return true;
}

/**
 * read-tree refused before it wrote anything: a path it would write holds uncommitted or staged changes, or an
 * untracked file, or the index has unmerged entries or is locked. git checks all of these before the first write
 * (unpack-trees), so the index, the working tree and the branch are exactly as they were.
 */
export class WorktreeUpdateRefused extends AvhError {
  constructor(cause: AvhError) {
    super(
      cause.reason,
      // A refusal of the git layer that names its file (a local-only file, issue 25) says so itself.
      typeof cause.details.file === 'string'
        ? cause.statement
        : 'Files this restore would write have changes of their own (uncommitted, staged or untracked), or git is ' +
            'busy with the index.',
      {},
      { cause, closing: NOTHING_CHANGED },
    );
    this.name = 'WorktreeUpdateRefused';
  }
}

const REFUSED_BEFORE_WRITING: readonly ErrorReason[] = ['dirty-conflict', 'unmerged-entries', 'index-locked'];

/**
 * Moves index and working tree from base to the restore commit with a two-tree merge (refuses to overwrite local
 * changes).
 */
export async function updateWorktree(ctx: RepoContext, op: OperationRow, restoreCommit: string): Promise<void> {
  try {
    const from = baseOf(op);
    const rules = await acrossIgnoreRules(ctx, op, from, restoreCommit);
    try {
      // Local-only files come back from the target's local layer only when the whole target is restored.
      await updateWorktreeBetween(ctx.repo, from, restoreCommit, op.scope === 'everything' ? op.target_commit : null);
    } finally {
      rules?.aside.back(); // refused or not, the files moved aside go back where they were
    }
    if (rules?.redoneUndo) await bringBackSaved(ctx.repo, rules.redoneUndo);
  } catch (error) {
    if (error instanceof AvhError && REFUSED_BEFORE_WRITING.includes(error.reason))
      throw new WorktreeUpdateRefused(error);
    throw error;
  }
}

/**
 * A whole-target restore between commits whose `.gitignore` files differ (git/ignoreRules.ts): before the update,
 * an Undo's turn output its own rule hid is saved and taken away, and the files the target's rules ignore that the
 * update would delete, or that hold exactly what it writes, are moved aside; what it returns is done after the
 * update (those files moved back; for a Redo, what its Undo took away written back). Null when the rules did not
 * move.
 */
async function acrossIgnoreRules(
  ctx: RepoContext,
  op: OperationRow,
  from: string,
  to: string,
): Promise<{ aside: { back: () => void }; redoneUndo: string | null } | null> {
  if (op.scope !== 'everything' || from === ZERO_OID || !(await ignoreRulesDiffer(ctx.repo, from, to))) return null;
  const turn = op.kind === 'undo' && op.turn_id ? await ctx.store.read((r) => getTurn(r, op.turn_id!)) : undefined;
  const since = turn ? turn.created_at : null;
  const changes = await treeChanges(ctx.repo, from, to);
  const kept = await ignoredDeletionsToKeep(ctx.repo, to, changes, since);
  if (since !== null) await saveAndRemove(ctx.repo, op.id, await hiddenOutputSince(ctx.repo, to, since));
  const inTheWay = await ignoredPathsInTheWay(ctx.repo, changes);
  const same = await identicalIgnored(ctx.repo, changes, inTheWay);
  // Both kinds go aside and come back as the same files (a later Undo still knows they predate its turn).
  const aside = moveAside(ctx.repo, op.id, [...kept.map((c) => c.path), ...same]);
  const redoneUndo =
    op.kind === 'redo'
      ? ((
          await ctx.store.read((r) =>
            r.get<{ op_id: string }>('SELECT op_id FROM redo_entries WHERE branch = ? ORDER BY position DESC LIMIT 1', [
              op.source_branch,
            ]),
          )
        )?.op_id ?? null)
      : null;
  return { aside, redoneUndo };
}

/**
 * An Undo that keeps later work whose worktree update failed after its branch moved (the two run side by side):
 * the branch goes back to base, compare-and-set, so the failure is classified on the repository as it was.
 * Never throws: wherever the branch is left, classification reads it.
 */
export async function moveBranchBack(ctx: RepoContext, op: OperationRow, restoreCommit: string): Promise<void> {
  try {
    await compareAndSetRef(
      ctx.repo,
      branchRef(op),
      baseOf(op),
      restoreCommit,
      `agent-versions: ${op.kind} not applied`,
    );
  } catch {
    // Moved by someone else meanwhile: classification finds it there.
  }
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

/**
 * Refuses (ordinary failure, nothing changed) when the update could not land whole (issue 25): a folder it must
 * write into is read-only (read-tree would only warn, half-applying the restore), an ignored file is in the way (it
 * would be overwritten or removed), or a file's smudge filter fails (read-tree would write the stored form). Each
 * refusal names the files.
 */
export async function refuseWritesThatCannotLand(ctx: RepoContext, changes: readonly TreeChange[]): Promise<void> {
  const readOnly = readOnlyFolders(ctx.repo.root, changes);
  if (readOnly.length > 0) {
    const one = readOnly.length === 1;
    throw new AvhError(
      'folder-read-only',
      `${namedList(readOnly)} ${one ? 'is' : 'are'} read-only, so this version cannot be written there. Make ` +
        `${one ? 'it' : 'them'} writable (chmod u+w), then try again.`,
      { count: readOnly.length, files: readOnly.join('\n') },
      { closing: NOTHING_CHANGED },
    );
  }
  const inTheWay = await ignoredPathsInTheWay(ctx.repo, changes);
  // An ignored file holding exactly what the update writes there loses nothing (a Redo after an Undo that kept it).
  const same = inTheWay.length > 0 ? await identicalIgnored(ctx.repo, changes, inTheWay) : new Set<string>();
  const ignored = inTheWay.filter((p) => !same.has(p));
  if (ignored.length > 0) {
    const one = ignored.length === 1;
    throw new AvhError(
      'dirty-conflict',
      `${ignored.length} ignored file${one ? '' : 's'} (by .gitignore, or left out of versions as a likely ` +
        `secret) would be overwritten by this version: ${namedList(ignored)}. Move ${one ? 'it' : 'them'} aside, ` +
        'then try again.',
      { count: ignored.length, files: ignored.join('\n') },
      { closing: NOTHING_CHANGED },
    );
  }
  const [failing] = await failingFilters(ctx.repo, changes);
  if (failing) {
    throw new AvhError(
      'filter-failed',
      `The smudge filter '${failing.driver}' of ${printableName(failing.path)} (.gitattributes) fails, so this ` +
        'version would be written in its stored form. Fix the filter (git config filter.' +
        `${failing.driver}.smudge), then try again.`,
      { file: failing.path },
      { closing: NOTHING_CHANGED },
    );
  }
}

/**
 * The refusal of a restore over uncommitted changes that are no cancelled turn's (docs/product-contract.md §5.2),
 * naming the files (up to ten): after a file-system monitor hid an edit from git, this is what tells the user what
 * would have gone.
 */
export async function dirtyTreeRefusal(ctx: RepoContext, laterWork: boolean): Promise<AvhError> {
  const files = await uncommittedPaths(ctx.repo).catch(() => []);
  const named = files.length > 0 ? ` (${namedList(files)})` : '';
  return new AvhError(
    'dirty-conflict',
    `You have uncommitted changes${named} that are not from a cancelled agent turn. Commit or stash them, then ` +
      `try again${laterWork ? ' (or choose Undo Only This Turn, which keeps them)' : ''}.`,
    files.length > 0 ? { count: files.length, files: files.join('\n') } : {},
    { closing: NOTHING_CHANGED },
  );
}

const NAMED = 10;

/** Up to ten names, then how many more ("a, b and c"; "a, …, j and 4 more"). */
function namedList(names: readonly string[]): string {
  const shown = names.slice(0, NAMED).map(printableName);
  const more = names.length - shown.length;
  if (more > 0) return `${shown.join(', ')} and ${more} more`;
  return shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}
