import type { GitClient } from './gitClient';
import { GitCommandError } from './gitErrors';
import { processGit } from './gitRunner';
import type { GitRepository } from './repository';

/** Read-only git facts for `agent-versions doctor` (git runs only in src/core/git). */

export interface GitVersion {
  text: string;
  major: number;
  minor: number;
  patch: number;
}

/** `git --version`, parsed ("git version 2.39.5" → 2.39.5); null when it cannot be read. */
export async function gitVersion(cwd: string, git: GitClient = processGit()): Promise<GitVersion | null> {
  try {
    const { stdout } = await git.run(cwd, ['--version'], { timeoutMs: 10_000 });
    const m = /git version (\d+)\.(\d+)(?:\.(\d+))?/.exec(stdout);
    return m
      ? {
          text: `${m[1]}.${m[2]}${m[3] ? `.${m[3]}` : ''}`,
          major: Number(m[1]),
          minor: Number(m[2]),
          patch: Number(m[3] ?? 0),
        }
      : null;
  } catch {
    return null;
  }
}

/** Whether `v` is `major.minor` or newer. Pure. */
export function versionAtLeast(v: GitVersion, [major, minor]: readonly [number, number]): boolean {
  return v.major > major || (v.major === major && v.minor >= minor);
}

/**
 * Whether git would record commits in this repository under the user's own identity; `fallback` means it has
 * none, and our commits use the product's fallback identity instead (see createCommit). Names are not returned.
 */
export async function commitIdentity(repo: GitRepository): Promise<'configured' | 'fallback'> {
  try {
    await repo.git.run(repo.root, ['var', 'GIT_COMMITTER_IDENT'], { timeoutMs: 10_000 });
    return 'configured';
  } catch (error) {
    if (error instanceof GitCommandError && error.gitErrorCode === 'no-identity') return 'fallback';
    throw error;
  }
}
