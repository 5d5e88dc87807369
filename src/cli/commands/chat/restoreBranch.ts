import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../../command';
import { terminalSafe } from '../../output';

export const spec: CommandSpec = {
  name: 'chat restore-branch',
  args: [],
  options: ['chat'],
  required: ['chat'],
  summary: 'bring back a conversation’s branch deleted locally from the remote that still has it',
  description:
    'When the conversation’s branch was deleted locally but the remote still has it: fetches that branch and ' +
    'recreates it locally (with the remote as upstream). Does not check it out; nothing else changes.',
  example: 'agent-versions chat restore-branch --chat my-session',
  json: '{"branch": string, "remote": string, "commit": string}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return withHistory(c, async (history) => {
    const r = await history.restoreChatBranch(c.values.chat);
    return {
      json: r,
      text:
        `Restored the branch ${terminalSafe(r.branch)} from ${terminalSafe(r.remote)} at ${r.commit.slice(0, 10)}. ` +
        'Check it out to continue the conversation there.',
    };
  });
}
