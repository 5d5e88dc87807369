import { initRepository } from '../core/git/initRepository';
import { terminalSafe } from './output';
import type { CommandOutput } from './repositoryCommands';

/** `agent-versions init`: a repository for this folder (git's own default branch name), or nothing when it has one. */
export async function runInitCommand(folder: string): Promise<CommandOutput> {
  const r = await initRepository(folder);
  const where = terminalSafe(r.repository);
  const branch = r.branch ? ` (branch ${terminalSafe(r.branch)})` : '';
  return {
    json: { repository: r.repository, branch: r.branch },
    text: r.created
      ? `Created a git repository in ${where}${branch}. Agent turns here now become versions.`
      : `${where} is already a git repository${branch}; nothing was changed.`,
  };
}
