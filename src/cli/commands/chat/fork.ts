import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../../command';
import { forkTurnConversation } from '../../conversations/forkTurn';
import { terminalSafe } from '../../output';

export const spec: CommandSpec = {
  name: 'chat fork',
  args: [{ name: 'turn' }],
  options: [],
  summary: 'continue a turn’s agent conversation from just before that turn (a fork; the original stays)',
  description:
    'After an Undo, the agent’s conversation still holds the undone turn. This forks the conversation through the ' +
    'agent’s own mechanism so that the fork ends just before the turn’s prompt, reads the fork back to check that, ' +
    'and prints the command that resumes it (run it in the folder printed). The original conversation is kept. ' +
    'Claude Code, Codex and opencode (docs/design/conversation-rollback.md); for other agents, or a turn whose ' +
    'place in the conversation is unknown, it says why and creates nothing.',
  example: 'agent-versions chat fork 0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11',
  json:
    '{"turnId": string, "agent": string, "chatId": string, "forkId": string, "anchorId": string|null, ' +
    '"resume": {"argv": string[], "cwd": string, "command": string}}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return withHistory(c, async (history) => {
    const { displayName, ...fork } = await forkTurnConversation(history, c.args[0], process.env, c.folder);
    return {
      json: fork,
      text:
        `Forked the ${displayName} conversation just before this turn (the original is kept). ` +
        `Continue it in ${terminalSafe(fork.resume.cwd)} with:\n  ${terminalSafe(fork.resume.command)}`,
    };
  });
}
