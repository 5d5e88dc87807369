import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { runRestoreCommand } from './restoreRun';

export const spec: CommandSpec = {
  name: 'undo-file',
  args: [{ name: 'path' }],
  options: ['turn', 'yes'],
  required: ['turn'],
  summary: 'put one file a turn changed back to its pre-turn content (the rest of the turn stays)',
  description:
    'Puts the path (relative to the repository root, as the turn’s changes list it) back to its content before ' +
    'the turn, as a new [Revert] commit; every other change of the turn and everything after it stays. Redo brings ' +
    'the file back. When another chat also wrote the file it asks first: --yes confirms, as for undo.',
  example: 'agent-versions undo-file --turn 0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11 src/app.ts',
  json:
    '{"result": "restored"|"no-change", "scope": "file", "restoreCommit"?: string, "preserved"?: string, ' +
    '"turnId"?: string}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return runRestoreCommand(c, (history, options) => history.undoFile(c.values.turn, c.args[0], options));
}
