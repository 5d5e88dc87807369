import { AvhError } from '../errors';
import { GitCommandError } from './gitErrors';
import { compareAndSetRef, readRef, ZERO_OID } from './refUpdate';
import type { GitRepository } from './repository';

/**
 * Where a chat's branch stands (docs/design/branch-loss.md), decided by one function (`classifyBranch`):
 * - `ok`: the local branch exists;
 * - `on-remote`: not local, but the remote says it has it (restorable: never called lost);
 * - `lost`: not local, and the remote answered that it does not have it (or there is no remote at all);
 * - `unknown`: not local, and the remote could not be asked (network, authentication, timeout): never lost.
 * Remote URLs are never part of any result, message or log: only the remote's configured name.
 */
export type BranchState =
  | { state: 'ok' }
  | { state: 'on-remote'; remote: string }
  | { state: 'lost'; remote: string | null }
  | { state: 'unknown'; remote: string; reason: RemoteFailure };

export type RemoteFailure = 'network' | 'auth' | 'timeout';

/** How long the remote may take to answer whether it has a branch. */
export const REMOTE_CHECK_TIMEOUT_MS = 15_000;

/** The repository's remote configuration, names only (URLs are read by git, never kept). */
export interface RemoteFacts {
  remotes: string[];
  /** `branch.<name>.remote` per branch that has an upstream. */
  upstreams: Map<string, string>;
  /** `core.sshCommand`, when configured. */
  sshCommand: string | null;
}

/** One git process: remote names, branch upstreams and the configured ssh command. Read-only. */
export async function readRemoteFacts(repo: GitRepository): Promise<RemoteFacts> {
  const { stdout } = await repo.git.run(
    repo.root,
    ['config', '-z', '--get-regexp', '^(remote\\..*\\.url|branch\\..*\\.remote|core\\.sshcommand)$'],
    { okCodes: [1] },
  );
  const facts: RemoteFacts = { remotes: [], upstreams: new Map(), sshCommand: null };
  for (const entry of stdout.split('\0')) {
    const newline = entry.indexOf('\n');
    const key = newline < 0 ? entry : entry.slice(0, newline);
    const value = newline < 0 ? '' : entry.slice(newline + 1);
    let m: RegExpExecArray | null;
    if ((m = /^remote\.(.+)\.url$/.exec(key))) {
      // A name starting with '-' would read as an option on git's command line: such a remote is never asked.
      if (!m[1].startsWith('-') && !facts.remotes.includes(m[1])) facts.remotes.push(m[1]);
    } else if ((m = /^branch\.(.+)\.remote$/.exec(key))) {
      facts.upstreams.set(m[1], value);
    } else if (key === 'core.sshcommand' && value) {
      facts.sshCommand = value;
    }
  }
  return facts;
}

/**
 * The remote a branch is checked against: the one recorded for the chat while it is still configured, else the
 * branch's upstream remote, else `origin`, else the only remote, else the first configured one; null with none.
 */
export function chooseRemote(facts: RemoteFacts, branch: string, recorded: string | null = null): string | null {
  if (recorded && facts.remotes.includes(recorded)) return recorded;
  const upstream = facts.upstreams.get(branch);
  if (upstream && facts.remotes.includes(upstream)) return upstream;
  if (facts.remotes.includes('origin')) return 'origin';
  return facts.remotes[0] ?? null;
}

/** The remote's default branch as this repository last saw it (`refs/remotes/<remote>/HEAD`), or null. Read-only. */
export async function remoteDefaultBranch(repo: GitRepository, remote: string): Promise<string | null> {
  const { stdout, code } = await repo.git.run(repo.root, ['symbolic-ref', '--quiet', `refs/remotes/${remote}/HEAD`], {
    okCodes: [1, 128],
  });
  const prefix = `refs/remotes/${remote}/`;
  const ref = stdout.trim();
  return code === 0 && ref.startsWith(prefix) ? ref.slice(prefix.length) : null;
}

/** Whether `refs/heads/<branch>` exists. Read-only. */
export async function localBranchExists(repo: GitRepository, branch: string): Promise<boolean> {
  return (await readRef(repo, `refs/heads/${branch}`)) !== null;
}

/** Local branch names (one git process). Read-only. */
export async function localBranches(repo: GitRepository): Promise<Set<string>> {
  const { stdout } = await repo.git.run(repo.root, ['for-each-ref', '--format=%(refname:lstrip=2)', 'refs/heads/']);
  return new Set(stdout.split('\n').filter(Boolean));
}

/**
 * The environment that keeps a remote check from ever waiting on a person: no terminal or askpass prompts
 * (gitRunner's base environment), ssh in BatchMode with a connect timeout. A GIT_SSH_COMMAND the user set is
 * kept as it is; a configured core.sshCommand gets the BatchMode options appended.
 */
function remoteEnv(facts: RemoteFacts, timeoutMs: number): Record<string, string> {
  if (process.env.GIT_SSH_COMMAND || process.env.GIT_SSH) return {};
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  return { GIT_SSH_COMMAND: `${facts.sshCommand ?? 'ssh'} -o BatchMode=yes -o ConnectTimeout=${seconds}` };
}

/**
 * The one place that maps a failed remote conversation to its class (from the error's code: git's stderr is read
 * in gitErrors.ts only, never shown, as it may name the URL). Anything not recognisably authentication is a
 * reachability problem.
 */
export function remoteFailureOf(error: unknown): RemoteFailure {
  if (error instanceof GitCommandError && error.reason === 'git-timeout') return 'timeout';
  if (error instanceof GitCommandError && error.gitErrorCode === 'auth-failed') return 'auth';
  return 'network';
}

/**
 * Classifies `branch` (docs/product-contract.md §7): local ref present → ok without asking anyone; else one bounded
 * `git ls-remote --exit-code --heads <remote> <branch>` with no prompts. Read-only; never throws for a remote
 * that cannot be asked (that is `unknown`).
 */
export async function classifyBranch(
  repo: GitRepository,
  branch: string,
  options: { recordedRemote?: string | null; timeoutMs?: number; facts?: RemoteFacts } = {},
): Promise<BranchState> {
  if (await localBranchExists(repo, branch)) return { state: 'ok' };
  const facts = options.facts ?? (await readRemoteFacts(repo));
  const remote = chooseRemote(facts, branch, options.recordedRemote ?? null);
  if (remote === null) return { state: 'lost', remote: null };
  const timeoutMs = options.timeoutMs ?? REMOTE_CHECK_TIMEOUT_MS;
  try {
    // `--exit-code`: 2 means the remote answered and has no such branch. The full ref name avoids suffix matches.
    const { code, stdout } = await repo.git.run(
      repo.root,
      ['ls-remote', '--exit-code', '--heads', remote, `refs/heads/${branch}`],
      { okCodes: [2], timeoutMs, env: remoteEnv(facts, timeoutMs) },
    );
    if (code === 2 || !stdout.split('\n').some((line) => line.endsWith(`\trefs/heads/${branch}`)))
      return { state: 'lost', remote };
    return { state: 'on-remote', remote };
  } catch (error) {
    if (error instanceof GitCommandError) return { state: 'unknown', remote, reason: remoteFailureOf(error) };
    throw error;
  }
}

/**
 * Brings a branch deleted locally back from the remote: fetches that one branch into its remote-tracking ref,
 * then creates the local branch there (compare-and-set: never overwrites a branch that exists meanwhile) with
 * the remote as its upstream. Never touches HEAD, the index or the working tree.
 */
export async function restoreBranchFromRemote(
  repo: GitRepository,
  branch: string,
  remote: string,
  timeoutMs = 60_000,
): Promise<string> {
  const facts = await readRemoteFacts(repo);
  const tracking = `refs/remotes/${remote}/${branch}`;
  try {
    await repo.git.run(
      repo.root,
      ['fetch', '--no-tags', '--no-write-fetch-head', remote, `+refs/heads/${branch}:${tracking}`],
      { timeoutMs, env: remoteEnv(facts, timeoutMs) },
    );
  } catch (error) {
    if (!(error instanceof GitCommandError)) throw error;
    const reason = remoteFailureOf(error);
    const why =
      reason === 'auth'
        ? 'the remote refused the credentials'
        : reason === 'timeout'
          ? 'it did not answer in time'
          : 'it could not be reached';
    throw new AvhError(
      reason === 'timeout' ? 'git-timeout' : 'git-failed',
      `The branch "${branch}" could not be fetched from "${remote}" (${why}). Nothing was changed; try again.`,
      { branch, remote, remoteFailure: reason },
    );
  }
  const oid = await readRef(repo, tracking);
  if (!oid)
    throw new AvhError('git-failed', `"${remote}" no longer has the branch "${branch}". Nothing was changed.`, {
      branch,
      remote,
    });
  await compareAndSetRef(repo, `refs/heads/${branch}`, oid, ZERO_OID, `agent-versions: branch restored from ${remote}`);
  // The upstream, as `git branch --track` would set it (config only).
  await repo.git.run(repo.root, ['config', `branch.${branch}.remote`, remote]);
  await repo.git.run(repo.root, ['config', `branch.${branch}.merge`, `refs/heads/${branch}`]);
  return oid;
}

/**
 * Switches the working tree to an existing local branch, carrying local changes the way `git switch` does (it refuses
 * to overwrite any).
 */
export async function switchToBranch(repo: GitRepository, branch: string): Promise<void> {
  await repo.git.run(repo.root, ['switch', '--no-guess', branch]);
}

/** The commit a branch name means here: the local branch, else the remote's copy as last fetched. Read-only. */
export async function resolveBranchStart(
  repo: GitRepository,
  branch: string,
  remote: string | null,
): Promise<string | null> {
  return (
    (await readRef(repo, `refs/heads/${branch}`)) ??
    (remote ? await readRef(repo, `refs/remotes/${remote}/${branch}`) : null)
  );
}

/**
 * Whether a branch name is taken here, locally or by a remote-tracking ref of `remote` (so a new name never shadows
 * one). Read-only.
 */
export async function branchNameTaken(repo: GitRepository, name: string, remote: string | null): Promise<boolean> {
  return (await resolveBranchStart(repo, name, remote)) !== null;
}
