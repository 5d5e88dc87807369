import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { runRestoreCommand } from './restoreRun';

export const spec: CommandSpec = {
  name: 'redo',
  args: [],
  options: ['yes'],
  summary: 'redo the last undo, while nothing new happened since',
  description:
    'Brings back the exact tree the last Undo replaced, as a new [Restore] commit, while nothing new happened since.',
  example: 'agent-versions redo',
  json: '{"result": "restored"|"nothing-to-redo"|"no-change", "restoreCommit"?: string}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return runRestoreCommand(c, (history, options) => history.redo(options));
}
