import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChatBranchNotice } from '../../shared/viewModels';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { failpoint } from '../failpoints';
import { readSymbolicHead } from '../git/healthProbe';
import {
  BranchState,
  branchNameTaken,
  chooseRemote,
  classifyBranch,
  localBranches,
  readRemoteFacts,
  remoteDefaultBranch,
  REMOTE_CHECK_TIMEOUT_MS,
  resolveBranchStart,
  restoreBranchFromRemote,
  switchToBranch,
} from '../git/remoteBranch';
import type { GitRepository } from '../git/repository';
import { compareAndSetRef, readRef, ZERO_OID } from '../git/workingTree';
import { FS_CLOCK_SLACK_MS } from '../recovery/staleLocks';
import { OPERATIONS } from '../session/operationKinds';
import { runIfFree } from '../session/operationLease';
import { runOperation } from '../session/runOperation';
import {
  ChatBranchRow,
  ChatEventRow,
  chatsOffBranch,
  completeContinuation,
  continuationsOf,
  continuationFrom,
  continuationOnto,
  deleteContinuation,
  getChatBranch,
  insertPendingContinuation,
  pendingContinuations,
  warningsOn,
} from './chatRecords';

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

function continuationInfo(ctx: RepoContext, e: ChatEventRow & { chat_title?: string | null }): ContinuationInfo {
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

export interface ContinueResult {
  result: 'continued' | 'already-continued';
  continuation: ContinuationInfo;
}

const MAX_SUFFIX = 1000;

/**
 * Continue on a New Branch (SPEC §7), only ever on the user's explicit request: re-checks that the chat's branch
 * is lost, creates a unique `<old>-2`, `-3`, … from the chat's base branch, checks it out, points the chat at it
 * (its resume identity is kept) and stores exactly one warning entry. Write-ahead: the continuation is persisted
 * 'pending' (with the new name) before the branch is created, so a retry or reconciliation after a crash finishes
 * the same branch and never makes a second one or a second warning.
 */
export function continueOnNewBranch(ctx: RepoContext, chatId: string): Promise<ContinueResult> {
  return runOperation(ctx, OPERATIONS.chatContinue, async ({ branch: current }) => {
    const chat = await ctx.store.read((r) => getChatBranch(r, chatId));
    if (!chat) throw new AvhError('invalid-input', 'No chat with this id exists in this repository.');
    if (!chat.branch)
      throw new AvhError(
        'invalid-input',
        'This chat has no branch recorded (it has no turn yet), so there is nothing to continue.',
      );
    const { done, found } = await ctx.store.read((r) => ({
      done: continuationOnto(r, chatId, chat.branch!),
      found: continuationFrom(r, chatId, chat.branch!),
    }));
    let pending = found?.status === 'pending' ? found : undefined;
    // Re-checked inside the action: nothing is replaced unless the branch is confirmed lost now.
    const branchState = await chatBranchState(ctx, chat, current);
    if (branchState.state === 'ok' && done && !pending) {
      // A retry after it completed: the same branch, the same single warning; the checkout is finished if needed.
      if (current !== done.new_branch) await switchToBranch(ctx.repo, done.new_branch);
      return { result: 'already-continued', continuation: continuationInfo(ctx, done) };
    }
    if (branchState.state !== 'lost') {
      if (pending) await abandonContinuation(ctx, pending);
      if (branchState.state === 'ok')
        throw new AvhError(
          'invalid-input',
          `The branch "${chat.branch}" for this chat exists, so there is nothing to continue; nothing was changed.`,
          { chat: chatId },
        );
      throw branchProblem(chatId, chat.branch, branchState, true)!;
    }
    if (!pending) pending = await planContinuation(ctx, chat, current, branchState.remote, done);
    try {
      await createBranchAt(ctx, pending);
    } catch (error) {
      if (!(error instanceof AvhError && error.reason === 'ref-moved')) throw error;
      // Someone made a branch of that name (at another commit) since it was planned: theirs stays; a new name is
      // picked.
      const stale = pending;
      await ctx.store.transaction((tx) => deleteContinuation(tx, stale.id));
      pending = await planContinuation(ctx, chat, current, branchState.remote, done);
      await createBranchAt(ctx, pending);
    }
    failpoint('chat-continue:after-branch');
    if (current !== pending.new_branch) {
      try {
        await switchToBranch(ctx.repo, pending.new_branch);
      } catch (error) {
        // Nothing the user asked for happened: the untouched new branch and its pending entry go, the error is told.
        await abandonContinuation(ctx, pending);
        if (error instanceof AvhError && error.reason === 'dirty-conflict') {
          throw new AvhError(
            'dirty-conflict',
            `Your uncommitted changes would be overwritten by switching to a new branch from ` +
              `"${pending.base_branch}". Commit or stash them, then try again. Nothing was changed.`,
            { chat: chatId },
          );
        }
        throw error;
      }
    }
    failpoint('chat-continue:after-switch');
    const event = pending;
    await ctx.store.transaction((tx) => completeContinuation(tx, event, Date.now()));
    ctx.log.warn('chat.continued-on-new-branch', { chat: chatId, event: event.id });
    return { result: 'continued', continuation: continuationInfo(ctx, { ...event, status: 'done' }) };
  });
}

/** Creates the continuation's branch at its base commit; a re-run finding it there already is success. */
function createBranchAt(ctx: RepoContext, event: ChatEventRow): Promise<void> {
  return compareAndSetRef(
    ctx.repo,
    `refs/heads/${event.new_branch}`,
    event.base_commit,
    ZERO_OID,
    'agent-versions: continue chat on a new branch',
  );
}

/** Picks the base commit and a free `<old>-N` name, and persists the continuation as pending (write-ahead). */
async function planContinuation(
  ctx: RepoContext,
  chat: ChatBranchRow,
  current: string,
  remote: string | null,
  previous: ChatEventRow | undefined,
): Promise<ChatEventRow> {
  const old = chat.branch!;
  // A branch that was itself a continuation (`x-2`) is followed by `x-3`, not `x-2-2`.
  const stem = previous ? previous.old_branch : old;
  let baseBranch = chat.base_branch && chat.base_branch !== old ? chat.base_branch : current;
  let baseCommit = await resolveBranchStart(ctx.repo, baseBranch, remote);
  if (!baseCommit) {
    // The base branch went too: the current branch is the nearest start the user can see (the entry names it).
    baseBranch = current;
    baseCommit = await resolveBranchStart(ctx.repo, current, null);
  }
  if (!baseCommit)
    throw new AvhError(
      'invalid-input',
      `Neither the chat's base branch nor the current branch resolves to a commit; nothing was changed.`,
    );
  let name: string | null = null;
  for (let n = 2; n <= MAX_SUFFIX && name === null; n++) {
    if (`${stem}-${n}` !== old && !(await branchNameTaken(ctx.repo, `${stem}-${n}`, remote))) name = `${stem}-${n}`;
  }
  if (!name)
    throw new AvhError(
      'invalid-input',
      `No free branch name "${stem}-2" … "${stem}-${MAX_SUFFIX}" is left; nothing was changed.`,
    );
  const now = Date.now();
  const row: ChatEventRow = {
    id: crypto.randomUUID(),
    chat_id: chat.id,
    kind: 'continued-on-new-branch',
    status: 'pending',
    old_branch: old,
    new_branch: name,
    base_branch: baseBranch,
    base_commit: baseCommit,
    created_at: now,
    updated_at: now,
  };
  await ctx.store.transaction((tx) => insertPendingContinuation(tx, row));
  failpoint('chat-continue:after-plan');
  return row;
}

/** Drops a pending continuation and the branch it created, when that branch is still untouched and not checked out. */
async function abandonContinuation(ctx: RepoContext, event: ChatEventRow): Promise<void> {
  const ref = `refs/heads/${event.new_branch}`;
  const at = await readRef(ctx.repo, ref);
  if (at === event.base_commit && readSymbolicHead(ctx.repo.gitDir) !== ref) {
    await compareAndSetRef(ctx.repo, ref, ZERO_OID, event.base_commit, 'agent-versions: abandoned continuation');
  }
  await ctx.store.transaction((tx) => deleteContinuation(tx, event.id));
}

/**
 * Reconciliation (every open): a continuation a crashed process left pending is finished when its branch was
 * created (the chat is pointed at it, the one warning entry is stored; the working tree is not switched), and
 * dropped when it never was. Only under the lease, so a live continuation is never settled under its feet.
 */
export async function settleChatContinuations(ctx: RepoContext): Promise<number> {
  const pending = await ctx.store.read((r) => pendingContinuations(r));
  if (pending.length === 0) return 0;
  return runIfFree(
    ctx.repo,
    OPERATIONS.reconcile,
    async () => {
      const settled = await ctx.store.read((r) => pendingContinuations(r));
      for (const event of settled) {
        const created = (await readRef(ctx.repo, `refs/heads/${event.new_branch}`)) !== null;
        if (!created && removeOwnBranchLock(ctx.repo, event))
          ctx.log.warn('chat.continuation-lock-removed', { chat: event.chat_id, event: event.id });
        await ctx.store.transaction((tx) =>
          created ? completeContinuation(tx, event, Date.now()) : deleteContinuation(tx, event.id),
        );
        ctx.log.warn('chat.continuation-settled', { chat: event.chat_id, event: event.id, completed: created });
      }
      return settled.length;
    },
    () => 0,
  );
}

/**
 * A process of ours killed while its `git update-ref` created the continuation's branch can leave git's lock on
 * that new ref (`refs/heads/<new>.lock`), and every retry would then be refused. Reconciliation (holding the
 * lease, so the process that planned it is gone) removes that lock only when it is provably that command's: the
 * name was free when the continuation was planned, the lock was written after that, and it holds nothing or
 * exactly the value our command was writing (git writes the new value into the lock before renaming it).
 * Returns whether a lock was removed. Locks on existing refs stay the user's decision (see staleLocks.ts).
 */
function removeOwnBranchLock(repo: GitRepository, event: ChatEventRow): boolean {
  const lockFile = path.join(repo.gitDir, 'refs', 'heads', `${event.new_branch}.lock`);
  let stat: fs.Stats;
  let content: string;
  try {
    stat = fs.statSync(lockFile);
    content = fs.readFileSync(lockFile, 'utf8');
  } catch {
    return false;
  }
  if (!stat.isFile() || stat.mtimeMs < event.created_at - FS_CLOCK_SLACK_MS) return false;
  if (content !== '' && content.trim() !== event.base_commit) return false;
  fs.rmSync(lockFile);
  return true;
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
 * What the Version History view shows about branches (SPEC §7, §8): the warning entries of the current branch
 * and the chats (all, or `onlyChats`: the view passes those with rows in the list) whose branch is gone. One
 * `for-each-ref` when some chat works on another branch; the remote is asked only for branches missing locally, and its
 * answer is reused for a minute unless `fresh`. Read-only.
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
