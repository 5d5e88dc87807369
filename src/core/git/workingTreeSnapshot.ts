import type { SecretFinding } from './secretScanner';
import { coverAgain, uncoverHiddenEntries } from './localOnlyFiles';
import type { GitRepository } from './repository';
import type { StatusListing } from './statusProbe';
import type { TemporaryIndex } from './temporaryIndex';

export interface WorkingTreeSnapshot {
  /** The tree for the branch: the working state, with local-only files (localOnlyFiles.ts) as the index holds them. */
  tree: string;
  /** The working state exactly, local-only files included (equal to `tree` when there are none that differ). */
  realTree: string;
  /** Folders with their own `.git` (not registered submodules) that were left out instead of becoming gitlinks. */
  nested: string[];
  /** New files left out because they look like secrets (they stay in the working tree, excluded in info/exclude). */
  excluded: SecretFinding[];
  /** New files larger than 50 MB left out (they stay in the working tree, excluded in info/exclude). */
  large: string[];
}

/**
 * What keeps new files out of a snapshot: each filter gets the new files (untracked, not ignored) before any of
 * them is hashed, records the ones it decides against (info/exclude) and returns them; the snapshot then stages
 * only the rest, so a file left out never becomes an object in `.git/objects` (issue 25). Passed in by the commit
 * path (workingTree.ts), so this module knows none of the modules that decide (secretExclusion.ts, heavyFolders.ts).
 */
export interface SnapshotFilters {
  /** New files that look like secrets (issue 15). */
  secrets(repo: GitRepository, candidates: readonly string[]): Promise<SecretFinding[]>;
  /** New files too large for a version (issue 13). */
  large(repo: GitRepository, candidates: readonly string[]): Promise<string[]>;
}

/**
 * Stages the whole user-visible working state (HEAD's tree plus every modified, deleted and untracked-not-ignored
 * file) into `index` and writes its tree. New files are judged by `filters` before any of them is hashed, and only
 * the rest are added. A folder with its own `.git`, with or without a commit, is left out rather than recorded as a
 * gitlink. Files flagged skip-worktree or assume-unchanged are seen as they are (localOnlyFiles.ts).
 *
 * `listed` is the status this snapshot is planned from, moments before: then exactly its paths are staged (one
 * `update-index`), and nothing looks at the rest of the tree again (issue 36): an entry status did not list is the
 * index's, which the copy holds. A file changed after that status is then the next snapshot's, as one changed a
 * moment after the snapshot would be (still on disk; the index installed after a version keeps its old stat data,
 * so `git status` names it). Without a listing, or beside entries status cannot see (hidden flags), the whole tree
 * is walked: tracked files with `add -u --sparse` (outside a sparse checkout's cone too), new files listed by
 * `ls-files --others` side by side with it. Never touches HEAD, the user's index or the working tree.
 */
export async function snapshotWorkingTree(
  repo: GitRepository,
  index: TemporaryIndex,
  filters: SnapshotFilters,
  options: { listed?: StatusListing } = {},
): Promise<WorkingTreeSnapshot> {
  // Entries flagged so that add would skip them are uncovered first (and covered again below).
  const uncovered = await uncoverHiddenEntries(repo, index);
  const listed = uncovered.hidden.length === 0 ? options.listed : undefined;
  let files: string[];
  let nested: string[];
  if (listed) {
    files = listed.untracked;
    nested = listed.folders;
  } else {
    // ls-files reads the copy while add -u may replace it (by rename): either file lists the same tracked paths.
    const [, others] = await Promise.all([
      repo.git.run(repo.root, ['add', '-u', '--sparse'], { env: index.env }),
      repo.git.run(repo.root, ['ls-files', '-z', '--others', '--exclude-standard'], { env: index.env }),
    ]);
    ({ files, nested } = untrackedEntries(others.stdout));
  }
  const excluded = files.length > 0 ? await filters.secrets(repo, files) : [];
  const secret = new Set(excluded.map((f) => f.path));
  const judged = files.filter((f) => !secret.has(f));
  const large = judged.length > 0 ? await filters.large(repo, judged) : [];
  const tooLarge = new Set(large);
  const added = judged.filter((f) => !tooLarge.has(f));
  // The changed tracked paths first: a file replaced by a folder (or the reverse) leaves the index before the new
  // path enters it.
  const staged = [...(listed?.changed ?? []), ...added];
  if (staged.length > 0) {
    // --remove: a file deleted since it was listed is simply not added (a listed deletion leaves the index).
    // --ignore-skip-worktree-entries: --remove never drops an entry flagged since the status (a sparse checkout's).
    await repo.git.run(
      repo.root,
      ['update-index', '--add', '--remove', '--replace', '--ignore-skip-worktree-entries', '-z', '--stdin'],
      { env: index.env, input: staged.map((f) => `${f}\0`).join('') },
    );
  }
  const realTree = (await repo.git.run(repo.root, ['write-tree'], { env: index.env })).stdout.trim();
  const tree = await coverAgain(repo, index, uncovered, realTree);
  return { tree, realTree, nested, excluded, large };
}

/**
 * `git ls-files -z --others --exclude-standard` output: new files, and the folders git would not descend into
 * because they hold a `.git` of their own (printed with a trailing slash: a nested repository). Pure.
 */
export function untrackedEntries(stdout: string): { files: string[]; nested: string[] } {
  const files: string[] = [];
  const nested: string[] = [];
  for (const entry of stdout.split('\0')) {
    if (entry.length === 0) continue;
    if (entry.endsWith('/')) nested.push(entry.slice(0, -1));
    else files.push(entry);
  }
  return { files, nested };
}
