import { branchNotices, forgetBranchAnswers, restoreChatBranch } from '../chats/chatBranches';
import { continueOnNewBranch, type ContinueResult } from '../chats/chatContinuation';
import type { RepoContext } from '../context';
import { validateChatId } from '../turns/validation';
import { currentBranch } from './historyReads';

/** Continue on a New Branch for a chat (id validated); the remotes are asked again afterwards. */
export async function continueChatOnNewBranch(ctx: RepoContext, chatId: unknown): Promise<ContinueResult> {
  const result = await continueOnNewBranch(ctx, validateChatId(chatId));
  forgetBranchAnswers(ctx);
  return result;
}

/** Recreates a chat's (id validated) locally deleted branch from a remote; the remotes are asked again afterwards. */
export async function restoreBranchOfChat(
  ctx: RepoContext,
  chatId: unknown,
): Promise<{ branch: string; remote: string; commit: string }> {
  const result = await restoreChatBranch(ctx, validateChatId(chatId));
  forgetBranchAnswers(ctx);
  return result;
}

/** The branch notices of the current branch and of chats whose branch is gone. Read-only. */
export function currentBranchNotices(ctx: RepoContext, fresh: boolean): ReturnType<typeof branchNotices> {
  return branchNotices(ctx, currentBranch(ctx), { fresh });
}
