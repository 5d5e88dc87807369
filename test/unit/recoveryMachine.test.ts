import * as assert from 'node:assert/strict';
import { getShortestPaths } from '@xstate/graph';
import { createActor, fromPromise, waitFor } from 'xstate';

import { AvhError } from '../../src/core/errors';
import { blockerMessage, RecoveryBlockedError, RecoverySettlement } from '../../src/core/recovery/recoveryActions';
import {
  RecoveryActionInput,
  recoveryMachine,
  RecoveryEvent,
  type RecoveryPort,
} from '../../src/core/recovery/recoveryMachine';

/** A stand-in for an action actor, typed like the real one. */
const fake = (fn: (input: RecoveryActionInput) => Promise<RecoverySettlement>) =>
  fromPromise<RecoverySettlement, RecoveryActionInput>(({ input }) => fn(input));
const never = () => new Promise<RecoverySettlement>(() => undefined);

const repo = {} as RecoveryPort;
const counts = { staged: 0, unstaged: 1, untracked: 2, unmerged: 0 };
const accepted: RecoverySettlement = { result: 'accepted', branch: 'main', head: 'a'.repeat(40) };
const saved: RecoverySettlement = { ...accepted, savedCommit: 'b'.repeat(40) };
const dirty: RecoverySettlement = {
  result: 'rejected',
  assessment: { kind: 'dirty', branch: 'main', head: 'a'.repeat(40), counts },
};
const blocked: RecoverySettlement = {
  result: 'rejected',
  assessment: { kind: 'blocked', blocker: 'rebase', message: blockerMessage('rebase') },
};
const blockedError = new RecoveryBlockedError({
  kind: 'blocked',
  blocker: 'unmerged',
  message: blockerMessage('unmerged'),
});
const failure = new AvhError('index-locked', 'index.lock is held');

type AnyEvent = RecoveryEvent | { type: string; output?: unknown; error?: unknown };

/** Every event the UI or an action actor can deliver, per state, so the graph covers all reachable states. */
function eventsFor(state: { value: unknown }): AnyEvent[] {
  const latch: AnyEvent[] = [
    { type: 'LATCH', generation: null },
    { type: 'LATCH', generation: 1 },
    { type: 'LATCH', generation: 2 },
  ];
  const clicks: AnyEvent[] = [{ type: 'ACCEPT' }, { type: 'SAVE' }, { type: 'RETRY' }];
  const settle = (id: string, outputs: RecoverySettlement[], errors: unknown[]): AnyEvent[] => [
    ...outputs.map((output) => ({ type: `xstate.done.actor.${id}`, output })),
    ...errors.map((error) => ({ type: `xstate.error.actor.${id}`, error })),
  ];
  const superseded: RecoverySettlement = { result: 'superseded', generation: 2 };
  const notRequired: RecoverySettlement = { result: 'not-required' };
  switch (state.value) {
    case 'validating':
      return [
        ...latch,
        ...clicks,
        ...settle('acceptCurrentVersion', [accepted, dirty, blocked, superseded, notRequired], [failure]),
      ];
    case 'saving':
      return [
        ...latch,
        ...clicks,
        ...settle('saveAndAccept', [saved, superseded, notRequired], [blockedError, failure]),
      ];
    default:
      return [...latch, ...clicks];
  }
}

function pathSummary(path: { steps: { event: { type: string } }[] }): string {
  return path.steps
    .filter((s) => s.event.type !== 'xstate.init')
    .map((s) => s.event.type.replace(/^xstate\.(done|error)\.actor\./, '$1:'))
    .join(' → ');
}

describe('recovery machine (xstate graph)', () => {
  const paths = getShortestPaths(recoveryMachine, {
    input: { repo },
    events: eventsFor as never,
    serializeState: (s) =>
      JSON.stringify({
        value: s.value,
        generation: s.context.generation,
        action: s.context.lastAction,
        assessment: s.context.assessment?.kind ?? null,
      }),
  });
  const byEnd = new Map<string, typeof paths>();
  for (const p of paths) {
    const end = String(p.state.value);
    byEnd.set(end, [...(byEnd.get(end) ?? []), p]);
  }

  it('reaches every state of the recovery flow, and only those', () => {
    assert.deepEqual([...byEnd.keys()].sort(), [
      'accepted',
      'blocked',
      'dirty',
      'failed',
      'idle',
      'required',
      'saving',
      'validating',
    ]);
  });

  it('each shortest path ends in the state its steps lead to', () => {
    for (const p of paths) {
      const actor = createActor(
        recoveryMachine.provide({
          actors: { acceptCurrentVersion: fake(never), saveAndAccept: fake(never) },
        }),
        { input: { repo } },
      );
      actor.start();
      for (const step of p.steps)
        if ((step.event as AnyEvent).type !== 'xstate.init') actor.send(step.event as RecoveryEvent);
      assert.equal(actor.getSnapshot().value, p.state.value, pathSummary(p));
      actor.stop();
    }
  });

  it('the shortest ways to the outcomes are the intended flows', () => {
    const shortest = (end: string) =>
      pathSummary(byEnd.get(end)!.reduce((a, b) => (a.steps.length <= b.steps.length ? a : b)));
    assert.equal(shortest('required'), 'LATCH');
    assert.equal(shortest('validating'), 'LATCH → ACCEPT');
    assert.equal(shortest('accepted'), 'LATCH → ACCEPT → done:acceptCurrentVersion');
    assert.equal(shortest('dirty'), 'LATCH → ACCEPT → done:acceptCurrentVersion');
    assert.equal(shortest('blocked'), 'LATCH → ACCEPT → done:acceptCurrentVersion');
    assert.equal(shortest('failed'), 'LATCH → ACCEPT → error:acceptCurrentVersion');
    assert.equal(shortest('saving'), 'LATCH → ACCEPT → done:acceptCurrentVersion → SAVE');
  });

  it('saving is reachable only through a dirty assessment (or a retry of a failed save)', () => {
    for (const p of byEnd.get('saving')!) {
      const states = p.steps.map((s) => String(s.state.value));
      const before = states[states.length - 2];
      assert.ok(before === 'dirty' || before === 'failed', `${pathSummary(p)} enters saving from ${before}`);
      if (before === 'failed') assert.ok(states.includes('dirty'), 'a failed save was preceded by a dirty assessment');
    }
  });

  it('blocked never offers save: SAVE in blocked, required and validating changes nothing', () => {
    for (const end of ['blocked', 'required', 'validating']) {
      const snapshot = byEnd.get(end)![0].state;
      assert.equal(snapshot.can({ type: 'SAVE' }), false, end);
    }
  });

  it('ignores duplicate clicks while validating or saving', () => {
    for (const end of ['validating', 'saving']) {
      const snapshot = byEnd.get(end)![0].state;
      for (const type of ['ACCEPT', 'SAVE', 'RETRY'] as const)
        assert.equal(snapshot.can({ type }), false, `${type} in ${end}`);
      assert.equal(
        snapshot.can({ type: 'LATCH', generation: null }),
        false,
        `the latch read does not interrupt ${end}`,
      );
    }
  });
});

describe('recovery machine (running actors)', () => {
  it('runs the action once however often Use current version is clicked, and settles from its result', async () => {
    let calls = 0;
    let finish: (s: RecoverySettlement) => void = () => undefined;
    const actor = createActor(
      recoveryMachine.provide({
        actors: {
          acceptCurrentVersion: fake((input) => {
            calls++;
            assert.equal(input.generation, 7, 'the action carries the generation the user saw');
            return new Promise((resolve) => {
              finish = resolve;
            });
          }),
        },
      }),
      { input: { repo } },
    ).start();
    actor.send({ type: 'LATCH', generation: 7 });
    actor.send({ type: 'ACCEPT' });
    actor.send({ type: 'ACCEPT' });
    actor.send({ type: 'ACCEPT' });
    assert.equal(calls, 1);
    finish(accepted);
    const done = await waitFor(actor, (s) => s.value === 'accepted');
    assert.deepEqual(done.context.settlement, accepted);
    assert.equal(done.context.generation, null);
    actor.stop();
  });

  it('a save refused by a blocker lands in blocked with that blocker; any other failure in failed, and retry saves again', async () => {
    let saves = 0;
    const errors = [blockedError, failure];
    const actor = createActor(
      recoveryMachine.provide({
        actors: {
          acceptCurrentVersion: fake(async () => dirty),
          saveAndAccept: fake(async () => {
            saves++;
            const error = errors.shift();
            if (error) throw error;
            return saved;
          }),
        },
      }),
      { input: { repo } },
    ).start();
    actor.send({ type: 'LATCH', generation: 1 });
    actor.send({ type: 'ACCEPT' });
    await waitFor(actor, (s) => s.value === 'dirty');
    actor.send({ type: 'SAVE' });
    const b = await waitFor(actor, (s) => s.value === 'blocked');
    assert.equal(b.context.assessment?.kind === 'blocked' && b.context.assessment.blocker, 'unmerged');
    actor.send({ type: 'SAVE' });
    assert.equal(actor.getSnapshot().value, 'blocked', 'no save from blocked');
    actor.send({ type: 'ACCEPT' });
    await waitFor(actor, (s) => s.value === 'dirty');
    actor.send({ type: 'SAVE' });
    const f = await waitFor(actor, (s) => s.value === 'failed');
    assert.deepEqual(f.context.error, { reason: 'index-locked', message: 'index.lock is held' });
    actor.send({ type: 'RETRY' });
    const a = await waitFor(actor, (s) => s.value === 'accepted');
    assert.equal(a.context.settlement?.savedCommit, saved.result === 'accepted' ? saved.savedCommit : undefined);
    assert.equal(saves, 3);
    actor.stop();
  });

  it('transient states are not durable: a new actor (a restarted window) starts from the latch again', async () => {
    const first = createActor(
      recoveryMachine.provide({
        actors: { saveAndAccept: fake(never), acceptCurrentVersion: fake(async () => dirty) },
      }),
      { input: { repo } },
    ).start();
    first.send({ type: 'LATCH', generation: 3 });
    first.send({ type: 'ACCEPT' });
    await waitFor(first, (s) => s.value === 'dirty');
    first.send({ type: 'SAVE' });
    assert.equal(first.getSnapshot().value, 'saving');
    first.stop(); // the window goes away mid-save
    const second = createActor(recoveryMachine, { input: { repo } }).start();
    assert.equal(second.getSnapshot().value, 'idle');
    second.send({ type: 'LATCH', generation: 3 });
    assert.equal(second.getSnapshot().value, 'required');
    second.stop();
  });

  it('follows the latch: cleared elsewhere → idle; a newer latch while blocked → required again', async () => {
    const actor = createActor(
      recoveryMachine.provide({ actors: { acceptCurrentVersion: fake(async () => blocked) } }),
      { input: { repo } },
    ).start();
    actor.send({ type: 'LATCH', generation: 1 });
    actor.send({ type: 'ACCEPT' });
    await waitFor(actor, (s) => s.value === 'blocked');
    actor.send({ type: 'LATCH', generation: 1 });
    assert.equal(actor.getSnapshot().value, 'blocked', 'the same latch read again changes nothing');
    actor.send({ type: 'LATCH', generation: 2 });
    assert.equal(actor.getSnapshot().value, 'required');
    assert.equal(actor.getSnapshot().context.generation, 2);
    assert.equal(actor.getSnapshot().context.assessment, null);
    actor.send({ type: 'LATCH', generation: null });
    assert.equal(actor.getSnapshot().value, 'idle');
    actor.stop();
  });
});
