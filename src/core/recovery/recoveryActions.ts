import * as fs from 'node:fs';
import type { RepoContext } from '../context';
import { failpoint } from '../failpoints';
import { AvhError, isAvhError } from '../errors';
import { inspectRepositoryHealth, readSymbolicHead, RepositoryHealth, WorkingTreeCounts } from '../git/healthProbe';
import {
  blockerMessage as gateMessage,
  factsFromHealth,
  gate,
  GateBlocker,
  reasonForBlocker,
} from '../git/repositoryGate';
import { commitWorkingTree } from '../git/workingTree';
import { OPERATIONS } from '../operations/operationKinds';
import { runOperation } from '../operations/runOperation';
import { RECOVERY_SUBJECT } from '../domain/promptSummary';
import { clearRecovery, readRecovery, RecoveryLatch } from '../operations/recoveryLatch';

/** The gate's blockers that recovery can meet (the latch itself and a restore in flight are what recovery settles). */
export type RecoveryBlocker = Exclude<GateBlocker, 'recovery-required' | 'restore-in-flight'>;

/**
 * What the read-only repository check found (docs/product-contract.md §6). Only `healthy` can be accepted; only
 * `dirty` can be saved.
 */
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

/** Plain-words copy for each blocker (the gate's one constant): what is wrong and what the user does about it. */
export function blockerMessage(blocker: RecoveryBlocker): string {
  return gateMessage(blocker, 'check');
}

/**
 * Classifies one health probe through the one gate (its order: docs/product-contract.md §5.5); a passing repository
 * is healthy or dirty.
 */
export function assessHealth(health: Omit<RepositoryHealth, 'listed'>): RecoveryAssessment {
  const result = gate(factsFromHealth(health), 'check');
  if (!result.ok) return { kind: 'blocked', blocker: result.blocker as RecoveryBlocker, message: result.message };
  if (!health.clean) return { kind: 'dirty', branch: result.branch, head: result.head, counts: health.counts };
  return { kind: 'healthy', branch: result.branch, head: result.head };
}

/** Read-only check of the repository as it is now, from one health probe. Never changes git or the latch. */
export async function checkRepository(ctx: RepoContext): Promise<RecoveryAssessment> {
  return assessHealth(await inspectRepositoryHealth(ctx.repo));
}

/** Save & use was refused before anything was touched: the repository has a blocker the user resolves outside. */
export class RecoveryBlockedError extends AvhError {
  constructor(readonly assessment: BlockedAssessment) {
    super(reasonForBlocker(assessment.blocker), assessment.message, { blocker: assessment.blocker });
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
  // Settled first: a restore left unfinished may latch a newer recovery.
  return runOperation(ctx, OPERATIONS.recoveryAccept, async () => {
    const latch = await ctx.store.read((r) => readRecovery(r));
    const stale = staleSettlement(latch, options);
    if (stale) return logged(ctx, 'accept', stale);
    const assessment = await checkRepository(ctx);
    if (assessment.kind !== 'healthy') return logged(ctx, 'accept', { result: 'rejected', assessment });
    return logged(ctx, 'accept', await settle(ctx, latch!, assessment.branch, assessment.head));
  });
}

/**
 * Save changes & use current version: under the repository lease, revalidates, commits the whole user-visible
 * tree as `[Recovery] …` on the attached branch (durably, through a temporary index, compare-and-set on the
 * branch), re-probes for a clean attached HEAD, and only then clears the latch. Never resets, discards or
 * forces anything; any failure leaves the latch in place and throws a specific AvhError.
 */
export async function saveAndAcceptCurrentVersion(
  ctx: RepoContext,
  options: AcceptOptions = {},
): Promise<RecoverySettlement> {
  const missing = missingRepository(ctx);
  if (missing) {
    logged(ctx, 'save', { result: 'rejected', assessment: missing });
    throw new RecoveryBlockedError(missing);
  }
  // Settled first: a restore left unfinished may latch a newer recovery.
  return runOperation(ctx, OPERATIONS.recoveryAccept, async () => {
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
      ctx.log.warn('recovery.accept', {
        action: 'save',
        result: 'failed',
        reason: isAvhError(error) ? error.reason : 'unexpected',
      });
      throw error;
    }
    failpoint('recovery:after-commit');
    const after = await checkRepository(ctx);
    if (after.kind !== 'healthy' || after.head !== (savedCommit ?? before.head) || after.branch !== before.branch) {
      ctx.log.warn('recovery.accept', {
        action: 'save',
        result: 'failed',
        reason: after.kind === 'blocked' ? after.blocker : after.kind,
      });
      const saved = savedCommit ? 'Your changes were saved as a [Recovery] version, but the' : 'The';
      throw new AvhError(
        'dirty-conflict',
        `${saved} project changed again while it was being saved. Check the repository again to continue.`,
        { savedCommit },
      );
    }
    return logged(ctx, 'save', await settle(ctx, latch!, after.branch, after.head, savedCommit ?? undefined));
  });
}

/** Checked before taking the lease: taking it would create the state directory again inside a deleted repository. */
function missingRepository(ctx: RepoContext): BlockedAssessment | null {
  if (fs.existsSync(ctx.repo.root) && fs.existsSync(ctx.repo.gitDir)) return null;
  return { kind: 'blocked', blocker: 'missing', message: blockerMessage('missing') };
}

function staleSettlement(latch: RecoveryLatch | null, options: AcceptOptions): RecoverySettlement | null {
  if (!latch) return { result: 'not-required' };
  if (options.generation !== undefined && options.generation !== latch.generation)
    return { result: 'superseded', generation: latch.generation };
  return null;
}

/** Clears exactly the validated latch generation; the only way recovery ends. */
async function settle(
  ctx: RepoContext,
  latch: RecoveryLatch,
  branch: string,
  head: string,
  savedCommit?: string,
): Promise<RecoverySettlement> {
  const cleared = await ctx.store.transaction((tx) => clearRecovery(tx, latch.generation));
  if (!cleared) {
    const now = await ctx.store.read((r) => readRecovery(r));
    return now ? { result: 'superseded', generation: now.generation } : { result: 'not-required' };
  }
  ctx.log.info('recovery.checkpoint-removed', { operation: latch.operationId, generation: latch.generation });
  return savedCommit ? { result: 'accepted', branch, head, savedCommit } : { result: 'accepted', branch, head };
}

/**
 * The commit of save & use, through the one commit path; returns the `[Recovery]` commit. Only called for a dirty
 * tree; when only the index differed the commit has HEAD's tree and keeps the staged tree reachable (Agent-Staged).
 */
async function commitWholeTree(ctx: RepoContext, branch: string, head: string): Promise<string | null> {
  const ref = readSymbolicHead(ctx.repo.gitDir);
  if (ref !== `refs/heads/${branch}`) {
    throw new RecoveryBlockedError({ kind: 'blocked', blocker: 'detached', message: blockerMessage('detached') });
  }
  const result = await commitWorkingTree(ctx.repo, {
    ref,
    expected: head,
    parent: head,
    always: true,
    message: `${RECOVERY_SUBJECT}\n`,
    reflog: 'agent-versions: recovery save',
    durable: true,
    installIndex: true,
  });
  return result.commit;
}

function logged(ctx: RepoContext, action: 'accept' | 'save', settlement: RecoverySettlement): RecoverySettlement {
  const reason =
    settlement.result === 'rejected'
      ? settlement.assessment.kind === 'blocked'
        ? settlement.assessment.blocker
        : settlement.assessment.kind
      : settlement.result === 'accepted'
        ? settlement.savedCommit
          ? 'saved'
          : 'healthy'
        : settlement.result;
  const level = settlement.result === 'accepted' || settlement.result === 'not-required' ? 'info' : 'warn';
  ctx.log[level]('recovery.accept', { action, result: settlement.result, reason });
  return settlement;
}
