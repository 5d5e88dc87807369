import type { Launcher } from './gitClient';
import { GitLauncher } from './gitLauncherProcess';
import { processGit } from './gitRunner';

/**
 * The process's git launcher (docs/design.md, "Starting git from a large process"; the launcher itself is
 * gitLauncherProcess.ts): the extension host starts it at activation, tests and the benchmark around what they measure.
 */

/** Starts the launcher of the process's git client; returns a function that stops it. */
export function startGitLauncher(): () => void {
  processGit().startLauncher(() => new GitLauncher());
  return () => stopGitLauncher();
}

/** Whether this process's launcher is (or became) ready to take commands; for tests and the benchmark. */
export function gitLauncherReady(): Promise<boolean> {
  return processGit().launcherReady();
}

/** Stops this process's launcher; git is then spawned directly, as in the CLI. */
export function stopGitLauncher(): void {
  processGit().stopLauncher();
}

/** The running launcher, when a command can be sent to it now. */
export function readyLauncher(): Pick<Launcher, 'run'> | undefined {
  return processGit().readyLauncher();
}

export type { LaunchOutcome, LaunchReply, LaunchRequest } from './gitLauncherProcess';
