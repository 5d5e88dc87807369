import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../command';
import { statusText } from '../output';

export const spec: CommandSpec = {
  name: 'status',
  args: [],
  options: [],
  summary: 'repository health, running turns, recovery state',
  description:
    'Shows the repository’s health (branch, working tree, operations in progress, locks), the recorded and ' +
    'running turns, and whether recovery is required.',
  example: 'agent-versions status',
  json:
    '{"root": string, "health": {...}, "runningTurns": [...], "counts": {"turns": number, "runningTurns": number}, ' +
    '"recovery": object|null, "operation": object|null}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return withHistory(c, async (history) => {
    const s = await history.status();
    return { json: s, text: statusText(s) };
  });
}
