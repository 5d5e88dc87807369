/**
 * Every operation on a repository declares its kind here, once (the model: VS Code's git extension,
 * `Operation.X` run through `Repository.run`). The kind says how it takes the repository lease, whether it is
 * refused while recovery is required, whether it settles what a crashed process left before anything else, and
 * which gate it passes; operationGate.ts runs that sequence, the same way for every kind. Pure data (the hook fast
 * path reads it without loading the store or git).
 */

/** What the lease file names while an operation holds it: a waiting process is told from it what it waits for. */
export type LeasePurpose = 'turn' | 'restore' | 'chat-branch' | 'recovery' | 'reconcile';

/** What a process that cannot get the lease is told, by the purpose of the operation holding it. */
export interface LeaseHolder {
  /** The refusal a waiter reads once its wait is over: 'restore-in-progress', or the lease being busy (a turn). */
  readonly waiterReads: 'restore-in-progress' | 'busy';
  /** Finished in moments: a restore waits for it instead of failing fast. */
  readonly brief: boolean;
}

/**
 * By holder purpose. A chat branch action reads to a waiter as a restore does: the wording it had while it took a
 * lease named `restore`. A purpose not listed (another version's) reads as busy, and a restore does not wait for it.
 */
export const LEASE_HOLDERS: Readonly<Record<LeasePurpose, LeaseHolder>> = {
  turn: { waiterReads: 'busy', brief: true },
  restore: { waiterReads: 'restore-in-progress', brief: false },
  'chat-branch': { waiterReads: 'restore-in-progress', brief: false },
  recovery: { waiterReads: 'busy', brief: false },
  reconcile: { waiterReads: 'restore-in-progress', brief: false },
};

export interface OperationLease {
  readonly purpose: LeasePurpose;
  /**
   * 'wait': up to the repository's lease wait. 'wait-for-brief': fails fast unless the holder is brief (a restore
   * is not queued behind another restore). 'if-free': never waits; the caller is told it did not run.
   */
  readonly acquire: 'wait' | 'wait-for-brief' | 'if-free';
}

/** The gate an operation passes once it holds the lease (and settled, when it settles). */
export type OperationGate =
  /** None here: the operation has a gate of its own, or needs none. */
  | 'none'
  /** The recovery latch only, read again after settling (the operation's planning passes the full gate itself). */
  | 'latch'
  /**
   * Health probe and the ordered gate (repositoryGate.ts), with the latch and a restore in flight read after settling.
   */
  | 'repository'
  /** The same through the turn gate: an unborn branch passes (the first turn makes the first version). */
  | 'turn';

export interface OperationKind {
  readonly name: string;
  /** Null: read-only, it takes no lease and runs beside anything (and so cannot settle). */
  readonly lease: OperationLease | null;
  /** Refused before the lease is taken while the recovery latch is set. */
  readonly refusedInRecovery: boolean;
  /** Under the lease, first of all: what a crashed process left unfinished is settled (recovery/reconciliation.ts). */
  readonly settles: boolean;
  readonly gate: OperationGate;
}

/** Every kind of operation, by name. */
export const OPERATIONS = {
  /** beginTurn: a turn's base snapshot is never taken of a half-restored tree, nor while recovery is required. */
  turnBegin: {
    name: 'turn-begin',
    lease: { purpose: 'turn', acquire: 'wait' },
    refusedInRecovery: true,
    settles: true,
    gate: 'turn',
  },
  /** endTurn: recorded even while recovery is required (then no version is made); the commit has its own gate. */
  turnEnd: {
    name: 'turn-end',
    lease: { purpose: 'turn', acquire: 'wait' },
    refusedInRecovery: false,
    settles: true,
    gate: 'none',
  },
  /**
   * A checkpoint before an agent's destructive command (turns/commandCheckpoints.ts): a private snapshot commit, as
   * a turn's base snapshot is taken, never of a half-restored tree.
   */
  commandCheckpoint: {
    name: 'command-checkpoint',
    lease: { purpose: 'turn', acquire: 'wait' },
    refusedInRecovery: true,
    settles: true,
    gate: 'turn',
  },
  /** Undo, Redo, Restore: planning races its lookups with the probe and passes the gate itself (restorePlan.ts). */
  restore: {
    name: 'restore',
    lease: { purpose: 'restore', acquire: 'wait-for-brief' },
    refusedInRecovery: true,
    settles: true,
    gate: 'latch',
  },
  /** What a restore would do, for the confirmation: no lease, nothing changed; planning passes the gate. */
  restorePreview: {
    name: 'restore-preview',
    lease: null,
    refusedInRecovery: false,
    settles: false,
    gate: 'none',
  },
  /** Continue on a New Branch: creates and checks out a branch. */
  chatContinue: {
    name: 'chat-continue',
    lease: { purpose: 'chat-branch', acquire: 'wait' },
    refusedInRecovery: true,
    settles: true,
    gate: 'repository',
  },
  /** Restore a chat's branch from the remote: creates a local branch only (never checked out). */
  chatBranchRestore: {
    name: 'chat-branch-restore',
    lease: { purpose: 'chat-branch', acquire: 'wait' },
    refusedInRecovery: true,
    settles: false,
    gate: 'none',
  },
  /** Use current version / Save changes & use current version: recovery's own check is its gate ('check' copy). */
  recoveryAccept: {
    name: 'recovery-accept',
    lease: { purpose: 'recovery', acquire: 'wait' },
    refusedInRecovery: false,
    settles: true,
    gate: 'none',
  },
  /** Remove Stale Lock: only while nothing of ours runs. */
  staleLockRemoval: {
    name: 'stale-lock-removal',
    lease: { purpose: 'recovery', acquire: 'if-free' },
    refusedInRecovery: false,
    settles: false,
    gate: 'none',
  },
  /** Include in Versions / Add to .gitignore: the exclude block is also written by version commits, so as a turn. */
  secretChoice: {
    name: 'secret-choice',
    lease: { purpose: 'turn', acquire: 'wait' },
    refusedInRecovery: false,
    settles: false,
    gate: 'none',
  },
  /** Settling what a crashed process left (on every open): never waits, so a live operation is never settled. */
  reconcile: {
    name: 'reconcile',
    lease: { purpose: 'reconcile', acquire: 'if-free' },
    refusedInRecovery: false,
    settles: false,
    gate: 'none',
  },
} as const satisfies Record<string, OperationKind>;

/** A kind that runs whenever it may (waiting for the lease, failing fast, or read-only). */
export type RunKind = OperationKind & { readonly lease: { readonly acquire: 'wait' | 'wait-for-brief' } | null };
/** A kind that runs only when the lease is free at once. */
export type IfFreeKind = OperationKind & { readonly lease: { readonly acquire: 'if-free' } };
