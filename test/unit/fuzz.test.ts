/**
 * Issue 33, "a property test of our own": the model-checked random tester (test/support/fuzz/) over a fixed list of
 * seeds, each a run of random user edits, turns in one or two chats, Undo, Redo, Restore, Undo Only This Turn, Undo
 * This File and killed restores through the shipped CLI on a real git repository, checked after every step. A
 * failure prints its seed, its steps and the command that replays it. More seeds: `npm run fuzz`.
 */
import * as assert from 'node:assert/strict';
import { formatFailure, runFuzz } from '../support/fuzz/runner';

/** Seeds that ran clean at the time they were listed (a product bug a seed finds is fixed, not dropped). */
const SEEDS = [1, 2, 3, 4];
const STEPS = 30;

describe('random runs of the shipped CLI, checked against a model (issue 33; real git)', function () {
  this.timeout(180_000);

  for (const seed of SEEDS)
    it(`seed ${seed}: ${STEPS} steps, every Undo and Redo exact, nothing lost, refusals change nothing`, () => {
      const result = runFuzz({ seed, steps: STEPS });
      assert.ok(result.ok, formatFailure(result, STEPS));
      assert.equal(result.steps.length, STEPS);
    });
});
