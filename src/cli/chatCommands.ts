import type { ContinuationInfo } from '../core/chats/chatBranches';
import { continuationWarningText } from '../views/versionHistory/copy';
import type { CommandName } from './commandLine';
import { terminalSafe } from './output';
import type { CommandContext, CommandOutput } from './repositoryCommands';

/** `chat status`, `chat continue-on-new-branch`, `chat restore-branch` (SPEC §7). Arguments arrive validated by commandLine.ts. */
export async function runChatCommand(command: CommandName, c: CommandContext): Promise<CommandOutput> {
  const { history, values } = c;
  switch (command) {
    case 'chat status': {
      const s = await history.chatStatus(values.chat);
      const where = s.chatBranch ? `branch ${terminalSafe(s.chatBranch)}` : 'no branch recorded yet';
      const lines = [
        `chat: ${terminalSafe(s.chatId)}`,
        `${where}: ${s.branch}${s.reason && s.reason !== s.branch ? ` (${s.reason})` : ''}`,
        ...(s.baseBranch ? [`base branch: ${terminalSafe(s.baseBranch)}`] : []),
        ...(s.message ? [terminalSafe(s.message)] : []),
        ...s.continuations.map(warningLine),
      ];
      return { json: s, text: lines.join('\n') };
    }
    case 'chat continue-on-new-branch': {
      const r = await history.continueChatOnNewBranch(values.chat);
      const text =
        r.result === 'already-continued'
          ? `Already continued: ${warningLine(r.continuation)}`
          : `Switched to the new branch ${terminalSafe(r.continuation.newBranch)} (from ${terminalSafe(r.continuation.baseBranch)}). ${warningLine(r.continuation)}`;
      return { json: r, text };
    }
    case 'chat restore-branch': {
      const r = await history.restoreChatBranch(values.chat);
      return {
        json: r,
        text: `Restored the branch ${terminalSafe(r.branch)} from ${terminalSafe(r.remote)} at ${r.commit.slice(0, 10)}. Check it out to continue the conversation there.`,
      };
    }
    default:
      throw new Error(`not a chat command: ${command}`);
  }
}

/** The warning entry's sentence (the same words as Version History). */
export function warningLine(w: ContinuationInfo): string {
  return terminalSafe(continuationWarningText(w.newBranch, w.oldBranch));
}
