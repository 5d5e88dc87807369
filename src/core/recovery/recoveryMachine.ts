import { assign, fromPromise, setup } from 'xstate';
import { AvhError, safeMessage } from '../errors';
import type { AcceptOptions, RecoveryAssessment, RecoverySettlement } from './recoveryActions';
import { RecoveryBlockedError } from './recoveryActions';

/** What the recovery flow acts through: the façade (VersionHistory) implements it for one repository. */
export interface RecoveryPort {
  acceptCurrentVersion(options?: AcceptOptions): Promise<RecoverySettlement>;
  saveAndAcceptCurrentVersion(options?: AcceptOptions): Promise<RecoverySettlement>;
}

export type AcceptedSettlement = Extract<RecoverySettlement, { result: 'accepted' }>;

export interface RecoveryMachineContext {
  readonly repo: RecoveryPort;
  /** The latch generation the user is being asked about (null when there is no latch). */
  generation: number | null;
  /** The last authoritative assessment (dirty or blocked), kept in memory only. */
  assessment: RecoveryAssessment | null;
  settlement: AcceptedSettlement | null;
  /** The concrete error of the last failed action (content-free: our own copy and a reason). */
  error: { reason: string; message: string } | null;
  lastAction: 'accept' | 'save';
}

export type RecoveryEvent =
  /** The latch as just re-read from the store: its generation, or null when there is none. */
  | { type: 'LATCH'; generation: number | null }
  /** Use current version, or Check again: read-only validation that accepts a healthy repository. */
  | { type: 'ACCEPT' }
  /** Save changes & use current version: offered only after a dirty-only assessment. */
  | { type: 'SAVE' }
  /** Repeat the action that failed. */
  | { type: 'RETRY' };

export interface RecoveryActionInput {
  repo: RecoveryPort;
  generation: number | null;
}

const onlyGeneration = (generation: number | null) => (generation === null ? {} : { generation });

function errorOf(error: unknown): { reason: string; message: string } {
  return { reason: error instanceof AvhError ? error.reason : 'unexpected', message: safeMessage(error) };
}

/** The settlement carried by an action actor's done event (named guards and actions see the event untyped). */
const settlementOf = (event: unknown): RecoverySettlement => (event as { output: RecoverySettlement }).output;
const failureOf = (event: unknown): unknown => (event as { error: unknown }).error;

/** Where an action's settlement leads; the same for Use current version and Save changes & use current version. */
const settledTransitions = [
  { guard: { type: 'settled', params: { result: 'accepted' } }, target: 'accepted', actions: 'takeSettlement' },
  { guard: { type: 'settled', params: { result: 'not-required' } }, target: 'idle', actions: 'takeSettlement' },
  { guard: { type: 'settled', params: { result: 'superseded' } }, target: 'required', actions: 'takeSettlement' },
  { guard: 'rejectedDirty', target: 'dirty', actions: 'takeSettlement' },
  { target: 'blocked', actions: 'takeSettlement' },
] as const;

/**
 * The UI side of guided recovery (docs/product-contract.md §6): idle/required → validating → accepted | dirty |
 * blocked; dirty → saving → accepted | failed. Validating and saving live only in memory: the durable truth is the
 * latch in the store, so a restarted window reads it again and starts from required. Clicks that arrive
 * while an action runs are ignored (the transient states do not handle ACCEPT, SAVE or RETRY).
 */
export const recoveryMachine = setup({
  types: {
    context: {} as RecoveryMachineContext,
    events: {} as RecoveryEvent,
    input: {} as { repo: RecoveryPort },
  },
  actors: {
    acceptCurrentVersion: fromPromise<RecoverySettlement, RecoveryActionInput>(({ input }) =>
      input.repo.acceptCurrentVersion(onlyGeneration(input.generation)),
    ),
    saveAndAccept: fromPromise<RecoverySettlement, RecoveryActionInput>(({ input }) =>
      input.repo.saveAndAcceptCurrentVersion(onlyGeneration(input.generation)),
    ),
  },
  guards: {
    latchSet: ({ event }) => event.type === 'LATCH' && event.generation !== null,
    latchCleared: ({ event }) => event.type === 'LATCH' && event.generation === null,
    latchRenewed: ({ context, event }) =>
      event.type === 'LATCH' && event.generation !== null && event.generation !== context.generation,
    lastActionWasSave: ({ context }) => context.lastAction === 'save',
    settled: ({ event }, params: { result: RecoverySettlement['result'] }) =>
      settlementOf(event).result === params.result,
    rejectedDirty: ({ event }) => {
      const settlement = settlementOf(event);
      return settlement.result === 'rejected' && settlement.assessment.kind === 'dirty';
    },
    blockedFailure: ({ event }) => failureOf(event) instanceof RecoveryBlockedError,
  },
  actions: {
    takeSettlement: assign(({ event, context }) => {
      const settlement = settlementOf(event);
      switch (settlement.result) {
        case 'accepted':
          return { settlement, generation: null, error: null };
        case 'not-required':
          return { generation: null, error: null };
        case 'superseded':
          return { generation: settlement.generation, assessment: null, error: null };
        case 'rejected':
          return { assessment: settlement.assessment, error: null };
        default:
          return context;
      }
    }),
    takeBlockedFailure: assign({
      assessment: ({ event }) => (failureOf(event) as RecoveryBlockedError).assessment,
      error: null,
    }),
    takeFailure: assign({ error: ({ event }) => errorOf(failureOf(event)) }),
    takeGeneration: assign({ generation: ({ event }) => (event.type === 'LATCH' ? event.generation : null) }),
    forgetAttempt: assign({ assessment: null, error: null, settlement: null }),
  },
}).createMachine({
  id: 'recovery',
  context: ({ input }) => ({
    repo: input.repo,
    generation: null,
    assessment: null,
    settlement: null,
    error: null,
    lastAction: 'accept',
  }),
  initial: 'idle',
  states: {
    idle: {
      on: { LATCH: { guard: 'latchSet', target: 'required', actions: ['takeGeneration', 'forgetAttempt'] } },
    },
    required: {
      on: {
        ACCEPT: 'validating',
        LATCH: [
          { guard: 'latchCleared', target: 'idle', actions: 'takeGeneration' },
          { guard: 'latchRenewed', actions: 'takeGeneration' },
        ],
      },
    },
    validating: {
      entry: assign({ lastAction: 'accept' }),
      invoke: {
        id: 'acceptCurrentVersion',
        src: 'acceptCurrentVersion',
        input: ({ context }) => ({ repo: context.repo, generation: context.generation }),
        onDone: settledTransitions,
        onError: { target: 'failed', actions: 'takeFailure' },
      },
    },
    dirty: {
      on: {
        ACCEPT: 'validating',
        SAVE: 'saving',
        LATCH: [
          { guard: 'latchCleared', target: 'idle', actions: 'takeGeneration' },
          { guard: 'latchRenewed', target: 'required', actions: ['takeGeneration', 'forgetAttempt'] },
        ],
      },
    },
    blocked: {
      on: {
        ACCEPT: 'validating',
        LATCH: [
          { guard: 'latchCleared', target: 'idle', actions: 'takeGeneration' },
          { guard: 'latchRenewed', target: 'required', actions: ['takeGeneration', 'forgetAttempt'] },
        ],
      },
    },
    saving: {
      entry: assign({ lastAction: 'save' }),
      invoke: {
        id: 'saveAndAccept',
        src: 'saveAndAccept',
        input: ({ context }) => ({ repo: context.repo, generation: context.generation }),
        onDone: settledTransitions,
        onError: [
          { guard: 'blockedFailure', target: 'blocked', actions: 'takeBlockedFailure' },
          { target: 'failed', actions: 'takeFailure' },
        ],
      },
    },
    failed: {
      on: {
        RETRY: [{ guard: 'lastActionWasSave', target: 'saving' }, { target: 'validating' }],
        ACCEPT: 'validating',
        SAVE: { guard: 'lastActionWasSave', target: 'saving' },
        LATCH: [
          { guard: 'latchCleared', target: 'idle', actions: 'takeGeneration' },
          { guard: 'latchRenewed', target: 'required', actions: ['takeGeneration', 'forgetAttempt'] },
        ],
      },
    },
    accepted: {
      on: { LATCH: { guard: 'latchSet', target: 'required', actions: ['takeGeneration', 'forgetAttempt'] } },
    },
  },
});

export type RecoveryStateValue =
  'idle' | 'required' | 'validating' | 'dirty' | 'blocked' | 'saving' | 'failed' | 'accepted';

/** True in every state where recovery is (still) required, including while an action runs. */
export function isRecoveryPending(state: RecoveryStateValue): boolean {
  return state !== 'idle' && state !== 'accepted';
}
