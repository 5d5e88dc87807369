import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { failpoint } from '../failpoints';
import { readSymbolicHead } from '../git/healthProbe';
import { branchNameTaken, resolveBranchStart, switchToBranch } from '../git/remoteBranch';
import type { GitRepository } from '../git/repository';
import { compareAndSetRef, readRef, ZERO_OID } from '../git/workingTree';
import { FS_CLOCK_SLACK_MS } from '../store/lockLiveness';
import { OPERATIONS } from '../operations/operationKinds';
import { runIfFree } from '../operations/operationLease';
import { runOperation } from '../operations/runOperation';
import { branchProblem, chatBranchState, continuationInfo, type ContinuationInfo } from './chatBranches';
import {
  type ChatBranchRow,
  type ChatEventRow,
  completeContinuation,
  continuationFrom,
  continuationOnto,
  deleteContinuation,
  getChatBranch,
  insertPendingContinuation,
  pendingContinuations,
} from './chatRecords';

export interface ContinueResult {
  result: 'continued' | 'already-continued';
  continuation: ContinuationInfo;
}

const MAX_SUFFIX = 1000;

/**
 * Continue on a New Branch (docs/design/branch-loss.md), only ever on the user's explicit request: re-checks that the
 * chat's branch is lost, creates a unique `<old>-2`, `-3`, … from the chat's base branch, checks it out, points the
 * chat at it (its resume identity is kept) and stores exactly one warning entry. Write-ahead: the continuation is
 * persisted 'pending' (with the new name) before the branch is created, so a retry or reconciliation after a crash
 * finishes the same branch and never makes a second one or a second warning.
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
