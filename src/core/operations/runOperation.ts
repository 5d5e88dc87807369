import type { RepoContext } from '../context';
import { inspectRepositoryHealth } from '../git/healthProbe';
import { takeHandedOverStatus } from '../git/statusProbe';
import { assertNoRecovery, readRecovery } from './recoveryLatch';
import { inFlightOperation } from './operationRecords';
import type { RunKind } from './operationKinds';
import { type Opened, type OperationSteps, runWithSteps } from './operationGate';

/** The sequence's steps for a repository opened by the core: its store, the full health probe, reconciliation. */
function coreSteps(ctx: RepoContext): OperationSteps {
  let settled = false;
  return {
    refuseRecovery: () => assertNoRecovery(ctx.store),
    settle: async () => {
      settled = await ctx.settle(ctx);
    },
    // A hook's early status, when the fast path declined (statusProbe.ts takeHandedOverStatus): used unless settling
    // just changed the repository.
    probe: () => {
      const early = takeHandedOverStatus(ctx.repo.root);
      return inspectRepositoryHealth(ctx.repo, settled ? undefined : early);
    },
    latchFacts: () =>
      ctx.store.read((r) => ({
        recoveryRequired: readRecovery(r) !== null,
        restoreInFlight: inFlightOperation(r) !== undefined,
      })),
    leaseWaitMs: ctx.leaseWaitMs,
  };
}

/**
 * Runs one operation of `kind` on the repository through the one gate (operationGate.ts): a mutating kind holds
 * the repository lease throughout, and `fn` starts only once the kind's recovery check, settling and gate passed.
 */
export function runOperation<K extends RunKind, T>(
  ctx: RepoContext,
  kind: K,
  fn: (opened: Opened<K>) => Promise<T>,
): Promise<T> {
  return runWithSteps(ctx.repo, kind, coreSteps(ctx), fn);
}
