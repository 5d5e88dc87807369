import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../command';
import { versionsTable } from '../output';

export const spec: CommandSpec = {
  name: 'versions',
  args: [],
  options: ['limit'],
  summary: 'list the versions of the current branch, newest first',
  description:
    'Lists the versions (commits) of the current branch, newest first, as a table: time, kind, the agent turn’s ' +
    'outcome, short commit id and summary.',
  example: 'agent-versions versions --limit 20',
  json:
    '[{"oid": string, "subject": string, "kind": "agent"|"interrupted"|"recovery"|"restore"|"user", ' +
    '"turnId"?: string, "outcome"?: string, "time": number (seconds)}]',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return withHistory(c, async (history) => {
    const versions = await history.getVersions(c.values.limit === undefined ? 50 : Number(c.values.limit));
    return { json: versions, text: versionsTable(versions) };
  });
}
