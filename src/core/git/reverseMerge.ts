import { AvhError } from '../errors';
import { writeLooseCommit } from './looseObject';
import { OID_HEX } from '../domain/objectId';
import type { GitRepository } from './repository';
import { createCommit } from './commitObjects';
import { TemporaryIndex } from './temporaryIndex';
import { writeWorkingTree } from './workingTree';

/**
 * The git side of "Undo Only This Turn" and "Undo This File": trees computed from objects alone. Nothing here
 * touches HEAD, a branch, the user's index or the working tree; the only writes are objects (and a temporary
 * index of our own), so a refused or abandoned computation changes nothing the user sees.
 */

export interface ReverseTree {
  /** The merged tree (with conflict markers where `conflicts` is not empty: never used then). */
  tree: string;
  /** Paths the reverse cannot apply cleanly to, sorted. Empty when the merge is clean. */
  conflicts: string[];
}

/** A fixed date for the synthetic "turn taken back" commit, so the same inputs always make the same object. */
const SYNTHETIC_DATE = 1;

/**
 * The tree of `ours` with the turn's own changes taken back: a three-way merge whose base is the turn's
 * `version`, whose sides are `ours` (a descendant of `version`) and `preTurn`, the tree the turn started from.
 * git 2.39's `merge-tree --write-tree` has no `--merge-base`, so the pre-turn tree goes into a synthetic commit
 * whose only parent is `version`: the one best common ancestor is then `version` itself (what `git revert`
 * merges with). Writes only objects; never touches refs, the index or the working tree.
 */
export async function reverseTurnTree(
  repo: GitRepository,
  turn: { version: string; preTurn: string },
  ours: string,
): Promise<ReverseTree> {
  const spec = {
    tree: turn.preTurn,
    parents: [turn.version],
    message: 'Agent Version History: turn taken back (merge input, never on a branch)\n',
    date: SYNTHETIC_DATE,
  };
  // With the pre-turn tree's oid known, the object is written here (one git process fewer); a name like
  // `<version>^^{tree}` needs git to resolve it.
  const theirs = writeLooseCommit(repo, spec) ?? (await createCommit(repo, spec));
  return mergeCommits(repo, ours, theirs);
}

/** `git merge-tree --write-tree` of two commits (their merge base found by git). Writes only objects. */
export async function mergeCommits(repo: GitRepository, ours: string, theirs: string): Promise<ReverseTree> {
  const { stdout, code } = await repo.git.run(
    repo.root,
    ['-c', 'merge.renames=true', 'merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', ours, theirs],
    { okCodes: [1] },
  );
  const [tree, ...rest] = stdout.split('\0');
  const conflicts = code === 0 ? [] : [...new Set(rest.filter((p) => p.length > 0))].sort();
  return { tree: tree.trim(), conflicts };
}

/**
 * The tree of `ours` with one path put back to how it was in `base` (removed when `base` did not have it).
 * Everything else stays as in `ours`; `ours` null: the repository's index holds it (a clean tree at HEAD), so its
 * copy is used as is. Writes only objects and a temporary index of our own.
 */
export async function fileRestoredTree(
  repo: GitRepository,
  ours: string | null,
  base: string,
  file: string,
): Promise<string> {
  const index = TemporaryIndex.create(repo);
  try {
    if (ours !== null) await repo.git.run(repo.root, ['read-tree', ours], { env: index.env });
    const entry = (await repo.git.run(repo.root, ['ls-tree', '-z', '--full-tree', base, '--', file])).stdout.split(
      '\0',
    )[0];
    const match = new RegExp(`^(\\d+) (\\w+) (${OID_HEX})\t`).exec(entry ?? '');
    if (match && match[2] !== 'tree') {
      const { code } = await repo.git.run(
        repo.root,
        ['update-index', '--add', '--cacheinfo', `${match[1]},${match[3]},${file}`],
        { env: index.env, okCodes: [128] },
      );
      // git refuses a file where `ours` has a folder, or under a path that is a file there. Undo This File checks
      // the working tree for exactly this before anything moves (refuseShapeChange); this is the same refusal when
      // the tree changed in between, instead of git's exit code.
      if (code !== 0) {
        throw new AvhError(
          'revert-conflict',
          `${file} cannot be put back alone: a folder now stands where it goes, or a file where one of its folders ` +
            'goes.',
          { files: file },
        );
      }
    } else {
      await repo.git.run(repo.root, ['update-index', '--force-remove', '-z', '--stdin'], {
        env: index.env,
        input: `${file}\0`,
      });
    }
    return (await repo.git.run(repo.root, ['write-tree'], { env: index.env })).stdout.trim();
  } finally {
    index.dispose();
  }
}

/**
 * The working tree as it is now (uncommitted edits and untracked files included, ignored files not) as a commit
 * object on top of `head`, on no ref: what "current" means when a reverse is checked before anything moves.
 * Never touches HEAD, the user's index or the working tree.
 */
export async function workingTreeCommit(repo: GitRepository, head: string): Promise<string> {
  const index = TemporaryIndex.create(repo);
  try {
    const { tree } = await writeWorkingTree(repo, index);
    return await createCommit(repo, {
      tree,
      parents: [head],
      message: 'Agent Version History: working tree (merge input, never on a branch)\n',
      date: SYNTHETIC_DATE,
    });
  } finally {
    index.dispose();
  }
}

export interface LaterCommit {
  oid: string;
  subject: string;
  /** The `Agent-Turn` trailer (agent versions only), else ''. */
  turn: string;
  parents: string[];
  tree: string;
}

export interface CommitRange {
  /** The commits in `since..head`, newest first. */
  commits: LaterCommit[];
  /** The tree of each commit listed, and of each commit the range stops at (its boundary). */
  trees: ReadonlyMap<string, string>;
}

/**
 * The commits of `range` (HEAD's history since `since`, as commitsSince listed it) that `git log head --not
 * version` lists: all but `version` and its ancestors. Exact when every commit the range leaves out is an ancestor
 * of `version` too: `since` null says the caller knows it is (the range was the whole history, or stops at
 * `version`'s own parents), else the walk from `version` inside the range must meet `since` itself. Null when it
 * cannot tell (the version is not listed, or its history inside the range does not reach `since`): ask git. No
 * git process.
 */
export function commitsAfterIn(range: CommitRange, version: string, since: string | null): LaterCommit[] | null {
  const byOid = new Map(range.commits.map((c) => [c.oid, c]));
  if (!byOid.has(version)) return null;
  const before = new Set<string>();
  let metSince = since === null;
  const stack = [version];
  while (stack.length > 0) {
    const oid = stack.pop()!;
    if (before.has(oid)) continue;
    const commit = byOid.get(oid);
    if (!commit) {
      if (oid === since) metSince = true;
      continue;
    }
    before.add(oid);
    stack.push(...commit.parents);
  }
  return metSince ? range.commits.filter((c) => !before.has(c.oid)) : null;
}

/** The commits in `since..head`, newest first, with subject, turn trailer, parents and tree. Read-only. */
export async function commitsSince(repo: GitRepository, since: string | null, head: string): Promise<CommitRange> {
  // `since` null (a turn that began on an unborn branch): all of HEAD's history is after it. `X^@` names all of
  // X's parents, none for a root commit, so a root version excludes nothing.
  const range = since === null ? [head] : [head, '--not', since];
  const { stdout } = await repo.git.run(repo.root, [
    'log',
    '--boundary',
    '--format=%m%x1f%H%x1f%P%x1f%T%x1f%s%x1f%(trailers:key=Agent-Turn,valueonly,separator=%x2c)%x1e',
    ...range,
    '--',
  ]);
  const commits: LaterCommit[] = [];
  const trees = new Map<string, string>();
  for (const record of stdout
    .split('\x1e')
    .map((r) => r.replace(/^\n/, ''))
    .filter(Boolean)) {
    const [mark, oid, parents, tree, subject, turn] = record.split('\x1f');
    trees.set(oid, tree);
    if (mark !== '-')
      commits.push({ oid, subject, turn: (turn ?? '').trim(), parents: parents ? parents.split(' ') : [], tree });
  }
  return { commits, trees };
}
