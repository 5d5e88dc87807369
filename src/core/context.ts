import type { GitRepository } from './git/repository';
import type { EventLog } from './log';
import type { DurableStore } from './store/durableStore';

/** What every core operation on one repository needs: the repository, its durable state and a content-free log. */
export interface RepoContext {
  readonly repo: GitRepository;
  readonly store: DurableStore;
  readonly log: EventLog;
  /** How long a turn or restore waits for the repository lease held by another process. */
  readonly leaseWaitMs: number;
  /**
   * Settles what a crashed process left unfinished, under the lease just taken (recovery/reconciliation.ts): how the
   * operation log (operations/runOperation.ts) reaches the restore saga without importing the layers above it. Set
   * by the façade; returns whether it settled anything.
   */
  readonly settle: (ctx: RepoContext) => Promise<boolean>;
}
