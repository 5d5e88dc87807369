import * as fs from 'node:fs';
import * as path from 'node:path';
import { commonGitDir } from './gitDirs';
import { AvhError } from '../errors';
import type { GitClient } from './gitClient';
import { GitCommandError } from './gitErrors';
import { processGit } from './gitRunner';

/**
 * A resolved git working tree. `gitDir` is the per-worktree git dir (`git rev-parse --git-dir`), never assumed `.git`.
 */
export interface GitRepository {
  readonly root: string;
  readonly gitDir: string;
  /** Where Agent Version History keeps its state for this worktree. */
  readonly stateDir: string;
  /** The client every git command for this repository runs through (the process's, unless its builder chose one). */
  readonly git: GitClient;
  /**
   * The repository's hash (`git rev-parse --show-object-format`), known once git resolved it; a repository built
   * from the files alone (the hook fast path, which writes no objects) leaves it out: objectFormatOf asks git.
   */
  readonly objectFormat?: ObjectFormat;
}

/** The hash a repository names its objects with: SHA-1 (40 hex digits) or SHA-256 (64). */
export type ObjectFormat = 'sha1' | 'sha256';

const askedFormats = new WeakMap<GitRepository, Promise<ObjectFormat>>();

/**
 * The object format without a git process: the resolved one, else what the repository's config file (in the
 * common git dir) says in `[extensions] objectformat`. For readers of git's files (the index) in a process that
 * never resolved the repository; SHA-1 when the file says nothing, as git itself assumes.
 */
export function objectFormatFromFiles(repo: Pick<GitRepository, 'gitDir' | 'objectFormat'>): ObjectFormat {
  if (repo.objectFormat) return repo.objectFormat;
  const common = commonGitDir(repo.gitDir);
  try {
    return /^\s*objectformat\s*=\s*sha256\s*$/im.test(fs.readFileSync(path.join(common, 'config'), 'utf8'))
      ? 'sha256'
      : 'sha1';
  } catch {
    return 'sha1';
  }
}

/** The repository's object format: the resolved one, else asked of git once per repository object. */
export function objectFormatOf(repo: GitRepository): Promise<ObjectFormat> {
  if (repo.objectFormat) return Promise.resolve(repo.objectFormat);
  let asked = askedFormats.get(repo);
  if (!asked) {
    asked = repo.git
      .run(repo.root, ['rev-parse', '--show-object-format'])
      .then((r) => (r.stdout.trim() === 'sha256' ? 'sha256' : 'sha1'));
    askedFormats.set(repo, asked);
  }
  return asked;
}

/** Where Agent Version History keeps its state for the worktree whose git dir is `gitDir`. */
export function stateDirOf(gitDir: string): string {
  return path.join(gitDir, 'agent-versions');
}

/**
 * Resolves the repository containing `folder` with one git process, its git run by `git`; rejects with a specific
 * reason otherwise.
 */
export async function resolveRepository(folder: string, git: GitClient = processGit()): Promise<GitRepository> {
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
    ({ stdout } = await git.run(abs, ['rev-parse', '--show-toplevel', '--absolute-git-dir', '--show-object-format']));
  } catch (error) {
    // A reason of its own (a folder owned by another user: 'repository-not-trusted') is git's, as the table says.
    if (error instanceof GitCommandError && error.reason !== 'git-failed') throw error;
    if (error instanceof GitCommandError && error.gitErrorCode === 'bare-repository') {
      throw new AvhError(
        'not-a-repository',
        'This is a bare git repository; Agent Version History needs a working tree.',
      );
    }
    throw new AvhError('not-a-repository', 'This folder is not a git repository.', {}, { cause: error });
  }
  const [root, gitDir, format] = stdout.split('\n');
  if (!root || !gitDir) throw new AvhError('not-a-repository', 'This folder is not a git repository.');
  const objectFormat: ObjectFormat = format === 'sha256' ? 'sha256' : 'sha1';
  return { root, gitDir, stateDir: stateDirOf(gitDir), git, objectFormat };
}

/**
 * The repository `folder` is in, found from the files alone (the nearest `.git` folder, or `.git` file naming
 * its git dir), with no git process: only a guess, for the CLI's hook fast path, which trusts it only when it
 * equals what git itself resolved before (recorded in its facts file). Null when there is no `.git` up to the root.
 */
export function guessRepositoryFromFiles(folder: string): { root: string; gitDir: string } | null {
  let dir: string;
  try {
    dir = fs.realpathSync(folder);
  } catch {
    return null;
  }
  for (;;) {
    const dotGit = path.join(dir, '.git');
    let st: fs.Stats | null = null;
    try {
      st = fs.statSync(dotGit);
    } catch {
      /* none here */
    }
    if (st?.isDirectory()) return { root: dir, gitDir: dotGit };
    if (st?.isFile()) {
      const match = /^gitdir: (.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'));
      if (!match) return null;
      try {
        return { root: dir, gitDir: fs.realpathSync(path.resolve(dir, match[1].trim())) };
      } catch {
        return null;
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}
