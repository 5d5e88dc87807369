import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../../command';
import { terminalSafe } from '../../output';
import { warningLine } from './continuationWarning';

export const spec: CommandSpec = {
  name: 'chat continue-on-new-branch',
  args: [],
  options: ['chat'],
  required: ['chat'],
  summary: 'continue a conversation whose branch is lost on a new branch (its code is not recovered)',
  description:
    'Only when the conversation’s branch is confirmed lost (gone locally and on the remote): creates <branch>-2 ' +
    '(or -3, …) from the conversation’s base branch, checks it out, and records it on the conversation, keeping ' +
    'its resume identity. One warning entry says that the lost branch’s code changes were not recovered. Running ' +
    'it again changes nothing.',
  example: 'agent-versions chat continue-on-new-branch --chat my-session',
  json:
    '{"result": "continued"|"already-continued", "continuation": {"chatId": string, "oldBranch": string, ' +
    '"newBranch": string, "baseBranch": string, "repository": string, "at": number}}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return withHistory(c, async (history) => {
    const r = await history.continueChatOnNewBranch(c.values.chat);
    const { newBranch, baseBranch } = r.continuation;
    const text =
      r.result === 'already-continued'
        ? `Already continued: ${warningLine(r.continuation)}`
        : `Switched to the new branch ${terminalSafe(newBranch)} (from ${terminalSafe(baseBranch)}). ` +
          warningLine(r.continuation);
    return { json: r, text };
  });
}
