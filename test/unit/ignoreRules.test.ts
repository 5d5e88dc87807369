/**
 * Issue 33, items 1, 2 and 6: turns that move ignore rules, undone and redone through the shipped CLI bundle
 * (dist/cli.js) in real git repositories. After each Undo the working tree is exactly what it was before the turn
 * (ignored files included), after each Redo exactly what it was after it, and no content that existed is gone.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assertNothingLost, cleanupTempDirs, contentInventory, git, makeRepo, write } from '../support/gitFixtures';
import { distBegin, distJson, porcelain } from '../support/turnFixtures';

/** Every file on disk (ignored ones included, .git left out): path → content, symlinks as `-> target`. */
function disk(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir)) {
      if (dir === repo && name === '.git') continue;
      const full = path.join(dir, name);
      const st = fs.lstatSync(full);
      const rel = path.relative(repo, full).split(path.sep).join('/');
      if (st.isDirectory()) walk(full);
      else if (st.isSymbolicLink()) out[rel] = `-> ${fs.readlinkSync(full)}`;
      else out[rel] = fs.readFileSync(full, 'utf8');
    }
  };
  walk(repo);
  return out;
}

function commitAll(repo: string, message: string): void {
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', message);
}

/** One completed turn whose `edit` runs while it is open; the states before and after it. */
function turn(repo: string, edit: () => void): { before: Record<string, string>; after: Record<string, string> } {
  const before = disk(repo);
  const id = distBegin(repo, 'chat', 'move a rule');
  edit();
  const version = distJson<{ version: string | null }>(repo, ['turn', 'end', id, '--outcome', 'completed']).version;
  assert.ok(version, 'the turn made a version');
  return { before, after: disk(repo) };
}

/** Undo then Redo, each exact, nothing lost, and a second Undo exact again (the redo stack still works). */
function undoRedoExact(repo: string, states: { before: Record<string, string>; after: Record<string, string> }): void {
  const inventory = contentInventory(repo);
  assert.equal(distJson<{ result: string }>(repo, ['undo']).result, 'restored');
  assert.deepEqual(disk(repo), states.before, 'Undo gives back exactly the tree before the turn');
  assert.equal(porcelain(repo), '', 'nothing is left behind as an untracked or changed file');
  assert.equal(distJson<{ result: string }>(repo, ['redo']).result, 'restored', 'Redo works at once after Undo');
  assert.deepEqual(disk(repo), states.after, 'Redo gives back exactly the tree after the turn');
  assert.equal(porcelain(repo), '');
  assert.equal(distJson<{ result: string }>(repo, ['undo']).result, 'restored');
  assert.deepEqual(disk(repo), states.before);
  assertNothingLost(repo, inventory);
}

describe('turns that move ignore rules (issue 33: items 1, 2, 6; shipped CLI, real git)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  it("item 1: a turn drops the rule for the user's ignored folder: Undo keeps the folder", () => {
    const repo = makeRepo();
    write(repo, '.gitignore', 'cache/\n');
    commitAll(repo, 'ignore cache');
    write(repo, 'cache/data.bin', 'the user cache\n');
    const states = turn(repo, () => write(repo, '.gitignore', '# nothing ignored\n'));
    undoRedoExact(repo, states);
    assert.equal(fs.readFileSync(path.join(repo, 'cache/data.bin'), 'utf8'), 'the user cache\n');
  });

  it('item 1 (nearby): a nested .gitignore and a negation dropped by the turn', () => {
    const repo = makeRepo();
    write(repo, 'logs/.gitignore', '*.log\n!keep.log\n');
    write(repo, 'logs/keep.log', 'tracked\n');
    commitAll(repo, 'logs');
    write(repo, 'logs/run.log', 'the user log\n');
    const states = turn(repo, () => {
      fs.rmSync(path.join(repo, 'logs/.gitignore'));
      write(repo, 'logs/keep.log', 'edited by the turn\n');
    });
    undoRedoExact(repo, states);
    assert.equal(fs.readFileSync(path.join(repo, 'logs/run.log'), 'utf8'), 'the user log\n');
  });

  it('item 2: a turn adds a rule and writes a file it covers: Undo takes it away, Redo brings it back', () => {
    const repo = makeRepo();
    const states = turn(repo, () => {
      write(repo, '.gitignore', '*.ignored\n');
      write(repo, 'test.ignored', 'made by the turn\n');
      write(repo, 'normal.txt', 'normal\n');
    });
    undoRedoExact(repo, states);
    assert.ok(!fs.existsSync(path.join(repo, 'test.ignored')));
  });

  it('item 6: a turn writes build output and the rule covering it; after Undo and Redo a Restore still works', () => {
    const repo = makeRepo();
    write(repo, 'src.txt', 'v0\n');
    commitAll(repo, 'src');
    const start = git(repo, 'rev-parse', 'HEAD').trim();
    const first = distBegin(repo, 'chat', 'edit src');
    write(repo, 'src.txt', 'v1\n');
    assert.ok(distJson<{ version: string }>(repo, ['turn', 'end', first, '--outcome', 'completed']).version);
    const states = turn(repo, () => {
      write(repo, 'out.bin', 'build output\n');
      write(repo, '.gitignore', 'out.bin\n');
    });
    undoRedoExact(repo, states);
    const inventory = contentInventory(repo);
    // Nothing is left behind that a later Restore or Undo would call the user's uncommitted work.
    assert.equal(distJson<{ result: string }>(repo, ['restore', start]).result, 'restored');
    assert.equal(fs.readFileSync(path.join(repo, 'src.txt'), 'utf8'), 'v0\n');
    assert.equal(distJson<{ result: string }>(repo, ['redo']).result, 'nothing-to-redo');
    assert.equal(porcelain(repo), '');
    assertNothingLost(repo, inventory);
  });

  it("a turn adds a rule that hides the user's untracked file: Undo and Redo keep the file", () => {
    const repo = makeRepo();
    write(repo, 'notes.tmp', 'the user notes\n');
    const states = turn(repo, () => write(repo, '.gitignore', '*.tmp\n'));
    undoRedoExact(repo, states);
    assert.equal(fs.readFileSync(path.join(repo, 'notes.tmp'), 'utf8'), 'the user notes\n');
  });

  it('a tracked file that matches an ignore rule is restored like any other', () => {
    const repo = makeRepo();
    write(repo, '.gitignore', '*.gen\n');
    write(repo, 'keep.gen', 'v0\n');
    git(repo, 'add', '-f', 'keep.gen', '.gitignore');
    git(repo, 'commit', '-q', '-m', 'tracked despite the rule');
    const states = turn(repo, () => write(repo, 'keep.gen', 'v1\n'));
    // A tracked file is git's own business whatever the rules say: the turn's edit is in its version.
    undoRedoExact(repo, states);
  });
});
