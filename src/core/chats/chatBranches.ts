import type { ChatBranchNotice } from '../domain/versionsModel';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { readSymbolicHead } from '../git/healthProbe';
import {
  BranchState,
  chooseRemote,
  classifyBranch,
  localBranches,
  readRemoteFacts,
  remoteDefaultBranch,
  REMOTE_CHECK_TIMEOUT_MS,
  restoreBranchFromRemote,
} from '../git/remoteBranch';
import type { GitRepository } from '../git/repository';
import { readRef } from '../git/workingTree';
import { OPERATIONS } from '../operations/operationKinds';
import { runOperation } from '../operations/runOperation';
import { ChatBranchRow, ChatEventRow, chatsOffBranch, continuationsOf, getChatBranch, warningsOn } from './chatRecords';

/**
 * Where a new chat starts from: its base branch (given, else the remote's default branch, else the current one) and its
 * remote.
 */
export async function chatOrigin(
  repo: GitRepository,
  branch: string,
  requestedBase?: string,
): Promise<{ baseBranch: string; remote: string | null }> {
  const facts = await readRemoteFacts(repo);
  const remote = chooseRemote(facts, branch);
  if (requestedBase) return { baseBranch: requestedBase, remote };
  const remoteDefault = remote ? await remoteDefaultBranch(repo, remote) : null;
  return { baseBranch: remoteDefault ?? branch, remote };
}

/** The chat's branch state: ok without asking git when it is the current branch (the common case). Read-only. */
export async function chatBranchState(
  ctx: RepoContext,
  chat: ChatBranchRow,
  currentBranch: string | null,
): Promise<BranchState> {
  if (!chat.branch || chat.branch === currentBranch) return { state: 'ok' };
  return classifyBranch(ctx.repo, chat.branch, { recordedRemote: chat.remote });
}

/** The error an action on a chat whose branch is not here reports; null when the branch is fine. */
export function branchProblem(
  chatId: string,
  branch: string,
  state: BranchState,
  canContinue: boolean,
): AvhError | null {
  const named = `The branch "${branch}" for this chat`;
  const details = { chat: chatId, branch, state: state.state, remote: 'remote' in state ? state.remote : null };
  switch (state.state) {
    case 'ok':
      return null;
    case 'lost': {
      const next = canContinue ? ' Continue on a new branch to keep the conversation going; nothing was changed.' : '';
      return new AvhError(
        'branch-lost',
        state.remote
          ? `${named} no longer exists locally or on "${state.remote}". Its code changes cannot be recovered.${next}`
          : `${named} no longer exists, and this repository has no remote to look for it on. Its code changes ` +
              `cannot be recovered.${next}`,
        { ...details, canContinue },
      );
    }
    case 'on-remote':
      return new AvhError(
        'branch-on-remote',
        `${named} was deleted locally but still exists on "${state.remote}". Restore it from "${state.remote}" to ` +
          `continue; nothing was changed.`,
        details,
      );
    case 'unknown': {
      const why =
        state.reason === 'auth'
          ? `"${state.remote}" refused the check (authentication failed)`
          : state.reason === 'timeout'
            ? `"${state.remote}" did not answer within ${REMOTE_CHECK_TIMEOUT_MS / 1000} seconds`
            : `"${state.remote}" could not be reached`;
      return new AvhError(
        'branch-unavailable',
        `${named} is not in this repository, and ${why}, so whether it still exists there is unknown. Nothing was ` +
          `changed; try again.`,
        { ...details, remoteFailure: state.reason },
      );
    }
  }
}

/**
 * Refuses an action on a chat whose branch is not here (lost, only on the remote, or unknown), before anything
 * changes. A chat on the current branch costs no git process.
 */
export async function assertChatBranchUsable(
  ctx: RepoContext,
  chatId: string,
  currentBranch: string | null,
): Promise<void> {
  const chat = await ctx.store.read((r) => getChatBranch(r, chatId));
  if (!chat?.branch) return;
  const problem = branchProblem(chatId, chat.branch, await chatBranchState(ctx, chat, currentBranch), true);
  if (problem) throw problem;
}

/**
 * Before Undo of a turn recorded on another branch than the current one: when that branch is lost, only on the
 * remote or cannot be checked, says so (instead of "check out that branch", which cannot be done). Read-only.
 */
export async function assertTurnBranchUsable(
  ctx: RepoContext,
  turn: { chat_id: string; branch: string | null },
  currentBranch: string,
): Promise<void> {
  if (!turn.branch || turn.branch === currentBranch) return;
  const chat = await ctx.store.read((r) => getChatBranch(r, turn.chat_id));
  const state = await classifyBranch(ctx.repo, turn.branch, { recordedRemote: chat?.remote ?? null });
  const problem = branchProblem(turn.chat_id, turn.branch, state, chat?.branch === turn.branch);
  if (problem) throw problem;
}

export interface ChatStatus {
  chatId: string;
  branch: BranchState['state'];
  chatBranch: string | null;
  baseBranch: string | null;
  remote: string | null;
  /** Why the branch is not usable here (lost / on-remote / unknown with its class), absent when ok. */
  reason?: string;
  message?: string;
  continuations: ContinuationInfo[];
}

/** A warning entry: the conversation continues on `newBranch`; the code changes of `oldBranch` were not recovered. */
export interface ContinuationInfo {
  chatId: string;
  chatTitle?: string | null;
  oldBranch: string;
  newBranch: string;
  baseBranch: string;
  repository: string;
  at: number;
}

/** A continuation's warning entry as callers see it. */
export function continuationInfo(ctx: RepoContext, e: ChatEventRow & { chat_title?: string | null }): ContinuationInfo {
  return {
    chatId: e.chat_id,
    ...(e.chat_title !== undefined ? { chatTitle: e.chat_title } : {}),
    oldBranch: e.old_branch,
    newBranch: e.new_branch,
    baseBranch: e.base_branch,
    repository: ctx.repo.root,
    at: e.updated_at,
  };
}

/** `chat status`: the chat's branch classified now, with its warning entries. Read-only. */
export async function chatStatus(ctx: RepoContext, chatId: string): Promise<ChatStatus> {
  const { chat, events } = await ctx.store.read((r) => ({
    chat: getChatBranch(r, chatId),
    events: continuationsOf(r, chatId),
  }));
  if (!chat) throw new AvhError('invalid-input', 'No chat with this id exists in this repository.');
  const head = readSymbolicHead(ctx.repo.gitDir); // HEAD's file: no git process (and no working-tree scan) for a status
  const state = await chatBranchState(ctx, chat, head ? head.slice('refs/heads/'.length) : null);
  const problem = chat.branch ? branchProblem(chatId, chat.branch, state, true) : null;
  return {
    chatId,
    branch: state.state,
    chatBranch: chat.branch,
    baseBranch: chat.base_branch,
    remote: 'remote' in state ? state.remote : chat.remote,
    ...(state.state === 'unknown' ? { reason: state.reason } : state.state !== 'ok' ? { reason: state.state } : {}),
    ...(problem ? { message: problem.message } : {}),
    continuations: events.map((e) => continuationInfo(ctx, e)),
  };
}

/**
 * Restore from the remote: a chat's branch deleted locally but still on the remote is fetched and recreated
 * locally (never checked out, nothing else changes). Refused unless the remote confirms it has the branch now.
 */
export function restoreChatBranch(
  ctx: RepoContext,
  chatId: string,
): Promise<{ branch: string; remote: string; commit: string }> {
  return runOperation(ctx, OPERATIONS.chatBranchRestore, async () => {
    const chat = await ctx.store.read((r) => getChatBranch(r, chatId));
    if (!chat?.branch)
      throw new AvhError('invalid-input', 'No chat with this id and a recorded branch exists in this repository.');
    const state = await classifyBranch(ctx.repo, chat.branch, { recordedRemote: chat.remote });
    if (state.state === 'ok')
      return {
        branch: chat.branch,
        remote: chat.remote ?? '',
        commit: (await readRef(ctx.repo, `refs/heads/${chat.branch}`))!,
      };
    if (state.state !== 'on-remote') throw branchProblem(chatId, chat.branch, state, true)!;
    const commit = await restoreBranchFromRemote(ctx.repo, chat.branch, state.remote);
    ctx.log.info('chat.branch-restored-from-remote', { chat: chatId });
    return { branch: chat.branch, remote: state.remote, commit };
  });
}

const issueCache = new WeakMap<RepoContext, Map<string, { at: number; state: BranchState }>>();
/** How long a remote's answer is reused by the view (which refreshes on every change); Try again asks anew. */
const ISSUE_CACHE_MS = 60_000;

/**
 * What the Version History view shows about branches (docs/product-contract.md §7, §8): the warning entries of the
 * current branch and the chats (all, or `onlyChats`: the view passes those with rows in the list) whose branch is gone.
 * One `for-each-ref` when some chat works on another branch; the remote is asked only for branches missing locally, and
 * its answer is reused for a minute unless `fresh`. Read-only.
 */
export async function branchNotices(
  ctx: RepoContext,
  currentBranch: string | null,
  options: { fresh?: boolean; onlyChats?: ReadonlySet<string> } = {},
): Promise<{ warnings: ContinuationInfo[]; issues: ChatBranchNotice[] }> {
  const fresh = options.fresh === true;
  const { warnings, offBranch } = await ctx.store.read((r) => ({
    warnings: warningsOn(r, currentBranch),
    offBranch: chatsOffBranch(r, currentBranch),
  }));
  const others = options.onlyChats ? offBranch.filter((c) => options.onlyChats!.has(c.id)) : offBranch;
  const issues: ChatBranchNotice[] = [];
  if (others.length > 0) {
    const local = await localBranches(ctx.repo);
    const missing = others.filter((c) => !local.has(c.branch!));
    let cache = issueCache.get(ctx);
    if (!cache) issueCache.set(ctx, (cache = new Map()));
    const facts = missing.length > 0 ? await readRemoteFacts(ctx.repo) : undefined;
    for (const chat of missing) {
      const key = `${chat.branch}\0${chat.remote ?? ''}`;
      const cached = cache.get(key);
      let state = !fresh && cached && Date.now() - cached.at < ISSUE_CACHE_MS ? cached.state : undefined;
      if (!state) {
        state = await classifyBranch(ctx.repo, chat.branch!, { recordedRemote: chat.remote, facts });
        cache.set(key, { at: Date.now(), state });
      }
      const problem = branchProblem(chat.id, chat.branch!, state, true);
      if (problem && state.state !== 'ok') {
        issues.push({
          chatId: chat.id,
          chatTitle: chat.title,
          branch: chat.branch!,
          state: state.state,
          message: problem.message,
          canContinue: state.state === 'lost',
        });
      }
    }
  }
  return { warnings: warnings.map((e) => continuationInfo(ctx, e)), issues };
}

/** Forgets the view's cached remote answers for this repository (Try again, or after an action changed branches). */
export function forgetBranchAnswers(ctx: RepoContext): void {
  issueCache.delete(ctx);
}
