import { assign, fromPromise, setup } from 'xstate';
import type { Disposition } from './disposition';

/** Machine context: the commits produced so far, the failure being handled, and how it was classified. */
export interface RestoreMachineContext {
  needsPreserve: boolean;
  preserved: string | null;
  restoreCommit: string | null;
  error: unknown;
  disposition: Disposition | null;
  rollForwardTried: boolean;
  status: RestoreMachineOutput['status'] | null;
  reconcile: boolean;
}

export interface RestoreMachineInput {
  needsPreserve: boolean;
  /** Reconciliation after a crash starts by classifying the persisted operation instead of running effects. */
  reconcile?: boolean;
  preserved?: string | null;
  restoreCommit?: string | null;
}

export interface RestoreMachineOutput {
  status: 'completed' | 'rolled-back' | 'recovery-required' | 'failed';
  preserved: string | null;
  restoreCommit: string | null;
  error: unknown;
  disposition: Disposition | null;
}

interface EffectInput {
  preserved: string | null;
  restoreCommit: string | null;
}

const notProvided = (name: string) =>
  fromPromise<never, EffectInput>(async () => {
    throw new Error(`restore effect ${name} was not provided`);
  });

/**
 * The restore saga (SPEC §5.3). Each state's effect is a named promise actor that persists its phase before
 * acting (write-ahead) — restoreService provides them; tests swap them with `.provide()`. Any failure goes to
 * `classifying`, whose disposition (from the persisted phase and a repository probe) decides between rolling
 * forward once, settling as rolled back / ordinary failure, and latching recovery.
 */
export const restoreMachine = setup({
  types: {
    context: {} as RestoreMachineContext,
    input: {} as RestoreMachineInput,
    output: {} as RestoreMachineOutput,
  },
  actors: {
    preflight: notProvided('preflight') as unknown as ReturnType<typeof fromPromise<void, EffectInput>>,
    preserveDirtyTree: notProvided('preserveDirtyTree') as unknown as ReturnType<
      typeof fromPromise<string, EffectInput>
    >,
    writeRestoreCommit: notProvided('writeRestoreCommit') as unknown as ReturnType<
      typeof fromPromise<string, EffectInput>
    >,
    updateWorktree: notProvided('updateWorktree') as unknown as ReturnType<typeof fromPromise<void, EffectInput>>,
    updateBranch: notProvided('updateBranch') as unknown as ReturnType<typeof fromPromise<void, EffectInput>>,
    mutateTurnStore: notProvided('mutateTurnStore') as unknown as ReturnType<typeof fromPromise<void, EffectInput>>,
    classifyFailure: notProvided('classifyFailure') as unknown as ReturnType<
      typeof fromPromise<Disposition, EffectInput & { error: unknown }>
    >,
    settleRolledBack: notProvided('settleRolledBack') as unknown as ReturnType<
      typeof fromPromise<void, EffectInput & { disposition: Disposition | null; error: unknown }>
    >,
    latchRecovery: notProvided('latchRecovery') as unknown as ReturnType<
      typeof fromPromise<void, EffectInput & { disposition: Disposition | null; error: unknown }>
    >,
  },
  guards: {
    needsPreserve: ({ context }) => context.needsPreserve && context.preserved === null,
    resumeWorktree: ({ context }) =>
      context.disposition?.kind === 'roll-forward' &&
      context.disposition.resume === 'update-worktree' &&
      !context.rollForwardTried,
    resumeBranch: ({ context }) =>
      context.disposition?.kind === 'roll-forward' &&
      context.disposition.resume === 'update-branch' &&
      !context.rollForwardTried,
    resumeStore: ({ context }) =>
      context.disposition?.kind === 'roll-forward' &&
      context.disposition.resume === 'turn-store-mutation' &&
      !context.rollForwardTried,
    isSettledBack: ({ context }) =>
      context.disposition?.kind === 'rolled-back' || context.disposition?.kind === 'ordinary',
  },
  actions: {
    recordFailure: assign({ error: ({ event }) => (event as { error?: unknown }).error }),
  },
}).createMachine({
  id: 'restore',
  initial: 'start',
  context: ({ input }) => ({
    needsPreserve: input.needsPreserve,
    preserved: input.preserved ?? null,
    restoreCommit: input.restoreCommit ?? null,
    error: null,
    disposition: null,
    rollForwardTried: false,
    status: null,
    reconcile: input.reconcile ?? false,
  }),
  states: {
    start: {
      always: [{ guard: ({ context }) => context.reconcile, target: 'classifying' }, { target: 'preflight' }],
    },
    preflight: {
      invoke: {
        id: 'preflight',
        src: 'preflight',
        input: ({ context }) => ({ preserved: context.preserved, restoreCommit: context.restoreCommit }),
        onDone: [{ guard: 'needsPreserve', target: 'preserving' }, { target: 'writingRestoreCommit' }],
        onError: { target: 'classifying', actions: 'recordFailure' },
      },
    },
    preserving: {
      invoke: {
        id: 'preserveDirtyTree',
        src: 'preserveDirtyTree',
        input: ({ context }) => ({ preserved: context.preserved, restoreCommit: context.restoreCommit }),
        onDone: { target: 'writingRestoreCommit', actions: assign({ preserved: ({ event }) => event.output }) },
        onError: { target: 'classifying', actions: 'recordFailure' },
      },
    },
    writingRestoreCommit: {
      invoke: {
        id: 'writeRestoreCommit',
        src: 'writeRestoreCommit',
        input: ({ context }) => ({ preserved: context.preserved, restoreCommit: context.restoreCommit }),
        onDone: { target: 'updatingWorktree', actions: assign({ restoreCommit: ({ event }) => event.output }) },
        onError: { target: 'classifying', actions: 'recordFailure' },
      },
    },
    updatingWorktree: {
      invoke: {
        id: 'updateWorktree',
        src: 'updateWorktree',
        input: ({ context }) => ({ preserved: context.preserved, restoreCommit: context.restoreCommit }),
        onDone: { target: 'updatingBranch' },
        onError: { target: 'classifying', actions: 'recordFailure' },
      },
    },
    updatingBranch: {
      invoke: {
        id: 'updateBranch',
        src: 'updateBranch',
        input: ({ context }) => ({ preserved: context.preserved, restoreCommit: context.restoreCommit }),
        onDone: { target: 'mutatingStore' },
        onError: { target: 'classifying', actions: 'recordFailure' },
      },
    },
    mutatingStore: {
      invoke: {
        id: 'mutateTurnStore',
        src: 'mutateTurnStore',
        input: ({ context }) => ({ preserved: context.preserved, restoreCommit: context.restoreCommit }),
        onDone: { target: 'completed' },
        onError: { target: 'classifying', actions: 'recordFailure' },
      },
    },
    classifying: {
      invoke: {
        id: 'classifyFailure',
        src: 'classifyFailure',
        input: ({ context }) => ({
          preserved: context.preserved,
          restoreCommit: context.restoreCommit,
          error: context.error,
        }),
        onDone: {
          target: 'decided',
          actions: assign({
            disposition: ({ event }) => event.output,
            preserved: ({ context, event }) =>
              ('preserved' in event.output ? event.output.preserved : null) ?? context.preserved,
          }),
        },
        // Classification itself failing (e.g. the repository vanished) is the ambiguous case: fail closed.
        onError: { target: 'latchingRecovery' },
      },
    },
    decided: {
      always: [
        { guard: 'resumeWorktree', target: 'updatingWorktree', actions: assign({ rollForwardTried: true }) },
        { guard: 'resumeBranch', target: 'updatingBranch', actions: assign({ rollForwardTried: true }) },
        { guard: 'resumeStore', target: 'mutatingStore', actions: assign({ rollForwardTried: true }) },
        { guard: 'isSettledBack', target: 'settlingRollback' },
        { target: 'latchingRecovery' },
      ],
    },
    settlingRollback: {
      invoke: {
        id: 'settleRolledBack',
        src: 'settleRolledBack',
        input: ({ context }) => ({
          preserved: context.preserved,
          restoreCommit: context.restoreCommit,
          disposition: context.disposition,
          error: context.error,
        }),
        onDone: { target: 'rolledBack' },
        onError: { target: 'rolledBack' },
      },
    },
    latchingRecovery: {
      invoke: {
        id: 'latchRecovery',
        src: 'latchRecovery',
        input: ({ context }) => ({
          preserved: context.preserved,
          restoreCommit: context.restoreCommit,
          disposition: context.disposition,
          error: context.error,
        }),
        onDone: { target: 'recoveryRequired' },
        onError: { target: 'recoveryRequired' },
      },
    },
    completed: { type: 'final', entry: assign({ status: 'completed' as const }) },
    rolledBack: {
      type: 'final',
      entry: assign({
        status: ({ context }) =>
          context.disposition?.kind === 'ordinary' ? ('failed' as const) : ('rolled-back' as const),
      }),
    },
    recoveryRequired: { type: 'final', entry: assign({ status: 'recovery-required' as const }) },
  },
  output: ({ context }) => ({
    status: context.status ?? 'failed',
    preserved: context.preserved,
    restoreCommit: context.restoreCommit,
    error: context.error,
    disposition: context.disposition,
  }),
});
