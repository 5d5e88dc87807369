/**
 * The CLI ships as three bundles (dist/cli.js, cliMain.js, cliHook.js), each with its own copy of the core, so an
 * error made in one is judged in another: stdin is read by the entry (cli.js) and refused in the full CLI or the hook
 * fast path. Our errors are recognised by a brand (src/core/errors.ts), not by which copy of the class made them.
 * Through the shipped bundles as real processes, and with two copies of the module side by side in this process.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { runCliProcess } from '../support/cliProcess';
import { assertNothingLost, cleanupTempDirs, contentInventory, git, head, makeRepo } from '../support/gitFixtures';

type ErrorsModule = typeof import('../../src/core/errors');
type GitErrorsModule = typeof import('../../src/core/git/gitErrors');

/** A fresh copy of a compiled module and of everything it imports: what a second bundle holds. */
function freshCopy<T>(modulePath: string): T {
  const saved = { ...require.cache };
  for (const key of Object.keys(require.cache)) delete require.cache[key];
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(modulePath) as T;
  } finally {
    for (const key of Object.keys(require.cache)) delete require.cache[key];
    Object.assign(require.cache, saved);
  }
}

const SEVENTEEN_MIB = Buffer.alloc(17 * 1024 * 1024, 0x61);

interface StatusJson {
  counts: { turns: number; runningTurns: number };
  runningTurns: { turnId: string }[];
}

describe('the shipped bundles recognise each other’s errors (dist/cli.js, real processes)', function () {
  this.timeout(120_000);
  after(cleanupTempDirs);

  it('17 MiB on stdin of `turn begin --prompt-file -`: the size message, exit 2, no turn, nothing changed', () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const headBefore = head(repo);
    const r = runCliProcess(['turn', 'begin', '--chat', 'c', '--prompt-file', '-', '--json'], {
      cwd: repo,
      input: SEVENTEEN_MIB,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      error: { reason: 'invalid-input', message: 'stdin is larger than 16 MiB.' },
    });
    assert.equal(r.stderr, 'agent-versions: stdin is larger than 16 MiB.\n');
    const status = JSON.parse(runCliProcess(['status', '--json'], { cwd: repo }).stdout) as StatusJson;
    assert.equal(status.counts.turns, 0);
    assert.equal(head(repo), headBefore);
    assert.equal(git(repo, 'status', '--porcelain'), '');
    assertNothingLost(repo, before);
  });

  it('17 MiB on stdin of `hook claude-code`: the size message, exit 1 (a hook never exits 2), the running turn untouched', () => {
    const repo = makeRepo();
    const begun = runCliProcess(['hook', 'claude-code', '--json'], {
      cwd: repo,
      input: JSON.stringify({ hook_event_name: 'UserPromptSubmit', session_id: 's1', prompt: 'p', cwd: repo }),
    });
    assert.equal(begun.code, 0, begun.stderr);
    const turnId = (JSON.parse(begun.stdout) as { turnId: string }).turnId;
    const before = contentInventory(repo);
    const headBefore = head(repo);
    const r = runCliProcess(['hook', 'claude-code', '--json'], { cwd: repo, input: SEVENTEEN_MIB });
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      error: { reason: 'invalid-input', message: 'stdin is larger than 16 MiB.' },
    });
    assert.doesNotMatch(r.stderr, /Unexpected/);
    const status = JSON.parse(runCliProcess(['status', '--json'], { cwd: repo }).stdout) as StatusJson;
    assert.deepEqual(
      status.runningTurns.map((t) => t.turnId),
      [turnId],
    );
    assert.equal(head(repo), headBefore);
    assertNothingLost(repo, before);
  });
});

describe('errors made by another copy of the module (two bundles in one process)', function () {
  const compiled = path.resolve(__dirname, '../../src/core');
  const mine = freshCopy<GitErrorsModule>(path.join(compiled, 'git/gitErrors.js'));
  const errorsOfMine = freshCopy<ErrorsModule>(path.join(compiled, 'errors.js'));
  const other = freshCopy<GitErrorsModule>(path.join(compiled, 'git/gitErrors.js'));
  const errorsOfOther = freshCopy<ErrorsModule>(path.join(compiled, 'errors.js'));

  it('the copies are distinct classes (else this test proves nothing)', () => {
    assert.notEqual(errorsOfMine.AvhError, errorsOfOther.AvhError);
    assert.notEqual(mine.GitCommandError, other.GitCommandError);
    const theirs = new errorsOfOther.AvhError('invalid-input', 'x');
    assert.equal(Object.getPrototypeOf(theirs) instanceof errorsOfMine.AvhError, false, 'no shared prototype');
  });

  it('an AvhError of the other copy is ours by instanceof, isAvhError (with its reason) and safeMessage', () => {
    const theirs = new errorsOfOther.AvhError('invalid-input', 'stdin is larger than 16 MiB.');
    assert.ok(theirs instanceof errorsOfMine.AvhError);
    assert.ok(errorsOfMine.isAvhError(theirs));
    assert.ok(errorsOfMine.isAvhError(theirs, 'invalid-input'));
    assert.equal(errorsOfMine.isAvhError(theirs, 'git-failed'), false);
    assert.equal(errorsOfMine.safeMessage(theirs), 'stdin is larger than 16 MiB.');
  });

  it('a GitCommandError of the other copy is a GitCommandError and an AvhError here; a plain AvhError is no GitCommandError', () => {
    const theirs = new other.GitCommandError('git-failed', ['status'], 128, 'git status failed', 'fatal: x');
    assert.ok(theirs instanceof mine.GitCommandError);
    assert.ok(theirs instanceof errorsOfMine.AvhError);
    assert.equal(theirs.gitErrorCode, undefined);
    assert.equal(new errorsOfOther.AvhError('git-failed', 'x') instanceof mine.GitCommandError, false);
  });

  it('what is not ours stays foreign: plain errors, look-alikes without the brand, and non-objects', () => {
    const lookAlike = Object.assign(new Error('forged'), { reason: 'invalid-input', name: 'AvhError' });
    for (const value of [new Error('x'), lookAlike, null, undefined, 'invalid-input', 42]) {
      assert.equal(value instanceof errorsOfMine.AvhError, false, String(value));
      assert.equal(errorsOfMine.isAvhError(value), false, String(value));
    }
    assert.equal(errorsOfMine.safeMessage(lookAlike), 'Unexpected AvhError');
  });

  it('a subclass without a brand of its own is judged by its prototype chain (and is still an AvhError)', () => {
    class Local extends errorsOfOther.AvhError {}
    const local = new Local('git-failed', 'x');
    assert.ok(local instanceof Local);
    assert.ok(local instanceof errorsOfMine.AvhError);
    assert.equal(new errorsOfOther.AvhError('git-failed', 'x') instanceof Local, false);
  });
});
