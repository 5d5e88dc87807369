/**
 * The restore's confirmation refusals (src/core/restore/refusals.ts): each kind carries the `details` the `--json`
 * output, the extension API and the tests read, and its message in the caller's words; the error is recognised by
 * its brand across bundles. What an Undo that keeps later work did is worded once (restoreCopy.ts keptUndoResult).
 */
import * as assert from 'node:assert/strict';
import { AvhError, isAvhError } from '../../src/core/errors';
import { type ConfirmationRefusal, ConfirmationRequired, refusalStatement } from '../../src/core/restore/refusals';
import { CONFIRM_IN_UI, keptUndoResult } from '../../src/core/restore/restoreCopy';

type RefusalsModule = typeof import('../../src/core/restore/refusals');

/** A fresh copy of the compiled module and of everything it imports: what another bundle holds. */
function freshRefusals(): RefusalsModule {
  const saved = { ...require.cache };
  for (const key of Object.keys(require.cache)) delete require.cache[key];
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('../../src/core/restore/refusals') as RefusalsModule;
  } finally {
    for (const key of Object.keys(require.cache)) delete require.cache[key];
    Object.assign(require.cache, saved);
  }
}

const FLAGS = { choose: 'Run again with --only.', confirm: 'Run again with --yes.' };

describe('confirmation refusals', () => {
  const cases: { refusal: ConfirmationRefusal; details: Record<string, unknown>; starts: RegExp }[] = [
    {
      refusal: { kind: 'later-work', laterTurns: 2, laterWork: '2 turns of another chat', choice: true },
      details: { count: 2, choice: true, laterWork: '2 turns of another chat' },
      starts: /^Work landed after this turn: 2 turns of another chat\. Choose Undo Only This Turn/,
    },
    {
      refusal: { kind: 'later-work', laterTurns: 1, laterWork: '1 turn of this chat', choice: false },
      details: { count: 1, choice: false, laterWork: '1 turn of this chat' },
      starts: /^Work landed after this turn: 1 turn of this chat\. This turn made no version of its own/,
    },
    {
      refusal: { kind: 'user-commits', count: 1 },
      details: { count: 1 },
      starts: /^This restore undoes 1 commit you made yourself after that version/,
    },
    {
      refusal: { kind: 'other-chats', chats: ['codex chat 01a232c3'], files: ['a.txt', 'b/c.txt'] },
      details: { count: 2, otherChats: 'codex chat 01a232c3', files: 'a.txt\nb/c.txt' },
      starts: /^Another chat \(codex chat 01a232c3\) also wrote files this Undo changes: a\.txt, b\/c\.txt\./,
    },
    {
      refusal: { kind: 'plan-changed', userCommits: 3 },
      details: { planChanged: true, count: 3 },
      starts: /^What this restore would do changed since it was confirmed/,
    },
  ];

  for (const { refusal, details, starts } of cases) {
    it(`${refusal.kind}${'choice' in refusal ? ` (choice ${refusal.choice})` : ''}: details, message, reason`, () => {
      const error = new ConfirmationRequired(refusal);
      assert.ok(isAvhError(error, 'confirmation-required'));
      assert.deepEqual({ ...error.details }, details);
      assert.match(error.message, starts);
      assert.equal(error.message, error.statement);
      assert.equal(error.message, refusalStatement(refusal, CONFIRM_IN_UI));
      assert.equal(error.refusal, refusal);
    });
  }

  it("the CLI's words change only how to confirm; a changed plan keeps the core's words", () => {
    const { refusal } = cases[2]!;
    assert.equal(new ConfirmationRequired(refusal, FLAGS).message.endsWith(' Run again with --yes.'), true);
    assert.equal(new ConfirmationRequired(cases[0]!.refusal, FLAGS).message.endsWith(' Run again with --only.'), true);
    const planChanged = cases[4]!.refusal;
    assert.equal(refusalStatement(planChanged, FLAGS), refusalStatement(planChanged, CONFIRM_IN_UI));
  });

  it('is recognised by its brand, not by the copy of the class; a plain confirmation-required AvhError is not one', () => {
    const branded = new (freshRefusals().ConfirmationRequired)({ kind: 'user-commits', count: 2 });
    assert.notEqual(branded.constructor, ConfirmationRequired, 'made by the other copy');
    const foreign = Object.assign(new Error('x'), { refusal: { kind: 'user-commits', count: 2 } });
    assert.ok(branded instanceof ConfirmationRequired);
    assert.ok(branded instanceof AvhError);
    assert.equal(foreign instanceof ConfirmationRequired, false);
    assert.equal(new AvhError('confirmation-required', 'x') instanceof ConfirmationRequired, false);
  });
});

describe('what an Undo that keeps later work did (the CLI and the extension alike)', () => {
  const commit = '0123456789abcdef';
  it('names the scope, the new [Revert] version at the surface’s length and what was saved first', () => {
    assert.equal(
      keptUndoResult({ scope: 'turn', restoreCommit: commit }, 10),
      'Only this turn was undone (later work kept) — a new [Revert] version 0123456789 was added.',
    );
    assert.equal(
      keptUndoResult({ scope: 'change', restoreCommit: commit, preserved: 'fedcba9876543210' }, 7),
      'This change of the turn was undone (the rest of the turn and later work kept) — a new [Revert] version ' +
        '0123456 was added. Your uncommitted changes were saved first (fedcba9).',
    );
    assert.equal(
      keptUndoResult({ scope: 'file', restoreCommit: commit, otherChatFiles: ['a.txt'] }, 7),
      'The file is back to its content before the turn — a new [Revert] version 0123456 was added.',
    );
  });

  it('says "kept" only where it is true: the other chat’s files the user confirmed are named (ten at most)', () => {
    const files = Array.from({ length: 12 }, (_, i) => `f${i}.txt`);
    const text = keptUndoResult({ scope: 'turn', restoreCommit: commit, otherChatFiles: files }, 10);
    assert.match(text, /^Only this turn was undone \(later work kept, except another chat’s edits in 12 files you /);
    assert.match(text, /confirmed: f0\.txt, .*, f9\.txt\) — /);
    assert.doesNotMatch(text, /f10\.txt/);
  });
});
