import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../command';

export const spec: CommandSpec = {
  name: 'checkpoints',
  args: [],
  options: ['turn'],
  summary: 'list the checkpoints taken just before agents ran destructive commands',
  description:
    'Before a running turn’s agent runs a command that destroys working-tree content (`git reset --hard`, ' +
    '`git clean`, `git stash`, `rm -rf` …), its hook saves the working tree. Lists them oldest first, ' +
    'with what was recognised (never the command’s text); restore one with `agent-versions undo ' +
    '--before-command <id>`. --turn lists one turn’s.',
  example: 'agent-versions checkpoints --turn 0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11',
  json:
    '[{"id": string, "turnId": string, "chatId": string, "label": string, "commit": string, ' +
    '"savedFiles": number (ignored files kept beside it), "createdAt": number (ms)}]',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return withHistory(c, async (history) => {
    const list = await history.checkpoints(c.values.turn);
    const text =
      list.length === 0
        ? 'No checkpoints: no agent ran a destructive command during a recorded turn.'
        : list
            .map(
              (k) =>
                `${new Date(k.createdAt).toISOString().slice(0, 19).replace('T', ' ')}  ${k.id}  before ` +
                `${k.label}  turn ${k.turnId.slice(0, 8)}` +
                (k.savedFiles > 0 ? `  (${k.savedFiles} ignored file${k.savedFiles === 1 ? '' : 's'} kept)` : ''),
            )
            .join('\n');
    return { json: list, text };
  });
}
