import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { runRestoreCommand } from './restoreRun';

export const spec: CommandSpec = {
  name: 'redo',
  args: [],
  options: ['yes'],
  summary: 'redo the last undo, while nothing new happened since',
  description:
    'Brings back the exact tree the last Undo replaced, as a new [Restore] commit, while nothing new happened since. ' +
    'After Undo Only This Turn or Undo This File it works in place ("scope": "turn"): only what the Undo changed is ' +
    'written back, and your edits in other files stay.',
  example: 'agent-versions redo',
  json: '{"result": "restored"|"nothing-to-redo"|"no-change", "scope"?: "turn", "restoreCommit"?: string}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return runRestoreCommand(c, (history, options) => history.redo(options));
}
