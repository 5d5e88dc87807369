/**
 * Issue 33, items 3, 4 and 5: the paths a user can click that lost work or refused it, in their exact shapes, through
 * the shipped CLI bundle (dist/cli.js) as real processes in real git repositories. Each checks the exact tree after
 * the step and that no content that existed before is gone.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  read,
  write,
} from '../support/gitFixtures';
import { dist, distBegin, distJson, porcelain } from '../support/turnFixtures';

interface Restored {
  result: string;
  restoreCommit?: string;
  preserved?: string;
}

function endTurn(repo: string, turnId: string, outcome = 'completed'): string | null {
  return distJson<{ version: string | null }>(repo, ['turn', 'end', turnId, '--outcome', outcome]).version;
}

/** A completed turn of `chat` writing `files`; its version. */
function turn(repo: string, chat: string, files: Record<string, string>): string {
  const id = distBegin(repo, chat, `write ${Object.keys(files).join(', ')}`);
  for (const [p, c] of Object.entries(files)) write(repo, p, c);
  const version = endTurn(repo, id);
  assert.ok(version, 'the turn made a version');
  return version;
}

describe('nothing lost on the paths a user clicks (issue 33: items 3, 4, 5; shipped CLI, real git)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  it('item 5: a second Redo after a user commit and a new turn does not bring back the old Undo', () => {
    const repo = makeRepo();
    turn(repo, 'c1', { 'a.txt': 'turn one\n' });
    distJson(repo, ['undo']);
    write(repo, 'mine.txt', 'the user commits\n');
    git(repo, 'add', 'mine.txt');
    git(repo, 'commit', '-q', '-m', 'user work');
    turn(repo, 'c1', { 'b.txt': 'turn two\n' });
    distJson(repo, ['undo']);
    const before = contentInventory(repo);
    assert.equal(distJson<Restored>(repo, ['redo']).result, 'restored');
    assert.equal(read(repo, 'b.txt'), 'turn two\n');
    const afterFirst = head(repo);
    // The redo stack ended at the user's commit: nothing older comes back, nothing of the user's goes.
    assert.equal(distJson<Restored>(repo, ['redo']).result, 'nothing-to-redo');
    assert.equal(head(repo), afterFirst, 'the second Redo changed nothing');
    assert.equal(read(repo, 'mine.txt'), 'the user commits\n');
    assert.ok(!fs.existsSync(path.join(repo, 'a.txt')), "turn one's Undo stays");
    assert.equal(porcelain(repo), '');
    assertNothingLost(repo, before);
  });

  it('item 5: the same without the user commit: a turn after an Undo ends its redo stack', () => {
    const repo = makeRepo();
    turn(repo, 'c1', { 'a.txt': 'turn one\n' });
    distJson(repo, ['undo']);
    turn(repo, 'c1', { 'b.txt': 'turn two\n' });
    distJson(repo, ['undo']);
    assert.equal(distJson<Restored>(repo, ['redo']).result, 'restored');
    assert.equal(distJson<Restored>(repo, ['redo']).result, 'nothing-to-redo');
    assert.ok(!fs.existsSync(path.join(repo, 'a.txt')));
    assert.equal(read(repo, 'b.txt'), 'turn two\n');
  });

  it('item 5: consecutive Undos still redo in order', () => {
    const repo = makeRepo();
    turn(repo, 'c1', { 'a.txt': 'one\n' });
    turn(repo, 'c1', { 'b.txt': 'two\n' });
    distJson(repo, ['undo']);
    distJson(repo, ['undo']);
    assert.equal(distJson<Restored>(repo, ['redo']).result, 'restored');
    assert.equal(read(repo, 'a.txt'), 'one\n');
    assert.ok(!fs.existsSync(path.join(repo, 'b.txt')));
    assert.equal(distJson<Restored>(repo, ['redo']).result, 'restored');
    assert.equal(read(repo, 'b.txt'), 'two\n');
    assert.equal(distJson<Restored>(repo, ['redo']).result, 'nothing-to-redo');
  });

  it('Redo of an Undo Only This Turn made over uncommitted edits: writes back the turn, keeps the edits (fuzz seed 203)', () => {
    const repo = makeRepo();
    const turnOne = distBegin(repo, 'c1', 'turn one');
    write(repo, 'a.txt', 'turn one\n');
    assert.ok(endTurn(repo, turnOne));
    turn(repo, 'c1', { 'b.txt': 'turn two\n' }); // later work: the Undo of turn one keeps it, in place
    write(repo, 'mine.txt', 'the user is still editing\n');
    const before = contentInventory(repo);
    const undone = distJson<Restored & { scope?: string }>(repo, ['undo', '--turn', turnOne, '--only', 'turn']);
    assert.equal(undone.result, 'restored');
    assert.equal(undone.scope, 'turn');
    assert.ok(!undone.preserved, 'in place: nothing was saved, the edit stayed in the tree');
    assert.ok(!fs.existsSync(path.join(repo, 'a.txt')));
    assert.equal(read(repo, 'mine.txt'), 'the user is still editing\n');
    // Nothing happened since: Redo brings turn one back and leaves the user's edit where it is.
    const redone = distJson<Restored>(repo, ['redo']);
    assert.equal(redone.result, 'restored');
    assert.equal(read(repo, 'a.txt'), 'turn one\n');
    assert.equal(read(repo, 'b.txt'), 'turn two\n');
    assert.equal(read(repo, 'mine.txt'), 'the user is still editing\n');
    assert.equal(porcelain(repo), '?? mine.txt');
    assertNothingLost(repo, before);
    // A Redo over an edit of a path it writes is refused, naming it, and changes nothing.
    distJson(repo, ['undo', '--turn', turnOne, '--only', 'turn']);
    write(repo, 'a.txt', 'the user wrote here after the Undo\n');
    const head0 = head(repo);
    const refused = dist(repo, ['redo']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /a\.txt/);
    assert.equal(head(repo), head0);
    assert.equal(read(repo, 'a.txt'), 'the user wrote here after the Undo\n');
  });

  it("Undo Only This Turn after restores that wrote other files stays Only This Turn: a redone stopped turn's file stays (fuzz seed 6)", () => {
    const repo = makeRepo();
    const turnOne = distBegin(repo, 'chat-b', 'turn one');
    write(repo, 'notes.md', 'turn one\n');
    assert.ok(endTurn(repo, turnOne));
    // A turn of another chat writes draft.md and is undone while it runs, then redone: only [Interrupted] and
    // [Restore] commits landed after turn one's version, yet draft.md is not turn one's.
    distBegin(repo, 'chat-a', 'turn two');
    write(repo, 'draft.md', 'written by turn two\n');
    assert.equal(distJson<Restored>(repo, ['undo', '--yes']).result, 'restored');
    assert.ok(!fs.existsSync(path.join(repo, 'draft.md')));
    assert.equal(distJson<Restored>(repo, ['redo']).result, 'restored');
    assert.equal(read(repo, 'draft.md'), 'written by turn two\n');
    const before = contentInventory(repo);
    const undone = distJson<Restored & { scope?: string }>(repo, [
      'undo',
      '--turn',
      turnOne,
      '--only',
      'turn',
      '--yes',
    ]);
    assert.equal(undone.result, 'restored');
    assert.equal(undone.scope, 'turn', 'not degraded to Restore Everything');
    assert.ok(!fs.existsSync(path.join(repo, 'notes.md')), "turn one's file is taken back");
    assert.equal(read(repo, 'draft.md'), 'written by turn two\n', 'the redone file stays');
    assert.equal(porcelain(repo), '');
    assertNothingLost(repo, before);
  });

  it('Restore over a running turn that an ignored file would block is refused before its work is saved (fuzz seed 65)', () => {
    const repo = makeRepo();
    write(repo, 'build/out.bin', 'tracked before the rule\n');
    git(repo, 'add', 'build/out.bin');
    git(repo, 'commit', '-q', '-m', 'user: out.bin');
    const target = head(repo);
    fs.appendFileSync(path.join(repo, '.gitignore'), '*.bin\n');
    const one = distBegin(repo, 'c1', 'make out.bin a folder');
    fs.rmSync(path.join(repo, 'build/out.bin'));
    write(repo, 'build/out.bin/inner.txt', 'ignored, the user needs it\n');
    assert.ok(endTurn(repo, one));
    distBegin(repo, 'c1', 'turn two');
    write(repo, 'wip.txt', "turn two's partial work\n");
    const headBefore = head(repo);
    const before = contentInventory(repo);
    const r = dist(repo, ['restore', target, '--yes']);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /build\/out\.bin\/inner\.txt/);
    assert.doesNotMatch(r.stderr, /Interrupted/, 'nothing was saved: the refusal came first');
    assert.equal(head(repo), headBefore, 'HEAD did not move');
    assert.equal(read(repo, 'wip.txt'), "turn two's partial work\n");
    assert.equal(read(repo, 'build/out.bin/inner.txt'), 'ignored, the user needs it\n');
    assert.equal(distJson<{ runningTurns: unknown[] }>(repo, ['status']).runningTurns.length, 1, 'turn two still runs');
    assertNothingLost(repo, before);
  });

  it('a second Redo never reaches past work an Undo saved first: the stack starts again (fuzz seed 143)', () => {
    const repo = makeRepo();
    const one = distBegin(repo, 'c1', 'turn one');
    write(repo, 'a.txt', 'turn one\n');
    write(repo, 'keep.txt', 'turn one keeps\n');
    assert.ok(endTurn(repo, one));
    const two = distBegin(repo, 'c2', 'turn two');
    // Undo This File of turn one while turn two runs (clean tree: in place), then turn two writes.
    const file = distJson<Restored>(repo, ['undo-file', 'a.txt', '--turn', one, '--yes']);
    assert.equal(file.result, 'restored');
    assert.ok(!fs.existsSync(path.join(repo, 'a.txt')));
    write(repo, 'b.txt', "turn two's work\n");
    const before = contentInventory(repo);
    const undone = distJson<Restored & { turnId?: string }>(repo, ['undo', '--yes']);
    assert.equal(undone.turnId, two);
    assert.ok(undone.preserved, "turn two's work was saved first");
    assert.equal(distJson<Restored>(repo, ['redo']).result, 'restored');
    assert.equal(read(repo, 'b.txt'), "turn two's work\n");
    // The Undo This File before it is no longer redoable: its Redo would reach past turn two's saved work.
    assert.equal(distJson<Restored>(repo, ['redo']).result, 'nothing-to-redo');
    assert.equal(read(repo, 'b.txt'), "turn two's work\n");
    assert.ok(!fs.existsSync(path.join(repo, 'a.txt')));
    assertNothingLost(repo, before);
  });

  it('item 3: Restore after a stopped turn saves its partial work as [Interrupted] and restores', () => {
    const repo = makeRepo();
    const v1 = turn(repo, 'c1', { 'a.txt': 'turn one\n' });
    const stopped = distBegin(repo, 'c1', 'turn two');
    write(repo, 'a.txt', 'half of turn two\n');
    write(repo, 'p.txt', 'partial\n');
    endTurn(repo, stopped, 'cancelled');
    const before = contentInventory(repo);
    const r = distJson<Restored>(repo, ['restore', v1]);
    assert.equal(r.result, 'restored');
    assert.ok(r.preserved, 'the partial work was saved');
    assert.match(git(repo, 'log', '-1', '--format=%s', r.preserved), /^\[Interrupted\]/);
    assert.equal(git(repo, 'show', `${r.preserved}:p.txt`), 'partial\n');
    assert.equal(read(repo, 'a.txt'), 'turn one\n');
    assert.ok(!fs.existsSync(path.join(repo, 'p.txt')));
    assert.equal(git(repo, 'rev-parse', 'HEAD^{tree}').trim(), git(repo, 'rev-parse', `${v1}^{tree}`).trim());
    assert.equal(porcelain(repo), '');
    assertNothingLost(repo, before);
    // The stopped turn was taken away by the Restore: the next Undo aims at turn one, not at it again.
    const undo = distJson<Restored & { turnId?: string }>(repo, ['undo']);
    assert.equal(undo.result, 'restored');
    assert.ok(!fs.existsSync(path.join(repo, 'a.txt')), "turn one's Undo: a.txt did not exist before it");
  });

  it('item 3: Restore over a still-running turn ends it cancelled and saves its work', () => {
    const repo = makeRepo();
    const v1 = turn(repo, 'c1', { 'a.txt': 'turn one\n' });
    distBegin(repo, 'c1', 'turn two');
    write(repo, 'p.txt', 'partial\n');
    const before = contentInventory(repo);
    const r = distJson<Restored>(repo, ['restore', v1]);
    assert.ok(r.preserved);
    assert.equal(git(repo, 'show', `${r.preserved}:p.txt`), 'partial\n');
    assert.ok(!fs.existsSync(path.join(repo, 'p.txt')));
    assert.equal(porcelain(repo), '');
    assertNothingLost(repo, before);
    const status = dist(repo, ['status', '--json']);
    assert.equal(status.code, 0, status.stderr);
  });

  it("item 3: the user's own uncommitted edits (no stopped turn) are still refused, naming them", () => {
    const repo = makeRepo();
    const v1 = turn(repo, 'c1', { 'a.txt': 'turn one\n' });
    turn(repo, 'c1', { 'a.txt': 'turn two\n' });
    write(repo, 'mine.txt', 'the user types\n');
    const at = head(repo);
    const r = dist(repo, ['restore', v1]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /uncommitted changes \(mine\.txt\)/);
    assert.equal(head(repo), at);
    assert.equal(read(repo, 'mine.txt'), 'the user types\n');
  });

  it('item 3: Redo over a turn stopped after the Undo saves its work first', () => {
    const repo = makeRepo();
    turn(repo, 'c1', { 'a.txt': 'turn one\n' });
    distJson(repo, ['undo']);
    const stopped = distBegin(repo, 'c1', 'turn two');
    write(repo, 'p.txt', 'partial\n');
    endTurn(repo, stopped, 'cancelled');
    const before = contentInventory(repo);
    const r = distJson<Restored>(repo, ['redo']);
    assert.equal(r.result, 'restored');
    assert.equal(read(repo, 'a.txt'), 'turn one\n');
    assert.ok(!fs.existsSync(path.join(repo, 'p.txt')));
    assert.equal(porcelain(repo), '');
    assertNothingLost(repo, before);
  });

  it('item 4: Undo Only This Turn of overlapping plain turns (no tool reports) asks, naming the other chat', () => {
    const repo = makeRepo();
    write(repo, 'b.txt', 'b before\n');
    git(repo, 'add', 'b.txt');
    git(repo, 'commit', '-q', '-m', 'b');
    const a = distBegin(repo, 'chat-a', 'chat A edits a');
    const b = distBegin(repo, 'chat-b', 'chat B edits b');
    write(repo, 'a.txt', "A's edit\n");
    write(repo, 'b.txt', "B's edit\n");
    assert.ok(endTurn(repo, a), "A's version (it holds B's edit: nobody reported whose it is)");
    endTurn(repo, b);
    const at = head(repo);
    const before = contentInventory(repo);
    const asked = dist(repo, ['undo', '--turn', a, '--only', 'turn']);
    assert.notEqual(asked.code, 0, 'never decided silently');
    assert.match(asked.stderr, /chat-b|chat /);
    assert.match(asked.stderr, /b\.txt/);
    assert.equal(head(repo), at, 'the question changed nothing');
    assert.equal(read(repo, 'b.txt'), "B's edit\n");
    // Said yes: the Undo goes on (and what it takes stays in history).
    const yes = distJson<Restored>(repo, ['undo', '--turn', a, '--only', 'turn', '--yes']);
    assert.equal(yes.result, 'restored');
    assertNothingLost(repo, before);
  });
});
