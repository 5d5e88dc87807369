import { GitCommandError } from './gitErrors';
import type { GitRepository } from './repository';

/** Commit objects of ours: written with `commit-tree`, on no ref until the caller moves one (refUpdate.ts). */

/** Config for every commit we make: no hooks, no signing (so no pinentry), and durable objects when asked. */
function commitConfig(durable: boolean): string[] {
  const args = ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgSign=false'];
  if (durable) args.push('-c', 'core.fsync=committed,index', '-c', 'core.fsyncMethod=fsync');
  return args;
}

const FALLBACK_IDENTITY = {
  GIT_AUTHOR_NAME: 'Agent Version History',
  GIT_AUTHOR_EMAIL: 'agent-versions@localhost',
  GIT_COMMITTER_NAME: 'Agent Version History',
  GIT_COMMITTER_EMAIL: 'agent-versions@localhost',
};

export interface CommitSpec {
  tree: string;
  parents: readonly string[];
  message: string;
  /** fsync objects and refs: for commits that preserve user work before a destructive step. */
  durable?: boolean;
  /** Fixed author/committer date (seconds) so re-running an effect makes the same commit object. */
  date?: number;
}

/** Creates a commit object (no ref moves, no hooks, no signing, no prompts) and returns its oid. */
export async function createCommit(repo: GitRepository, spec: CommitSpec): Promise<string> {
  const args = [...commitConfig(spec.durable ?? false), 'commit-tree', '--no-gpg-sign', spec.tree];
  for (const parent of spec.parents) args.push('-p', parent);
  const env: Record<string, string> = {};
  if (spec.date !== undefined) {
    env.GIT_AUTHOR_DATE = `@${spec.date} +0000`;
    env.GIT_COMMITTER_DATE = `@${spec.date} +0000`;
  }
  try {
    const { stdout } = await repo.git.run(repo.root, args, { input: spec.message, env });
    return stdout.trim();
  } catch (error) {
    // No identity configured: record the commit under the product's own name rather than fail or prompt.
    if (error instanceof GitCommandError && error.gitErrorCode === 'no-identity') {
      const { stdout } = await repo.git.run(repo.root, args, {
        input: spec.message,
        env: { ...env, ...FALLBACK_IDENTITY },
      });
      return stdout.trim();
    }
    throw error;
  }
}

/** The empty tree's oid in this repository's hash (written, so a commit of it always finds the object). */
export async function emptyTree(repo: GitRepository): Promise<string> {
  return (await repo.git.run(repo.root, ['hash-object', '-t', 'tree', '-w', '--stdin'], { input: '' })).stdout.trim();
}
