import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../../command';
import { installedAgent, refusal, shellLine } from '../../conversations/mechanism';
import { conversationMechanismOf, NO_MECHANISM } from '../../conversations/registry';
import { EXIT } from '../../exitCodes';
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
    const turn = await history.turnAnchor(c.args[0]);
    const mechanism = conversationMechanismOf(turn.agent);
    if (!mechanism) throw refusal(NO_MECHANISM, EXIT.usage);
    if (!turn.anchor || turn.anchor.agent !== mechanism.agent) {
      const cause = mechanism.unknownAnchor ? ` ${mechanism.unknownAnchor}` : '';
      throw refusal(
        `Where this turn sits in its ${mechanism.displayName} conversation is unknown: its hook did not name it ` +
          `(recorded before this version, or by \`turn begin\`).${cause}`,
        EXIT.usage,
      );
    }
    const installed = installedAgent(mechanism, process.env);
    if (!installed.file)
      throw refusal(
        `${mechanism.displayName}’s command \`${mechanism.command}\` is not on PATH, so a fork could not be resumed.`,
      );
    if (installed.version === null || !mechanism.supports(installed.version))
      throw refusal(
        `${mechanism.displayName} ${installed.version ?? '(version unknown)'} is not a version whose conversations ` +
          `can be forked here (verified with ${mechanism.verifiedVersion}).`,
      );
    const prerequisite = mechanism.prerequisite?.(installed.file, process.env);
    if (prerequisite && !prerequisite.met) throw refusal(prerequisite.message);
    const fork = await mechanism.fork(turn.anchor, process.env, c.folder);
    const command = shellLine(fork.resume.argv);
    return {
      json: {
        turnId: turn.turnId,
        agent: mechanism.agent,
        chatId: turn.chatId,
        forkId: fork.forkId,
        anchorId: fork.anchorId,
        resume: { ...fork.resume, command },
      },
      text:
        `Forked the ${mechanism.displayName} conversation just before this turn (the original is kept). ` +
        `Continue it in ${terminalSafe(fork.resume.cwd)} with:\n  ${terminalSafe(command)}`,
    };
  });
}
