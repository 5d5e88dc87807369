import type { VersionHistory } from '../../core/versionHistory';
import { EXIT } from '../exitCodes';
import { installedAgent, refusal, shellLine } from './mechanism';
import { conversationMechanismOf, NO_MECHANISM } from './registry';

/** What `chat fork --json` prints and what the extension's Continue Chat from Before This Turn opens a terminal for. */
export interface TurnConversationFork {
  turnId: string;
  agent: string;
  /** The agent's name for people ("Claude Code"). */
  displayName: string;
  chatId: string;
  forkId: string;
  anchorId: string | null;
  /** The command that resumes the fork (`command`: argv as a person types it), and the folder it must run in. */
  resume: { argv: string[]; cwd: string; command: string };
}

/**
 * Forks the conversation of `turnId` just before that turn through its agent's own mechanism (issue 32,
 * docs/design/conversation-rollback.md): the CLI's `chat fork` and the extension's commands share it. Throws a
 * CliError ending "Nothing was created." when it cannot (no mechanism, unknown anchor, agent not on PATH or of
 * another version, a prerequisite missing, the read-back mismatch); an unknown turn id is the core's refusal.
 * `folder`: the repository's folder, where the agent runs.
 */
export async function forkTurnConversation(
  history: VersionHistory,
  turnId: unknown,
  env: NodeJS.ProcessEnv,
  folder: string,
): Promise<TurnConversationFork> {
  const turn = await history.turnAnchor(turnId);
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
  const installed = installedAgent(mechanism, env);
  if (!installed.file)
    throw refusal(
      `${mechanism.displayName}’s command \`${mechanism.command}\` is not on PATH, so a fork could not be resumed.`,
    );
  if (installed.version === null || !mechanism.supports(installed.version))
    throw refusal(
      `${mechanism.displayName} ${installed.version ?? '(version unknown)'} is not a version whose conversations ` +
        `can be forked here (verified with ${mechanism.verifiedVersion}).`,
    );
  const prerequisite = mechanism.prerequisite?.(installed.file, env);
  if (prerequisite && !prerequisite.met) throw refusal(prerequisite.message);
  const fork = await mechanism.fork(turn.anchor, env, folder);
  return {
    turnId: turn.turnId,
    agent: mechanism.agent,
    displayName: mechanism.displayName,
    chatId: turn.chatId,
    forkId: fork.forkId,
    anchorId: fork.anchorId,
    resume: { ...fork.resume, command: shellLine(fork.resume.argv) },
  };
}
