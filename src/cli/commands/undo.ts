import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { runRestoreCommand } from './restoreRun';

export const spec: CommandSpec = {
  name: 'undo',
  args: [],
  options: ['turn', 'only', 'yes'],
  summary: 'undo an agent turn (default: the latest on this branch)',
  description:
    'Restores the turn’s pre-turn state as a new [Restore] commit. A cancelled turn’s partial changes are first ' +
    'saved as an [Interrupted] version. When work landed after the turn (other chats’ turns, your commits or ' +
    'uncommitted edits), --only turn takes back only the turn’s own changes as a new [Revert] commit and keeps the ' +
    'rest (refused, with the conflicting files, when that does not apply cleanly); --only everything restores the ' +
    'pre-turn state and takes the later work away too (it stays in history). Without --only, later agent turns or ' +
    'your own commits are only undone with --yes.',
  example: 'agent-versions undo --turn 0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11 --only turn',
  json:
    '{"result": "restored"|"nothing-to-undo"|"no-change", "scope"?: "everything"|"turn", ' +
    '"restoreCommit"?: string, "preserved"?: string, "turnId"?: string}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  const { turn, only } = c.values;
  return runRestoreCommand(c, (history, options) => history.undo(turn, { ...options, ...(only ? { only } : {}) }));
}
