import { currentLockLiveness } from '../store/lockLiveness';
import { GitClient, type GitOptions, type GitResult } from './gitClient';

/**
 * This process's git client, and the entry points that reach it. A repository resolved without a client of its own
 * runs git through it; the extension host configures it (configureGitExecutable: VS Code's git.path) and starts its
 * launcher (gitLauncher.ts), the CLI and the tests use it as it is.
 */
const processClient = new GitClient({ liveness: currentLockLiveness });

/** The client every repository of this process runs git through unless its builder chose another. */
export function processGit(): GitClient {
  return processClient;
}

/** Which git this process runs (VS Code's `git.path`: one path or a list); see GitClient.configure. */
export function configureGitExecutable(candidates: string | readonly string[] | null | undefined): void {
  processClient.configure(candidates);
}

/** The absolute path of the git this process runs in `cwd`: never one from the repository itself. Starts no process. */
export function gitExecutable(cwd: string): string {
  return processClient.executable(cwd);
}

/** Runs `git <args>` in cwd through the process's client; rejects with a GitCommandError on failure. */
export function runGit(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
  return processClient.run(cwd, args, options);
}

export { baseEnv, GitClient } from './gitClient';
export type { GitOptions, GitResult } from './gitClient';
export { findGitExecutable, untrustedFolderOf } from './gitExecutable';
export { GitCommandError, messageFor, reasonFromStderr } from './gitErrors';
