import { findRepository, initRepository } from '../core/git/initRepository';
import { GitRepository, resolveRepository } from '../core/git/repository';
import type { EventLog } from '../core/log';
import { loadSqlJs, VersionHistory } from '../core/versionHistory';
import type { CommandContext } from './command';
import { HOOK_LEASE_WAIT_MS } from './hooks/hookInput';

/**
 * How the full CLI opens a repository's history for its commands (CommandContext): the one module of the CLI that
 * loads the engines to open one, so a command's own module need not (the hook fast path loads commands/hook.ts).
 */
export function historyOpeners(log: EventLog): Pick<CommandContext, 'openHistory' | 'openHookHistory'> {
  return {
    openHistory: (folder) => VersionHistory.open(folder, { log }),
    openHookHistory: async (folder, init) => {
      // The SQLite engine compiles while git finds the repository (the store open awaits the same load; a failure
      // surfaces there).
      loadSqlJs().catch(() => undefined);
      const repo = await openHookRepository(folder, init);
      return repo ? VersionHistory.openRepository(repo, { log, leaseWaitMs: HOOK_LEASE_WAIT_MS }) : null;
    },
  };
}

/**
 * The one place every hook adapter opens its repository (issue 13): the repository `folder` is in; in a folder
 * without git, null (the hook records nothing and never gets in the agent's way), or, when the hook command
 * carries `--init`, a new repository made there (git's own default branch name).
 */
async function openHookRepository(folder: string, init: boolean): Promise<GitRepository | null> {
  const found = await findRepository(folder);
  if (found || !init) return found;
  await initRepository(folder);
  return resolveRepository(folder);
}
