import { assign, fromPromise, type PromiseActorLogic, setup } from 'xstate';
import type { Disposition } from './disposition';
import { EFFECT_PHASES, type EffectPhase, RESTORE_PHASE_REGISTRY, type ResumablePhase } from '../domain/restorePhases';

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

/** What every effect actor is given: the commits carried so far. */
export interface EffectInput {
  preserved: string | null;
  restoreCommit: string | null;
}

/** A phase's effect actor: it returns the commit it made when the phase declares an output, else nothing. */
type EffectLogic<P extends EffectPhase> = PromiseActorLogic<P extends { output: string } ? string : void, EffectInput>;
export type EffectActors = { [P in EffectPhase as P['run']['effect']]: EffectLogic<P> };
export type EffectName = keyof EffectActors;

const notProvided = (name: string) =>
  fromPromise<never, EffectInput>(async () => {
    throw new Error(`restore effect ${name} was not provided`);
  });

const effectActors = Object.fromEntries(
  EFFECT_PHASES.map((phase) => [phase.run.effect, notProvided(phase.run.effect)]),
) as unknown as EffectActors;

const machineSetup = setup({
  types: {
    context: {} as RestoreMachineContext,
    input: {} as RestoreMachineInput,
    output: {} as RestoreMachineOutput,
  },
  actors: {
    ...effectActors,
    classifyFailure: notProvided('classifyFailure') as unknown as PromiseActorLogic<
      Disposition,
      EffectInput & { error: unknown }
    >,
    settleRolledBack: notProvided('settleRolledBack') as unknown as PromiseActorLogic<
      void,
      EffectInput & { disposition: Disposition | null; error: unknown }
    >,
    latchRecovery: notProvided('latchRecovery') as unknown as PromiseActorLogic<
      void,
      EffectInput & { disposition: Disposition | null; error: unknown }
    >,
  },
  guards: {
    needsPreserve: ({ context }) => context.needsPreserve && context.preserved === null,
    resumeAt: ({ context }, params: { phase: ResumablePhase }) =>
      context.disposition?.kind === 'roll-forward' &&
      context.disposition.resume === params.phase &&
      !context.rollForwardTried,
    isSettledBack: ({ context }) =>
      context.disposition?.kind === 'rolled-back' || context.disposition?.kind === 'ordinary',
  },
  actions: {
    recordFailure: assign({ error: ({ event }) => (event as { error?: unknown }).error }),
    takePreserved: assign({ preserved: ({ event }) => (event as unknown as { output: string }).output }),
    takeRestoreCommit: assign({ restoreCommit: ({ event }) => (event as unknown as { output: string }).output }),
    rollingForward: assign({ rollForwardTried: true }),
  },
});

type StateConfig = Parameters<typeof machineSetup.createStateConfig>[0];

const carried = ({ context }: { context: RestoreMachineContext }): EffectInput => ({
  preserved: context.preserved,
  restoreCommit: context.restoreCommit,
});

const TAKE_OUTPUT = { preserved: 'takePreserved', restoreCommit: 'takeRestoreCommit' } as const;

/** Where the machine goes once the phases before `rest` are done: the next phase that applies, else completed. */
function nextPhase(rest: readonly EffectPhase[], action?: (typeof TAKE_OUTPUT)[keyof typeof TAKE_OUTPUT]) {
  const actions = action ? { actions: action } : {};
  const transitions: { guard?: 'needsPreserve'; target: string; actions?: typeof action }[] = [];
  for (const phase of rest) {
    const onlyWhen = 'onlyWhen' in phase ? phase.onlyWhen : undefined;
    transitions.push({ ...(onlyWhen ? { guard: onlyWhen } : {}), target: phase.run.state, ...actions });
    if (!onlyWhen) return transitions;
  }
  transitions.push({ target: 'completed', ...actions });
  return transitions;
}

/** One state per effect phase, in the registry's order: its actor runs; any failure goes to `classifying`. */
function effectStates(): Record<string, StateConfig> {
  return Object.fromEntries(
    EFFECT_PHASES.map((phase, i): [string, StateConfig] => [
      phase.run.state,
      // The actor's name is one of the registry's effects; TypeScript cannot pair each name with its own logic here.
      {
        invoke: {
          id: phase.run.effect,
          src: phase.run.effect,
          input: carried,
          onDone: nextPhase(EFFECT_PHASES.slice(i + 1), 'output' in phase ? TAKE_OUTPUT[phase.output] : undefined),
          onError: { target: 'classifying', actions: 'recordFailure' },
        },
      } as StateConfig,
    ]),
  );
}

/** A roll-forward resumes once at the phase the disposition names (registry order), then fails closed. */
const resumeTransitions = RESTORE_PHASE_REGISTRY.filter(
  (phase): phase is Extract<EffectPhase, { resumable: true }> => 'resumable' in phase,
).map((phase) => ({
  guard: { type: 'resumeAt' as const, params: { phase: phase.name } },
  target: phase.run.state,
  actions: 'rollingForward' as const,
}));

/**
 * The restore saga (docs/design/restore-saga.md), built from the phase registry (restorePhases.ts). Each state's effect
 * is a named promise actor that persists its phase before acting (write-ahead) — the saga (restoreSaga.ts) provides
 * them; tests swap them with `.provide()`. Any failure goes to `classifying`, whose disposition (from the persisted
 * phase and a repository probe) decides between rolling forward once, settling as rolled back / ordinary failure, and
 * latching recovery.
 */
export const restoreMachine = machineSetup.createMachine({
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
      always: [{ guard: ({ context }) => context.reconcile, target: 'classifying' }, ...nextPhase(EFFECT_PHASES)],
    },
    ...effectStates(),
    classifying: {
      invoke: {
        id: 'classifyFailure',
        src: 'classifyFailure',
        input: ({ context }) => ({ ...carried({ context }), error: context.error }),
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
        ...resumeTransitions,
        { guard: 'isSettledBack', target: 'settlingRollback' },
        { target: 'latchingRecovery' },
      ],
    },
    settlingRollback: {
      invoke: {
        id: 'settleRolledBack',
        src: 'settleRolledBack',
        input: ({ context }) => ({ ...carried({ context }), disposition: context.disposition, error: context.error }),
        onDone: { target: 'rolledBack' },
        onError: { target: 'rolledBack' },
      },
    },
    latchingRecovery: {
      invoke: {
        id: 'latchRecovery',
        src: 'latchRecovery',
        input: ({ context }) => ({ ...carried({ context }), disposition: context.disposition, error: context.error }),
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
