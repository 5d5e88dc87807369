import * as fs from 'node:fs';
import type { RepoContext } from '../context';
import { failpoint } from '../failpoints';
import { AvhError, ErrorReason, isAvhError } from '../errors';
import { runGit } from '../git/gitRunner';
import { GitOperation, inspectRepositoryHealth, RepositoryHealth, WorkingTreeCounts } from '../git/healthProbe';
import { acquireRepositoryLease } from '../git/repositoryLease';
import { compareAndSetRef, createCommit, installIndex, TemporaryIndex, writeWorkingTree } from '../git/workingTree';
import { RECOVERY_SUBJECT } from '../turns/promptSummary';
import { readSymbolicHead } from '../turns/turnLedger';
import { clearRecovery, readRecovery, RecoveryLatch } from './recoveryLatch';

export type RecoveryBlocker = 'missing' | 'unborn' | 'detached' | 'unmerged' | GitOperation | 'index-locked';

/** What the read-only repository check found (SPEC §6). Only `healthy` can be accepted; only `dirty` can be saved. */
export type RecoveryAssessment =
  | { kind: 'healthy'; branch: string; head: string }
  | { kind: 'dirty'; branch: string; head: string; counts: WorkingTreeCounts }
  | { kind: 'blocked'; blocker: RecoveryBlocker; message: string };

export type BlockedAssessment = Extract<RecoveryAssessment, { kind: 'blocked' }>;

/** The outcome of Use current version / Save changes & use current version. Only `accepted` cleared the latch. */
export type RecoverySettlement =
  | { result: 'not-required' }
  | { result: 'accepted'; branch: string; head: string; savedCommit?: string }
  /** The repository is not acceptable as it is; recovery stays. */
  | { result: 'rejected'; assessment: RecoveryAssessment }
  /** A newer recovery replaced the one the caller validated; it stays for the caller to look at again. */
  | { result: 'superseded'; generation: number };

export interface AcceptOptions {
  /** The latch generation the caller showed the user; a different (newer) latch is never cleared. */
  generation?: number;
}

const OPERATION_NAMES: Record<GitOperation, string> = {
  merge: 'merge',
  rebase: 'rebase',
  am: 'patch application (git am)',
  'cherry-pick': 'cherry-pick',
  revert: 'revert',
  bisect: 'bisect',
};

/** Plain-words copy for each blocker: what is wrong and what the user does about it. */
export function blockerMessage(blocker: RecoveryBlocker): string {
  switch (blocker) {
    case 'missing':
      return 'The repository folder no longer exists or is no longer a Git repository. Restore it or reopen the project, then check again.';
    case 'unborn':
      return 'This repository has no commits yet, so there is no current version to continue from. Make a first commit outside VS Code, then check again.';
    case 'detached':
      return 'This project is not on a branch (Git calls this a detached HEAD). Switch to a branch outside VS Code, then check again.';
    case 'unmerged':
      return 'This project has unresolved file conflicts. Resolve them outside VS Code, then check again.';
    case 'index-locked':
      return 'Another Git process is using this repository (index.lock is held). Wait for it to finish, or remove .git/index.lock if no Git process is running, then check again.';
    default:
      return `A Git ${OPERATION_NAMES[blocker]} is still in progress. Finish or cancel it outside VS Code, then check again.`;
  }
}

/**
 * Classifies one health probe. An operation in progress wins over the detached HEAD and conflicts it causes
 * (a rebase detaches HEAD), so the user is told about the thing they must finish.
 */
export function assessHealth(health: RepositoryHealth): RecoveryAssessment {
  const blocked = (blocker: RecoveryBlocker): RecoveryAssessment => ({ kind: 'blocked', blocker, message: blockerMessage(blocker) });
  if (!health.exists) return blocked('missing');
  if (health.operations.length > 0) return blocked(health.operations[0]);
  if (health.unborn || !health.head) return blocked(health.detached ? 'detached' : 'unborn');
  if (health.detached || !health.branch) return blocked('detached');
  if (health.counts.unmerged > 0) return blocked('unmerged');
  if (health.indexLocked) return blocked('index-locked');
  if (!health.clean) return { kind: 'dirty', branch: health.branch, head: health.head, counts: health.counts };
  return { kind: 'healthy', branch: health.branch, head: health.head };
}

/** Read-only check of the repository as it is now, from one health probe. Never changes git or the latch. */
export async function checkRepository(ctx: RepoContext): Promise<RecoveryAssessment> {
  return assessHealth(await inspectRepositoryHealth(ctx.repo));
}

const BLOCKER_REASONS: Record<RecoveryBlocker, ErrorReason> = {
  missing: 'repository-missing',
  unborn: 'unborn-branch',
  detached: 'detached-head',
  unmerged: 'unmerged-entries',
  'index-locked': 'index-locked',
  merge: 'operation-in-progress',
  rebase: 'operation-in-progress',
  am: 'operation-in-progress',
  'cherry-pick': 'operation-in-progress',
  revert: 'operation-in-progress',
  bisect: 'operation-in-progress',
};

/** Save & use was refused before anything was touched: the repository has a blocker the user resolves outside. */
export class RecoveryBlockedError extends AvhError {
  constructor(readonly assessment: BlockedAssessment) {
    super(BLOCKER_REASONS[assessment.blocker], assessment.message, { blocker: assessment.blocker });
    this.name = 'RecoveryBlockedError';
  }
}

/**
 * Use current version (and Check again): under the repository lease, validates the repository as it is and,
 * only when it is healthy, clears the latch generation it read. Never changes refs, the index or the working tree.
 */
export async function acceptCurrentVersion(ctx: RepoContext, options: AcceptOptions = {}): Promise<RecoverySettlement> {
  const missing = missingRepository(ctx);
  if (missing) return logged(ctx, 'accept', { result: 'rejected', assessment: missing });
  const lease = await acquireRepositoryLease(ctx.repo, 'recovery', ctx.leaseWaitMs);
  try {
    const latch = await ctx.store.read((r) => readRecovery(r));
    const stale = staleSettlement(latch, options);
    if (stale) return logged(ctx, 'accept', stale);
    const assessment = await checkRepository(ctx);
    if (assessment.kind !== 'healthy') return logged(ctx, 'accept', { result: 'rejected', assessment });
    return logged(ctx, 'accept', await settle(ctx, latch!, assessment.branch, assessment.head));
  } finally {
    lease.release();
  }
}

/**
 * Save changes & use current version: under the repository lease, revalidates, commits the whole user-visible
 * tree as `[Recovery] …` on the attached branch (durably, through a temporary index, compare-and-set on the
 * branch), re-probes for a clean attached HEAD, and only then clears the latch. Never resets, discards or
 * forces anything; any failure leaves the latch in place and throws a specific AvhError.
 */
export async function saveAndAcceptCurrentVersion(ctx: RepoContext, options: AcceptOptions = {}): Promise<RecoverySettlement> {
  const missing = missingRepository(ctx);
  if (missing) {
    logged(ctx, 'save', { result: 'rejected', assessment: missing });
    throw new RecoveryBlockedError(missing);
  }
  const lease = await acquireRepositoryLease(ctx.repo, 'recovery', ctx.leaseWaitMs);
  try {
    const latch = await ctx.store.read((r) => readRecovery(r));
    const stale = staleSettlement(latch, options);
    if (stale) return logged(ctx, 'save', stale);
    const before = await checkRepository(ctx);
    if (before.kind === 'blocked') {
      logged(ctx, 'save', { result: 'rejected', assessment: before });
      throw new RecoveryBlockedError(before);
    }
    // Clean by now (changes committed or discarded outside): nothing to save, plain acceptance.
    if (before.kind === 'healthy') return logged(ctx, 'save', await settle(ctx, latch!, before.branch, before.head));
    let savedCommit: string | null;
    try {
      savedCommit = await commitWholeTree(ctx, before.branch, before.head);
    } catch (error) {
      ctx.log.warn('recovery.accept', { action: 'save', result: 'failed', reason: isAvhError(error) ? error.reason : 'unexpected' });
      throw error;
    }
    failpoint('recovery:after-commit');
    const after = await checkRepository(ctx);
    if (after.kind !== 'healthy' || after.head !== (savedCommit ?? before.head) || after.branch !== before.branch) {
      ctx.log.warn('recovery.accept', { action: 'save', result: 'failed', reason: after.kind === 'blocked' ? after.blocker : after.kind });
      const saved = savedCommit ? 'Your changes were saved as a [Recovery] version, but the' : 'The';
      throw new AvhError('dirty-conflict', `${saved} project changed again while it was being saved. Check the repository again to continue.`, { savedCommit });
    }
    return logged(ctx, 'save', await settle(ctx, latch!, after.branch, after.head, savedCommit ?? undefined));
  } finally {
    lease.release();
  }
}

/** Checked before taking the lease: taking it would create the state directory again inside a deleted repository. */
function missingRepository(ctx: RepoContext): BlockedAssessment | null {
  if (fs.existsSync(ctx.repo.root) && fs.existsSync(ctx.repo.gitDir)) return null;
  return { kind: 'blocked', blocker: 'missing', message: blockerMessage('missing') };
}

function staleSettlement(latch: RecoveryLatch | null, options: AcceptOptions): RecoverySettlement | null {
  if (!latch) return { result: 'not-required' };
  if (options.generation !== undefined && options.generation !== latch.generation) return { result: 'superseded', generation: latch.generation };
  return null;
}

/** Clears exactly the validated latch generation; the only way recovery ends. */
async function settle(ctx: RepoContext, latch: RecoveryLatch, branch: string, head: string, savedCommit?: string): Promise<RecoverySettlement> {
  const cleared = await ctx.store.transaction((tx) => clearRecovery(tx, latch.generation));
  if (!cleared) {
    const now = await ctx.store.read((r) => readRecovery(r));
    return now ? { result: 'superseded', generation: now.generation } : { result: 'not-required' };
  }
  ctx.log.info('recovery.checkpoint-removed', { operation: latch.operationId, generation: latch.generation });
  return savedCommit ? { result: 'accepted', branch, head, savedCommit } : { result: 'accepted', branch, head };
}

/** The commit steps of save & use; returns the `[Recovery]` commit, or null when the files already equal HEAD. */
async function commitWholeTree(ctx: RepoContext, branch: string, head: string): Promise<string | null> {
  const { repo } = ctx;
  const ref = readSymbolicHead(repo.gitDir);
  if (ref !== `refs/heads/${branch}`) {
    throw new RecoveryBlockedError({ kind: 'blocked', blocker: 'detached', message: blockerMessage('detached') });
  }
  const index = TemporaryIndex.create(repo);
  try {
    const tree = await writeWorkingTree(repo, index);
    const headTree = (await runGit(repo.root, ['rev-parse', `${head}^{tree}`])).stdout.trim();
    // Only the index differed from HEAD (files equal HEAD's): an empty [Recovery] commit would save nothing.
    const commit = tree === headTree ? null : await createCommit(repo, { tree, parents: [head], message: `${RECOVERY_SUBJECT}\n`, durable: true });
    if (commit) await compareAndSetRef(repo, ref, commit, head, 'agent-versions: recovery save', true);
    if (!installIndex(repo, index, true)) {
      // Someone touched the index meanwhile: let git rebuild it from the new HEAD (staging only; files are kept).
      await runGit(repo.root, ['reset', '-q']);
    }
    return commit;
  } finally {
    index.dispose();
  }
}

function logged(ctx: RepoContext, action: 'accept' | 'save', settlement: RecoverySettlement): RecoverySettlement {
  const reason = settlement.result === 'rejected'
    ? (settlement.assessment.kind === 'blocked' ? settlement.assessment.blocker : settlement.assessment.kind)
    : settlement.result === 'accepted' ? (settlement.savedCommit ? 'saved' : 'healthy') : settlement.result;
  const level = settlement.result === 'accepted' || settlement.result === 'not-required' ? 'info' : 'warn';
  ctx.log[level]('recovery.accept', { action, result: settlement.result, reason });
  return settlement;
}
