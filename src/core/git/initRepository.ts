import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GitClient } from './gitClient';
import { GitCommandError } from './gitErrors';
import { processGit } from './gitRunner';
import { readSymbolicHead } from './healthProbe';
import { GitRepository, resolveRepository } from './repository';

/**
 * Issue 13: "Enable Version History" for a folder without git. `git init` exactly as the user would run it: the
 * branch name is git's own (`init.defaultBranch`, else git's default), no identity or other config is written.
 */

export interface InitResult {
  /** The repository's top-level folder. */
  repository: string;
  /** The branch HEAD is on (unborn right after init), or null when detached. */
  branch: string | null;
  /** False when the folder already was in a repository (nothing was changed). */
  created: boolean;
}

/**
 * The repository `folder` is in, or null when it is in none at all (git says "not a git repository"). A bare
 * repository, one git refuses (safe.directory) or a missing folder still fail with their own message: those are
 * not folders "without git", and must never get a second repository inside them.
 */
export async function findRepository(folder: string, git: GitClient = processGit()): Promise<GitRepository | null> {
  try {
    return await resolveRepository(folder, git);
  } catch (error) {
    if (error instanceof GitCommandError && error.reason === 'not-a-repository') return null;
    throw error;
  }
}

/** Creates a repository in `folder` unless it already is in one (then nothing changes). Idempotent. */
export async function initRepository(folder: string, git: GitClient = processGit()): Promise<InitResult> {
  const existing = await findRepository(folder, git);
  if (existing) return { repository: existing.root, branch: branchOf(existing), created: false };
  await git.run(path.resolve(folder), ['init', '-q']);
  const repo = await resolveRepository(folder, git);
  return { repository: repo.root, branch: branchOf(repo), created: true };
}

function branchOf(repo: GitRepository): string | null {
  return readSymbolicHead(repo.gitDir)?.slice('refs/heads/'.length) ?? null;
}

/**
 * A new repository in the empty folder `folder` whose one commit holds `files` (name → text), made with the process's
 * environment (its identity and configuration): the code cache writer's warm-up repository (cli/codeCacheWriter.ts).
 */
export async function createSeededRepository(
  folder: string,
  files: Readonly<Record<string, string>>,
  git: GitClient = processGit(),
): Promise<void> {
  await git.run(folder, ['init', '-q']);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(folder, name), text);
  await git.run(folder, ['add', '--', ...Object.keys(files)]);
  await git.run(folder, ['commit', '-q', '--no-verify', '--no-gpg-sign', '-m', 'first']);
}
