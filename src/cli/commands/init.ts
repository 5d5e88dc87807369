import { initRepository } from '../../core/git/initRepository';
import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { terminalSafe } from '../output';

export const spec: CommandSpec = {
  name: 'init',
  args: [],
  options: [],
  summary: 'keep versions in a folder without git (runs git init; changes nothing in a repository)',
  description:
    'Creates a git repository in the folder (git init, with your default branch name; no identity or other setting ' +
    'is written), so agent turns here become versions. In a folder that already is in a repository it changes ' +
    'nothing and exits 0.',
  example: 'agent-versions init',
  json: '{"repository": string, "branch": string|null}',
};

/** `agent-versions init`: a repository for this folder (git's own default branch name), or nothing when it has one. */
export async function run(c: CommandContext): Promise<CommandOutput> {
  const r = await initRepository(c.folder);
  const where = terminalSafe(r.repository);
  const branch = r.branch ? ` (branch ${terminalSafe(r.branch)})` : '';
  return {
    json: { repository: r.repository, branch: r.branch },
    text: r.created
      ? `Created a git repository in ${where}${branch}. Agent turns here now become versions.`
      : `${where} is already a git repository${branch}; nothing was changed.`,
  };
}
