import { findRepository, initRepository } from '../core/git/initRepository';
import { GitRepository, resolveRepository } from '../core/git/repository';

/** What a hook says, once per event, in a folder without git (it records nothing and exits 0). */
export const NO_REPOSITORY_HOOK_LINE =
  'this folder has no git repository; run `agent-versions init` here to keep versions of agent turns';

/**
 * The one place every hook adapter opens its repository (issue 13): the repository `folder` is in; in a folder
 * without git, null (the hook records nothing and never gets in the agent's way), or, when the hook command
 * carries `--init`, a new repository made there (git's own default branch name).
 */
export async function openHookRepository(folder: string, init: boolean): Promise<GitRepository | null> {
  const found = await findRepository(folder);
  if (found || !init) return found;
  await initRepository(folder);
  return resolveRepository(folder);
}
