import * as assert from 'node:assert/strict';
import { getShortestPaths } from '@xstate/graph';
import { createActor, fromPromise } from 'xstate';
import type { Disposition } from '../../src/core/restore/disposition';
import { restoreMachine } from '../../src/core/restore/restoreMachine';

type AnyEvent = { type: string; output?: unknown; error?: unknown };

const EFFECTS: Record<string, { id: string; outputs: unknown[] }> = {
  preflight: { id: 'preflight', outputs: [undefined] },
  preserving: { id: 'preserveDirtyTree', outputs: ['p'.repeat(40)] },
  writingRestoreCommit: { id: 'writeRestoreCommit', outputs: ['r'.repeat(40)] },
  updatingWorktree: { id: 'updateWorktree', outputs: [undefined] },
  updatingBranch: { id: 'updateBranch', outputs: [undefined] },
  mutatingStore: { id: 'mutateTurnStore', outputs: [undefined] },
  settlingRollback: { id: 'settleRolledBack', outputs: [undefined] },
  latchingRecovery: { id: 'latchRecovery', outputs: [undefined] },
};

const DISPOSITIONS: Disposition[] = [
  { kind: 'ordinary' },
  { kind: 'rolled-back', preserved: null },
  { kind: 'roll-forward', resume: 'update-worktree', preserved: null },
  { kind: 'roll-forward', resume: 'update-branch', preserved: null },
  { kind: 'roll-forward', resume: 'turn-store-mutation', preserved: null },
  { kind: 'recovery-required', reason: 'worktree-partially-restored' },
];

/** Every event the invoked effect of each state can deliver: its success, or a failure. */
function eventsFor(state: { value: unknown }): AnyEvent[] {
  const value = String(state.value);
  if (value === 'classifying') {
    return [
      ...DISPOSITIONS.map((output) => ({ type: 'xstate.done.actor.classifyFailure', output })),
      { type: 'xstate.error.actor.classifyFailure', error: new Error('probe failed') },
    ];
  }
  const effect = EFFECTS[value];
  if (!effect) return [];
  return [
    ...effect.outputs.map((output) => ({ type: `xstate.done.actor.${effect.id}`, output })),
    { type: `xstate.error.actor.${effect.id}`, error: new Error(`${effect.id} failed`) },
  ];
}

const summary = (p: { steps: { event: { type: string } }[] }) =>
  p.steps
    .filter((s) => s.event.type !== 'xstate.init')
    .map((s) => s.event.type.replace(/^xstate\.(done|error)\.actor\./, '$1:'))
    .join(' → ');

const never = fromPromise(() => new Promise<never>(() => undefined));
const idle = restoreMachine.provide({
  actors: Object.fromEntries(
    [...Object.values(EFFECTS).map((e) => e.id), 'classifyFailure'].map((id) => [id, never]),
  ) as never,
});

function pathsFor(input: { needsPreserve: boolean; reconcile?: boolean }) {
  return getShortestPaths(restoreMachine, {
    input,
    events: eventsFor as never,
    serializeState: (s) =>
      JSON.stringify({
        v: s.value,
        d: s.context.disposition?.kind ?? null,
        r: s.context.rollForwardTried,
        p: s.context.preserved !== null,
      }),
  });
}

describe('restore machine (xstate graph shortest paths)', () => {
  for (const input of [{ needsPreserve: false }, { needsPreserve: true }, { needsPreserve: false, reconcile: true }]) {
    const label = input.reconcile ? 'reconciliation' : input.needsPreserve ? 'with preservation' : 'clean tree';
    const paths = pathsFor(input);
    const ends = (value: string, disposition?: string | null) =>
      paths.filter(
        (p) =>
          p.state.value === value &&
          (disposition === undefined || (p.state.context.disposition?.kind ?? null) === disposition),
      );
    const shortest = (value: string, disposition?: string | null) =>
      summary(ends(value, disposition).reduce((a, b) => (a.steps.length <= b.steps.length ? a : b)));

    it(`${label}: every shortest path replays on a real actor to the state it claims`, () => {
      assert.ok(paths.length > 5);
      for (const p of paths) {
        const actor = createActor(idle, { input });
        actor.start();
        for (const step of p.steps) if (step.event.type !== 'xstate.init') actor.send(step.event as never);
        assert.equal(actor.getSnapshot().value, p.state.value, summary(p));
        actor.stop();
      }
    });

    it(`${label}: the three outcomes are reachable by the intended shortest paths`, () => {
      if (input.reconcile) {
        assert.equal(shortest('completed'), 'done:classifyFailure → done:mutateTurnStore');
        assert.equal(shortest('rolledBack', 'rolled-back'), 'done:classifyFailure → done:settleRolledBack');
        assert.equal(shortest('recoveryRequired', 'recovery-required'), 'done:classifyFailure → done:latchRecovery');
        assert.equal(
          shortest('recoveryRequired', null),
          'error:classifyFailure → done:latchRecovery',
          'a failing probe fails closed',
        );
        assert.equal(ends('preflight').length, 0, 'reconciliation never re-runs the effects from the start');
      } else if (input.needsPreserve) {
        assert.equal(
          shortest('completed', null),
          'done:preflight → done:preserveDirtyTree → done:writeRestoreCommit → done:updateWorktree → done:updateBranch → done:mutateTurnStore',
        );
      } else {
        assert.equal(
          shortest('completed', null),
          'done:preflight → done:writeRestoreCommit → done:updateWorktree → done:updateBranch → done:mutateTurnStore',
        );
        assert.equal(ends('preserving').length, 0, 'a clean tree is never preserved');
        assert.equal(
          shortest('rolledBack', 'ordinary'),
          'error:preflight → done:classifyFailure → done:settleRolledBack',
        );
        assert.equal(
          shortest('recoveryRequired', null),
          'error:preflight → error:classifyFailure → done:latchRecovery',
        );
        assert.equal(
          shortest('updatingBranch', 'roll-forward'),
          'error:preflight → done:classifyFailure',
          'roll-forward resumes at the branch update',
        );
        assert.equal(
          shortest('updatingWorktree', 'roll-forward'),
          'error:preflight → done:classifyFailure',
          'or at the worktree update (the branch moved first)',
        );
      }
    });
  }

  it('a failure after a destructive step rolls forward at most once, then fails closed', () => {
    const actor = createActor(idle, { input: { needsPreserve: false } });
    actor.start();
    const send = (type: string, extra: Partial<AnyEvent> = {}) => actor.send({ type, ...extra } as never);
    send('xstate.done.actor.preflight');
    send('xstate.done.actor.writeRestoreCommit', { output: 'r'.repeat(40) });
    send('xstate.done.actor.updateWorktree');
    send('xstate.error.actor.updateBranch', { error: new Error('ref moved') });
    send('xstate.done.actor.classifyFailure', {
      output: { kind: 'roll-forward', resume: 'update-branch', preserved: null },
    });
    assert.equal(actor.getSnapshot().value, 'updatingBranch');
    send('xstate.error.actor.updateBranch', { error: new Error('still failing') });
    send('xstate.done.actor.classifyFailure', {
      output: { kind: 'roll-forward', resume: 'update-branch', preserved: null },
    });
    assert.equal(actor.getSnapshot().value, 'latchingRecovery');
    send('xstate.done.actor.latchRecovery');
    assert.equal(actor.getSnapshot().status, 'done');
    assert.equal(actor.getSnapshot().output?.status, 'recovery-required');
  });

  it('an ordinary preflight failure ends as a plain failure, never recovery', () => {
    const actor = createActor(idle, { input: { needsPreserve: true } });
    actor.start();
    actor.send({ type: 'xstate.error.actor.preflight', error: new Error('dirty') } as never);
    actor.send({ type: 'xstate.done.actor.classifyFailure', output: { kind: 'ordinary' } } as never);
    actor.send({ type: 'xstate.done.actor.settleRolledBack' } as never);
    assert.equal(actor.getSnapshot().output?.status, 'failed');
  });
});
