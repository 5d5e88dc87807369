import { GitCommandError, runGit } from './gitRunner';
import type { GitRepository } from './repository';

/** Read-only git facts for `agent-versions doctor` (git runs only in src/core/git). */

export interface GitVersion {
  text: string;
  major: number;
  minor: number;
  patch: number;
}

/** `git --version`, parsed ("git version 2.39.5" → 2.39.5); null when it cannot be read. */
export async function gitVersion(cwd: string): Promise<GitVersion | null> {
  try {
    const { stdout } = await runGit(cwd, ['--version'], { timeoutMs: 10_000 });
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

export function versionAtLeast(v: GitVersion, [major, minor]: readonly [number, number]): boolean {
  return v.major > major || (v.major === major && v.minor >= minor);
}

/**
 * Whether git would record commits in this repository under the user's own identity; `fallback` means it has
 * none, and our commits use the product's fallback identity instead (see createCommit). Names are not returned.
 */
export async function commitIdentity(repo: GitRepository): Promise<'configured' | 'fallback'> {
  try {
    await runGit(repo.root, ['var', 'GIT_COMMITTER_IDENT'], { timeoutMs: 10_000 });
    return 'configured';
  } catch (error) {
    if (error instanceof GitCommandError && /tell me who you are|empty ident|auto-detect/i.test(error.stderr))
      return 'fallback';
    throw error;
  }
}
