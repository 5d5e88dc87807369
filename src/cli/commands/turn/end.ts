import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../../command';
import { tellLeftOut } from './leftOutFiles';

export const spec: CommandSpec = {
  name: 'turn end',
  args: [{ name: 'turnId' }],
  options: ['outcome'],
  required: ['outcome'],
  summary: 'record how a turn ended (a completed turn that changed files becomes a version)',
  description:
    'Records the turn’s outcome. A completed turn that changed files becomes one [Agent] commit on the current ' +
    'branch; a cancelled or errored turn leaves its partial changes in place for Undo to save.',
  example: 'agent-versions turn end 0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11 --outcome completed',
  json: '{"turnId": string, "outcome": "completed"|"cancelled"|"errored", "version": string|null}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return withHistory(c, async (history) => {
    const r = await history.endTurn(c.args[0], c.values.outcome);
    if (r.message) c.stderr(`agent-versions: ${r.message}\n`);
    tellLeftOut(c, r.excluded, r.notice);
    return {
      json: {
        turnId: r.turnId,
        outcome: r.outcome,
        version: r.version,
        excluded: r.excluded.map((f) => ({ path: f.path, reason: f.rule })),
      },
      text: r.version
        ? `${r.outcome}: version ${r.version.slice(0, 12)}`
        : `${r.outcome}: no version${r.reason ? ` (${r.reason})` : ''}`,
    };
  });
}
