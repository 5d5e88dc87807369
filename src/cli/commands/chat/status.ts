import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../../command';
import { terminalSafe } from '../../output';
import { warningLine } from './continuationWarning';

export const spec: CommandSpec = {
  name: 'chat status',
  args: [],
  options: ['chat'],
  required: ['chat'],
  summary: 'whether a conversation’s branch is still here (ok, on-remote, lost, unknown)',
  description:
    'Checks the conversation’s branch: present locally (ok); deleted locally but still on the remote (on-remote: ' +
    'restore it with `chat restore-branch`); gone locally and on the remote (lost: its code changes cannot be ' +
    'recovered; `chat continue-on-new-branch` keeps the conversation going); or the remote could not be asked ' +
    '(unknown, with the reason network, auth or timeout: try again). Changes nothing.',
  example: 'agent-versions chat status --chat my-session --json',
  json:
    '{"chatId": string, "branch": "ok"|"on-remote"|"lost"|"unknown", "chatBranch": string|null, ' +
    '"baseBranch": string|null, "remote": string|null, "reason"?: "on-remote"|"lost"|"network"|"auth"|"timeout", ' +
    '"message"?: string, "continuations": [{"chatId": string, "oldBranch": string, "newBranch": string, ' +
    '"baseBranch": string, "repository": string, "at": number}]}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return withHistory(c, async (history) => {
    const s = await history.chatStatus(c.values.chat);
    const where = s.chatBranch ? `branch ${terminalSafe(s.chatBranch)}` : 'no branch recorded yet';
    const lines = [
      `chat: ${terminalSafe(s.chatId)}`,
      `${where}: ${s.branch}${s.reason && s.reason !== s.branch ? ` (${s.reason})` : ''}`,
      ...(s.baseBranch ? [`base branch: ${terminalSafe(s.baseBranch)}`] : []),
      ...(s.message ? [terminalSafe(s.message)] : []),
      ...s.continuations.map(warningLine),
    ];
    return { json: s, text: lines.join('\n') };
  });
}
