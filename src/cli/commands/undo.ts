import type { CommandContext, CommandOutput, CommandSpec } from '../command';
import { UsageError } from '../exitCodes';
import { runRestoreCommand } from './restoreRun';

export const spec: CommandSpec = {
  name: 'undo',
  args: [],
  options: ['turn', 'only', 'before-command', 'yes'],
  summary: 'undo an agent turn (default: the latest on this branch)',
  description:
    'Restores the turn’s pre-turn state as a new [Restore] commit. A cancelled turn’s partial changes are first ' +
    'saved as an [Interrupted] version. When work landed after the turn (other chats’ turns, your commits or ' +
    'uncommitted edits), --only turn takes back only the turn’s own changes as a new [Revert] commit and keeps the ' +
    'rest (refused, with the conflicting files, when that does not apply cleanly); --only everything restores the ' +
    'pre-turn state and takes the later work away too (it stays in history). Without --only, later agent turns or ' +
    'your own commits are only undone with --yes. --before-command <checkpoint> restores the working tree to just ' +
    'before an agent ran a destructive command (`git reset --hard`, `git clean`, `rm -rf` …; `agent-versions ' +
    'checkpoints` lists them) as a new [Restore] commit, then writes back the ignored files that command could ' +
    'delete and that are missing.',
  example: 'agent-versions undo --turn 0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11 --only turn',
  json:
    '{"result": "restored"|"nothing-to-undo"|"no-change", "scope"?: "everything"|"turn", ' +
    '"restoreCommit"?: string, "preserved"?: string, "turnId"?: string, ' +
    '"broughtBack"?: number (--before-command: ignored files written back)}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  const { turn, only } = c.values;
  const checkpoint = c.values['before-command'];
  if (checkpoint !== undefined) {
    if (turn !== undefined || only !== undefined)
      throw new UsageError('--before-command restores to a checkpoint: it takes no --turn or --only.', 'undo');
    return runRestoreCommand(c, (history, options) => history.restoreBeforeCommand(checkpoint, options));
  }
  return runRestoreCommand(c, (history, options) => history.undo(turn, { ...options, ...(only ? { only } : {}) }));
}
