import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../errors';
import { GitCommandError, runGit } from './gitRunner';

/** A resolved git working tree. `gitDir` is the per-worktree git dir (`git rev-parse --git-dir`), never assumed `.git`. */
export interface GitRepository {
  readonly root: string;
  readonly gitDir: string;
  /** Where Agent Version History keeps its state for this worktree. */
  readonly stateDir: string;
}

/** Resolves the repository containing `folder` with one git process; rejects with a specific reason otherwise. */
export async function resolveRepository(folder: string): Promise<GitRepository> {
  const abs = path.resolve(folder);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(abs);
  } catch {
    throw new AvhError('invalid-input', 'The folder does not exist.');
  }
  if (!stat.isDirectory()) throw new AvhError('invalid-input', 'The path is not a folder.');
  let stdout: string;
  try {
    ({ stdout } = await runGit(abs, ['rev-parse', '--show-toplevel', '--absolute-git-dir']));
  } catch (error) {
    if (error instanceof GitCommandError && error.reason !== 'git-failed') throw error;
    if (error instanceof GitCommandError && /must be run in a work tree/.test(error.stderr)) {
      throw new AvhError('not-a-repository', 'This is a bare git repository; Agent Version History needs a working tree.');
    }
    if (error instanceof GitCommandError && /dubious ownership/.test(error.stderr)) {
      throw new AvhError('not-a-repository', 'Git refuses this repository because it is owned by another user (safe.directory).');
    }
    throw new AvhError('not-a-repository', 'This folder is not a git repository.', {}, { cause: error });
  }
  const [root, gitDir] = stdout.split('\n');
  if (!root || !gitDir) throw new AvhError('not-a-repository', 'This folder is not a git repository.');
  return { root, gitDir, stateDir: path.join(gitDir, 'agent-versions') };
}
