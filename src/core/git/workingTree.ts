import { AvhError } from '../errors';
import { createCommit, emptyTree } from './commitObjects';
import { GitCommandError } from './gitErrors';
import { excludeLargeFiles } from './heavyFolders';
import { clearIndexRepair, followIndex, recordIndexRepair } from './indexInstall';
import { LOCAL_LAYER_SUBJECT, LOCAL_REF_PREFIX } from './localOnlyFiles';
import { compareAndSetRef, ZERO_OID } from './refUpdate';
import { type PathFromCommit, takePathsFromCommits } from './pathsFromCommit';
import { objectFormatFromFiles, type GitRepository } from './repository';
import type { StatusListing } from './statusProbe';
import { readCachedIndexTree } from './indexFlags';
import { commitTreeOf, isLooseObject } from './looseObject';
import { excludeNewSecretPaths } from './secretExclusion';
import type { SecretFinding } from './secretScanner';
import { TemporaryIndex } from './temporaryIndex';
import { snapshotWorkingTree, type SnapshotFilters, type WorkingTreeSnapshot } from './workingTreeSnapshot';

/**
 * The one commit path of every version, base snapshot and preservation commit (commitWorkingTree), and the filters
 * every snapshot of ours passes through. The steps it is made of live beside it: temporaryIndex.ts,
 * workingTreeSnapshot.ts, commitObjects.ts, refUpdate.ts, indexInstall.ts; this module re-exports them, so callers
 * keep one import.
 */

export { clearOwnStaleIndexLock, indexRepairPending, installIndex, repairRecordedIndex } from './indexInstall';
export { createCommit, emptyTree, type CommitSpec } from './commitObjects';
export { compareAndSetRef, readRef, ZERO_OID } from './refUpdate';
export { recordedProcessGone, removeOrphanedTemporaryIndexes, TemporaryIndex } from './temporaryIndex';
export { snapshotWorkingTree, type SnapshotFilters, type WorkingTreeSnapshot } from './workingTreeSnapshot';
export type { PathFromCommit } from './pathsFromCommit';

/** What leaves new files out of our versions: secrets (issue 15), then files too large for a version (issue 13). */
export const VERSION_FILTERS: SnapshotFilters = { secrets: excludeNewSecretPaths, large: excludeLargeFiles };

/**
 * Stages the whole user-visible working state into `index` and writes its tree, leaving out nested repositories,
 * new files that look like secrets and new files too large for a version (snapshotWorkingTree with the version
 * filters). The single step every version, snapshot and preservation commit goes through. Never touches HEAD, the
 * user's index or the working tree.
 */
export function writeWorkingTree(
  repo: GitRepository,
  index: TemporaryIndex,
  options: { listed?: StatusListing } = {},
): Promise<WorkingTreeSnapshot> {
  return snapshotWorkingTree(repo, index, VERSION_FILTERS, options);
}

/** Private refs keeping a staged tree reachable, one per commit that preserved it (named after that commit). */
export const STAGED_REF_PREFIX = 'refs/agent-versions/staged/';
export const STAGED_SUBJECT = 'Agent Version History: staged changes';

export interface WorkingTreeCommitRequest {
  /** The ref the commit goes on: the attached branch, or a private ref (created when `expected` is ZERO_OID). */
  ref: string;
  expected: string;
  /** The commit's parent: the HEAD the working tree was compared with; null for a root commit (an unborn branch). */
  parent: string | null;
  parentTree?: string;
  /** No commit when the working tree's tree equals this (default: the parent's tree). */
  unchangedTree?: string;
  /** Make a commit even when nothing differs from `unchangedTree` (base snapshots of an index-only change). */
  always?: boolean;
  /**
   * What the `git status` this commit is planned from listed, moments before: the snapshot stages exactly those
   * paths and looks at nothing else (snapshotWorkingTree; issue 36). A file changed in between is then the next
   * commit's, as one changed a moment after the commit would be. Without it the whole tree is walked.
   */
  listed?: StatusListing;
  message: string;
  reflog: string;
  durable?: boolean;
  date?: number;
  /** Make the new tree the repository's index after the ref moved (versions on the branch). */
  installIndex: boolean;
  /**
   * Paths the commit takes from another commit instead of the working tree (another chat's running turn wrote them:
   * docs/design/two-chats.md); the working tree and the user's index keep what they hold.
   */
  fromCommits?: readonly PathFromCommit[];
  /** Test crash points between the steps. */
  step?: (name: 'after-write-tree' | 'after-commit' | 'after-update-ref') => void;
}

export interface WorkingTreeCommitResult {
  /** The new commit (now at `ref`), or null when the tree was unchanged and nothing moved. */
  commit: string | null;
  /**
   * The working state's tree: the commit's own, unless local-only files differ from the index (then it is the tree
   * of the commit's local layer, localOnlyFiles.ts). What `unchangedTree` is compared with.
   */
  tree: string;
  /** The tree of `commit` (the branch's tree: local-only files as the index holds them); null with no commit. */
  commitTree: string | null;
  /**
   * The staged tree kept reachable (commit under STAGED_REF_PREFIX), when the index differed from HEAD and the working
   * tree.
   */
  staged: string | null;
  nested: string[];
  excluded: SecretFinding[];
  large: string[];
  /** False when the index could not be made the new tree now (recorded for reconciliation to repair). */
  indexInstalled: boolean;
}

/**
 * The one commit path: temporary index → stage everything → write-tree → commit-tree → compare-and-set the
 * ref → install the index. Failure contract: any failure before the ref moved throws and nothing moved (no version);
 * once the ref moved the result always names the commit; a HEAD that moved while the index could not follow is
 * repaired now or recorded for reconciliation, never left for the user to commit a reversal. What the user had
 * staged (an index differing from HEAD and from the working tree) stays reachable through a private ref and an
 * `Agent-Staged` trailer. Never touches the working tree.
 */
export async function commitWorkingTree(
  repo: GitRepository,
  request: WorkingTreeCommitRequest,
): Promise<WorkingTreeCommitResult> {
  const index = TemporaryIndex.create(repo);
  // The index as the user left it, as a tree: its cache tree's root when git would print just that (no process),
  // else written from its own copy, side by side with staging everything.
  const cached = cachedIndexTree(repo, index);
  const asLeft = cached === null ? index.twin(repo) : null;
  try {
    const [left, written] = await Promise.allSettled([
      cached ?? writeIndexTree(repo, asLeft!),
      writeWorkingTree(repo, index, { listed: request.listed }),
    ]);
    if (left.status === 'rejected') throw left.reason;
    if (written.status === 'rejected') throw written.reason;
    const indexTree = left.value;
    const { nested, excluded, large } = written.value;
    // Another chat's reported paths as they were before it wrote them (docs/design/two-chats.md); the real tree
    // (local-only files' content, localOnlyFiles.ts) follows the branch's tree unless a local-only file is in it.
    const tree = request.fromCommits?.length
      ? await takePathsFromCommits(repo, index, request.fromCommits)
      : written.value.tree;
    const realTree = written.value.realTree === written.value.tree ? tree : written.value.realTree;
    request.step?.('after-write-tree');
    const parentTree =
      request.parentTree ??
      (request.parent === null ? await emptyTree(repo) : await commitTreeOf(repo, request.parent));
    if (realTree === (request.unchangedTree ?? parentTree) && !request.always) {
      return {
        commit: null,
        tree: realTree,
        commitTree: null,
        staged: null,
        nested,
        excluded,
        large,
        indexInstalled: false,
      };
    }
    const parents = request.parent === null ? [] : [request.parent];
    let staged: string | null = null;
    if (indexTree !== parentTree && indexTree !== tree) {
      staged = await createCommit(repo, {
        tree: indexTree,
        parents,
        message: `${STAGED_SUBJECT}\n`,
        durable: request.durable,
        date: request.date,
      });
    }
    const message = staged ? withTrailer(request.message, `Agent-Staged: ${staged}`) : request.message;
    const commit = await createCommit(repo, { tree, parents, message, durable: request.durable, date: request.date });
    // Local-only files that differ from the index: their real content is kept beside the commit (localOnlyFiles.ts).
    const layer =
      realTree === tree
        ? null
        : await createCommit(repo, {
            tree: realTree,
            parents: [commit],
            message: `${LOCAL_LAYER_SUBJECT}\n`,
            durable: request.durable,
            date: request.date,
          });
    request.step?.('after-commit');
    // Intent first: a crash between the ref move and the index swap leaves a marker reconciliation acts on.
    if (request.installIndex) recordIndexRepair(repo, request.ref, commit);
    try {
      await compareAndSetRef(repo, request.ref, commit, request.expected, request.reflog, request.durable, [
        ...(staged ? [{ ref: `${STAGED_REF_PREFIX}${commit}`, oid: staged }] : []),
        ...(layer ? [{ ref: `${LOCAL_REF_PREFIX}${commit}`, oid: layer }] : []),
      ]);
    } catch (error) {
      if (request.installIndex) clearIndexRepair(repo);
      throw error;
    }
    request.step?.('after-update-ref');
    const indexInstalled = request.installIndex ? await followIndex(repo, index, request.durable ?? false) : false;
    return { commit, tree: realTree, commitTree: tree, staged, nested, excluded, large, indexInstalled };
  } finally {
    asLeft?.dispose();
    index.dispose();
  }
}

/**
 * What `git write-tree` prints for the seed of `index` (the user's index as left) when it needs no computing: the
 * root of its cache tree, valid and an object of the repository (write-tree prints exactly that then). Read before
 * anything stages into the copy; null when git has to write it (writeIndexTree).
 */
function cachedIndexTree(repo: GitRepository, index: TemporaryIndex): string | null {
  if (index.seededFrom === null) return null;
  const tree = readCachedIndexTree(index.file, objectFormatFromFiles(repo));
  return tree !== null && isLooseObject(repo, tree) ? tree : null;
}

export const FIRST_BASE_SUBJECT = '[Base] Files before the first agent turn';

export interface FirstBase extends Omit<WorkingTreeSnapshot, 'realTree'> {
  /** The commit Undo of the first turn returns to. */
  commit: string;
  /** Whether it is the branch's new root commit (the folder held files), or a private root commit of the empty tree. */
  onBranch: boolean;
}

/**
 * The base of the first turn on an unborn branch (issue 13), through the one commit path. When the folder holds
 * files, they become the branch's root commit `[Base] Files before the first agent turn` (durable; the index
 * follows, so `git status` stays as it was): the user's files are in history before the agent touches anything.
 * When it holds nothing, the branch stays unborn (the turn's `[Agent]` commit will be its root) and a private root
 * commit of the empty tree under `privateRef` is the base Undo returns to. Never touches the working tree.
 */
export async function commitFirstBase(
  repo: GitRepository,
  branch: string,
  privateRef: string,
  privateMessage: string,
): Promise<FirstBase> {
  const onBranch = await commitWorkingTree(repo, {
    ref: `refs/heads/${branch}`,
    expected: ZERO_OID,
    parent: null,
    message: `${FIRST_BASE_SUBJECT}\n`,
    reflog: 'agent-versions: files before the first agent turn',
    durable: true,
    installIndex: true,
  });
  if (onBranch.commit) return { ...onBranch, commit: onBranch.commit, onBranch: true };
  const commit = await createCommit(repo, { tree: onBranch.tree, parents: [], message: privateMessage });
  await compareAndSetRef(repo, privateRef, commit, ZERO_OID, 'agent-versions: base snapshot');
  return { ...onBranch, commit, onBranch: false };
}

/** The tree of the index as the user left it (a copy of it); unmerged entries fail with 'unmerged-entries'. */
async function writeIndexTree(repo: GitRepository, index: TemporaryIndex): Promise<string> {
  try {
    return (await repo.git.run(repo.root, ['write-tree'], { env: index.env })).stdout.trim();
  } catch (error) {
    if (
      error instanceof GitCommandError &&
      (error.gitErrorCode === 'unmerged-entries' || error.gitErrorCode === 'tree-not-written')
    ) {
      throw new AvhError('unmerged-entries', 'The repository has unresolved merge conflicts.', {}, { cause: error });
    }
    throw error;
  }
}

function withTrailer(message: string, trailer: string): string {
  const body = message.replace(/\s+$/, '');
  const last = body.split('\n\n').pop() ?? '';
  const hasTrailers = body.includes('\n\n') && last.split('\n').every((line) => /^[A-Za-z][A-Za-z-]*: /.test(line));
  return `${body}${hasTrailers ? '\n' : '\n\n'}${trailer}\n`;
}
