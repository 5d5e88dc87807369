import * as path from 'node:path';
import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { runRestoreCommand } from './restoreRun';

export const spec: CommandSpec = {
  name: 'undo-change',
  args: [{ name: 'file' }],
  options: ['line', 'turn', 'yes'],
  required: ['line'],
  summary: 'undo only the change of an agent turn that wrote one line (the rest stays)',
  description:
    'Takes back the one change (hunk) of the agent turn that wrote that line of the file (as `blame` shows it), ' +
    'three-way, as a new [Revert] commit: later turns, your commits and the rest of the turn stay. Refused, naming ' +
    'the lines, when later work changed the same lines. --turn names the turn you expect (refused when the line is ' +
    'no longer that turn’s). Uncommitted edits are saved first. Redo brings the change back. The file is relative ' +
    'to the current folder. When another chat also wrote the file it asks first: --yes confirms, as for undo.',
  example: 'agent-versions undo-change src/app.ts --line 42',
  json:
    '{"result": "restored"|"no-change", "scope": "change", "restoreCommit"?: string, "preserved"?: string, ' +
    '"turnId"?: string}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  const file = path.resolve(c.cwd, c.args[0]);
  return runRestoreCommand(c, (history, options) =>
    history.undoChange(file, c.values.line, {
      ...options,
      ...(c.values.turn !== undefined ? { turnId: c.values.turn } : {}),
    }),
  );
}
