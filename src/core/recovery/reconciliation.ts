import type { RepoContext } from '../context';
import { leasePath } from '../git/repositoryLease';
import { clearOwnStaleIndexLock, indexRepairPending, repairRecordedIndex } from '../git/workingTree';
import { removeLeftoverTempFiles } from './staleLocks';
import { countAttempt, inFlightOperation } from '../operations/operationRecords';
import { runSaga } from '../restore/restoreSaga';
import { readLockHolder } from '../store/pidLock';
import { OPERATIONS } from '../operations/operationKinds';
import { runIfFree } from '../operations/operationLease';

/**
 * Finishes or settles an operation left unfinished by a crashed process (docs/product-contract.md §5.4). Idempotent;
 * never sleeps.
 */
export async function reconcileOperations(ctx: RepoContext): Promise<boolean> {
  const cleaned = removeLeftoverTempFiles(ctx.repo); // only files whose process is gone: needs no lease
  if (cleaned > 0) ctx.log.info('reconcile.temp-files-removed', { count: cleaned });
  const op = await ctx.store.read((r) => inFlightOperation(r));
  const holder = readLockHolder(leasePath(ctx.repo));
  if (!op && !indexRepairPending(ctx.repo) && (!holder || holder.alive)) return false;
  // An unfinished operation, or a lease left by a process that died: settle it under the lease. Not free: its owner
  // is alive and still working on it, or another process is reconciling.
  return runIfFree(
    ctx.repo,
    OPERATIONS.reconcile,
    () => settleUnderLease(ctx),
    () => false,
  );
}

/**
 * The first step of every operation whose kind settles (operations/operationKinds.ts), under the repository lease
 * the caller just took (possibly by breaking a dead holder's): whatever a crashed process left unfinished is
 * settled before anything is snapshotted or committed, so no turn ever records a half-restored tree. An
 * operation in flight is finished, rolled back or latched as recovery; our own stale index.lock and temp files
 * of dead processes go. Cheap when nothing is left over (one store read, a few file checks). Returns whether
 * it settled anything.
 */
export async function settleUnderLease(ctx: RepoContext): Promise<boolean> {
  if (clearOwnStaleIndexLock(ctx.repo)) ctx.log.warn('restore.stale-index-lock-removed');
  return reconcileUnderLease(ctx);
}

async function reconcileUnderLease(ctx: RepoContext): Promise<boolean> {
  // A branch moved by one of our commits whose index could not follow: make the index HEAD's tree first.
  const repaired = await repairRecordedIndex(ctx.repo);
  if (repaired) ctx.log.warn('restore.index-repaired');
  const op = await ctx.store.read((r) => inFlightOperation(r));
  if (!op) return repaired;
  await ctx.store.transaction((tx) => countAttempt(tx, op.id));
  const output = await runSaga(ctx, op.id, {
    needsPreserve: false,
    reconcile: true,
    preserved: op.preserve_commit,
    restoreCommit: op.restore_commit,
  });
  ctx.log.info('restore.reconcile', {
    operation: op.id,
    lastPhase: op.phase,
    result: output.status,
    disposition: output.disposition?.kind,
  });
  return true;
}
