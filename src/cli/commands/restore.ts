import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { runRestoreCommand } from './restoreRun';

export const spec: CommandSpec = {
  name: 'restore',
  args: [{ name: 'commit' }],
  options: ['yes'],
  summary: 'restore the working tree to a version, as a new [Restore] commit',
  description:
    'Makes the working tree equal to the chosen version and records it as a new [Restore] commit; history is ' +
    'never rewritten.',
  example: 'agent-versions restore 3f2a9c1',
  json: '{"result": "restored"|"no-change", "restoreCommit"?: string, "preserved"?: string}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return runRestoreCommand(c, (history, options) => history.restore(c.args[0], options));
}
