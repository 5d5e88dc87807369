import { createActor, fromPromise, toPromise } from 'xstate';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { failpoint } from '../failpoints';
import type { TreeChange } from '../git/worktreeUpdate';
import { readRecovery, setRecovery } from '../operations/recoveryLatch';
import { classifyOperation, type Disposition } from './disposition';
import {
  finishOperation,
  getOperation,
  type OperationRow,
  recordCommits,
  setPhase,
} from '../operations/operationRecords';
import { PostconditionError } from './postcondition';
import { type PrewrittenCommit, WorktreeUpdateRefused } from './restoreEffects';
import {
  type EffectActors,
  type EffectInput,
  restoreMachine,
  type RestoreMachineInput,
  type RestoreMachineOutput,
} from './restoreMachine';
import { EFFECT_PHASES, type EffectPhase } from '../domain/restorePhases';
import { PHASE_EFFECTS, type SagaRun } from './sagaPhases';

/** What the process that planned the restore knows beyond the operation row (reconciliation knows none of it). */
export interface SagaPlan {
  /** What the worktree update writes from HEAD, when planning computed it. */
  changes?: TreeChange[] | null;
  /** The tree of an Undo that keeps later work, computed on a clean tree. */
  plannedTree?: string | null;
  prewritten?: PrewrittenCommit | null;
  /** The operation this process just admitted: exactly what was written, so it is not read back. */
  admitted?: OperationRow | null;
}

/**
 * Runs the restore saga (restoreMachine.ts) for the persisted operation `opId` under the caller's lease: the
 * phases' effects (sagaPhases.ts), each persisted write-ahead as its phase declares, and the failure handling
 * (classification, rollback, recovery latch). For reconciliation (`input.reconcile`) it classifies first.
 */
export async function runSaga(
  ctx: RepoContext,
  opId: string,
  input: RestoreMachineInput,
  plan: SagaPlan = {},
): Promise<RestoreMachineOutput> {
  const freshOp = async () => {
    const op = await ctx.store.read((r) => getOperation(r, opId));
    if (!op) throw new AvhError('store-unavailable', 'The restore record disappeared.');
    return op;
  };
  let current: OperationRow | undefined = plan.admitted ? { ...plan.admitted } : undefined;
  const run: SagaRun = {
    ctx,
    opId,
    op: async () => (current ??= await freshOp()),
    touched: plan.changes ?? null,
    proven: false,
    branchMoved: false,
    plannedTree: plan.plannedTree ?? null,
    prewritten: plan.prewritten ?? null,
  };
  const effects = Object.fromEntries(
    EFFECT_PHASES.map((phase) => [
      phase.run.effect,
      fromPromise<string | void, EffectInput>(async ({ input: carried }) => withPhase(run, phase, carried)),
    ]),
  ) as unknown as EffectActors;
  const machine = restoreMachine.provide({
    actors: {
      ...effects,
      classifyFailure: fromPromise(async ({ input }) => {
        current = undefined; // from here on, always re-read what was persisted
        const op = await freshOp();
        const error = input.error;
        const disposition: Disposition =
          error instanceof PostconditionError
            ? { kind: 'recovery-required', reason: 'worktree-partially-restored' }
            : await classifyOperation(ctx, op, { worktreeUntouched: error instanceof WorktreeUpdateRefused });
        if (disposition.kind === 'rolled-back' && disposition.preserved && !op.preserve_commit) {
          await ctx.store.transaction((tx) => recordCommits(tx, opId, { preserve_commit: disposition.preserved! }));
        }
        return disposition;
      }),
      settleRolledBack: fromPromise(async ({ input }) => {
        const reason =
          input.error instanceof AvhError ? input.error.reason : input.error ? 'unexpected' : 'interrupted';
        const status = input.disposition?.kind === 'ordinary' ? 'failed' : 'rolled-back';
        const op = await freshOp();
        await ctx.store.transaction((tx) => finishOperation(tx, opId, status, reason));
        ctx.log.warn('restore.failed', { operation: opId, disposition: status, lastPhase: op.phase, reason });
      }),
      latchRecovery: fromPromise(async ({ input }) => {
        const op = await freshOp();
        const why = input.disposition?.kind === 'recovery-required' ? input.disposition.reason : 'unclassified';
        await ctx.store.transaction((tx) => {
          finishOperation(tx, opId, 'recovery-required', why);
          if (!readRecovery(tx)) setRecovery(tx, opId, why, op.phase, Date.now());
        });
        ctx.log.error('restore.recovery-required', { operation: opId, disposition: why, lastPhase: op.phase });
      }),
    },
  });
  const actor = createActor(machine, { input });
  actor.start();
  const output = await toPromise(actor);
  if (output.status === 'completed') {
    const op = await run.op();
    ctx.log.info('restore.completed', { operation: opId, kind: op.kind, preservation: op.preservation });
  }
  return output;
}

/**
 * Runs one phase's effect: persists the phase first as the registry declares (write-ahead, or only together with
 * the commits the previous effect produced — one durable write), then runs the effect between the phase's crash
 * points, on the in-memory copy of the operation, which mirrors what was written plus the phase this process is in.
 */
async function withPhase(run: SagaRun, phase: EffectPhase, carried: EffectInput): Promise<string | void> {
  const op = await run.op();
  if (phase.writeAhead !== 'with-effect') {
    const commits = {
      ...(carried.preserved && carried.preserved !== op.preserve_commit ? { preserve_commit: carried.preserved } : {}),
      ...(carried.restoreCommit && carried.restoreCommit !== op.restore_commit
        ? { restore_commit: carried.restoreCommit }
        : {}),
    };
    if (phase.writeAhead === 'always' || Object.keys(commits).length > 0) {
      await run.ctx.store.transaction((tx) => {
        setPhase(tx, op.id, phase.name);
        recordCommits(tx, op.id, commits);
      });
    }
    Object.assign(op, commits, { phase: phase.name });
  }
  failpoint(`${phase.name}:before`);
  const result = await PHASE_EFFECTS[phase.name](run, op, carried);
  failpoint(`${phase.name}:after`);
  return result;
}
