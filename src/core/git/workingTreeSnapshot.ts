import { AvhError } from '../errors';
import type { SecretFinding } from '../secrets/secretScanner';
import { embeddedRepositoriesIn } from './gitErrors';
import type { GitRepository } from './repository';
import type { TemporaryIndex } from './temporaryIndex';

export interface WorkingTreeSnapshot {
  tree: string;
  /** Folders with their own `.git` (not registered submodules) that were left out instead of becoming gitlinks. */
  nested: string[];
  /** New files left out because they look like secrets (they stay in the working tree, excluded in info/exclude). */
  excluded: SecretFinding[];
  /** New files larger than 50 MB left out (they stay in the working tree, excluded in info/exclude). */
  large: string[];
}

/**
 * What keeps new files out of a snapshot once `add -A` staged them: each filter gets the paths add staged, takes
 * the files it decides against out of `index` and returns them. Passed in by the commit path (workingTree.ts), so
 * this module knows none of the modules that decide (secretExclusion.ts, heavyFolders.ts).
 */
export interface SnapshotFilters {
  /** New files that look like secrets (issue 15). */
  secrets(repo: GitRepository, index: TemporaryIndex, added: readonly string[]): Promise<SecretFinding[]>;
  /** New files too large for a version (issue 13). */
  large(repo: GitRepository, index: TemporaryIndex, added: readonly string[]): Promise<string[]>;
}

/**
 * Stages the whole user-visible working state (HEAD's tree plus every modified, deleted and untracked-not-ignored
 * file) into `index` and writes its tree. Nested repositories that git would record as gitlinks are left out, and
 * so is every new file one of `filters` decides against. Never touches HEAD, the user's index or the working tree.
 */
export async function snapshotWorkingTree(
  repo: GitRepository,
  index: TemporaryIndex,
  filters: SnapshotFilters,
): Promise<WorkingTreeSnapshot> {
  const added = await repo.git.run(
    repo.root,
    ['-c', 'advice.addEmbeddedRepo=false', 'add', '-A', '--verbose', '--', '.'],
    { env: index.env },
  );
  const nested = embeddedRepositoriesIn(added.stderr);
  if (nested.length > 0) {
    await repo.git.run(repo.root, ['update-index', '--force-remove', '-z', '--stdin'], {
      env: index.env,
      input: nested.join('\0'),
    });
  }
  const paths = addedPaths(added.stdout);
  const excluded = await filters.secrets(repo, index, paths);
  const large = await filters.large(repo, index, paths);
  const { stdout } = await repo.git.run(repo.root, ['write-tree'], { env: index.env });
  return { tree: stdout.trim(), nested, excluded, large };
}

/**
 * The paths of `git add --verbose` output: records `add '<path>'` and `remove '<path>'`, one a line, the path
 * printed raw (git does not quote it), so a path holding a line break is read up to the next record. Output it
 * cannot read whole fails the write (no file is judged unseen) rather than risk committing a secret.
 */
export function addedPaths(addOutput: string): string[] {
  const paths: string[] = [];
  const record = /(add|remove) '([\s\S]*?)'\n(?=add '|remove '|$)/gy;
  let match: RegExpExecArray | null;
  let end = 0;
  while ((match = record.exec(addOutput)) !== null) {
    if (match[1] === 'add') paths.push(match[2]);
    end = record.lastIndex;
  }
  if (end !== addOutput.length)
    throw new AvhError(
      'git-failed',
      'git add printed a list Agent Version History could not read; no version was made.',
    );
  return paths;
}
