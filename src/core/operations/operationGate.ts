import type { GitRepository } from '../git/repository';
import { factsFromHealth, type GateFacts, passGate, passTurnGate } from '../git/repositoryGate';
import type { RepositoryHealth } from '../git/statusProbe';
import type { LockHandle } from '../store/pidLock';
import type { OperationGate, RunKind } from './operationKinds';
import { takeLease } from './operationLease';

/**
 * The steps of the sequence that depend on where the caller keeps its state. The core binds them to the store, the
 * full health probe and reconciliation (runOperation.ts); the hook fast path can bind its facts file and its own
 * probe, so this module loads neither the store nor xstate.
 */
export interface OperationSteps {
  /** Throws the recovery-required refusal when the latch is set. */
  refuseRecovery(): Promise<void>;
  /** Settles what a crashed process left unfinished (under the lease). */
  settle(): Promise<unknown>;
  /** The repository's health, for the gate. */
  probe(): Promise<RepositoryHealth>;
  /** The latch and a restore in flight, as known after settling. */
  latchFacts(): Promise<Pick<GateFacts, 'recoveryRequired' | 'restoreInFlight'>>;
  /** How long to wait for another process's lease. */
  readonly leaseWaitMs: number;
  /**
   * Told when releasing the lease fails, instead of the failure reaching the caller (a lease left behind names its
   * process and is stale once it exits). Unset: the failure is thrown.
   */
  readonly releaseFailed?: (error: unknown) => void;
}

/** What the gate let through: the probe it decided on and the branch and HEAD (null on an unborn branch). */
export interface GatePassed<H extends string | null> {
  health: RepositoryHealth;
  branch: string;
  head: H;
}

/** What an operation's body receives, by the gate its kind passes. */
export type Opened<K extends RunKind> = K['gate'] extends 'repository'
  ? GatePassed<string>
  : K['gate'] extends 'turn'
    ? GatePassed<string | null>
    : undefined;

/**
 * The one opening sequence, driven by the kind's declaration: refused while recovery is required (before
 * the lease) → the repository lease → settle what a crashed process left → the kind's gate → `fn`, then the
 * lease is released whatever happened.
 */
export async function runWithSteps<K extends RunKind, T>(
  repo: GitRepository,
  kind: K,
  steps: OperationSteps,
  fn: (opened: Opened<K>) => Promise<T>,
): Promise<T> {
  if (kind.refusedInRecovery) await steps.refuseRecovery();
  const lease = kind.lease ? await takeLease(repo, kind.lease, steps.leaseWaitMs) : null;
  try {
    if (kind.settles) await steps.settle();
    return await fn((await passKindGate(kind.gate, steps)) as Opened<K>);
  } finally {
    release(lease, steps);
  }
}

function release(lease: LockHandle | null, steps: OperationSteps): void {
  if (!steps.releaseFailed) return lease?.release();
  try {
    lease?.release();
  } catch (error) {
    steps.releaseFailed(error);
  }
}

async function passKindGate(
  gate: OperationGate,
  steps: OperationSteps,
): Promise<GatePassed<string | null> | undefined> {
  if (gate === 'none') return undefined;
  if (gate === 'latch') {
    await steps.refuseRecovery();
    return undefined;
  }
  const [health, latch] = await Promise.all([steps.probe(), steps.latchFacts()]);
  const facts = factsFromHealth(health, latch);
  const passed = gate === 'turn' ? passTurnGate(facts, 'retry') : passGate(facts, 'retry');
  return { health, ...passed };
}
