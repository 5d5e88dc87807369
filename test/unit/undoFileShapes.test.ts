/**
 * Undo This File on every kind of change a turn can make to a path (issue 33 item 7), through the shipped CLI
 * (dist/cli.js) in real repositories: contents, mode, file↔link, added, deleted, file→folder, folder→file, and a
 * path the user made a folder (or a file) after the turn. Each either puts exactly that path back as it was before
 * the turn — every other path as it was, the working tree equal to HEAD — or is refused before anything changes
 * with a message naming the cause: no [Interrupted] commit, no HEAD move, the repository byte for byte as it was.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoPicture } from '../support/assertions';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  read,
  subjectOf,
  write,
} from '../support/gitFixtures';
import { dist, distBegin, distJson, porcelain } from '../support/turnFixtures';

/** Every path of a commit's tree with its mode and object ("100644 blob <oid>"). */
function entries(repo: string, rev = 'HEAD'): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of git(repo, 'ls-tree', '-r', '-z', rev).split('\0').filter(Boolean)) {
    const [meta, file] = line.split('\t');
    out.set(file, meta);
  }
  return out;
}

/** A repository with `setup` committed, then one turn (begin, `edit`, end) through the CLI. */
function turnOn(setup: (repo: string) => void, edit: (repo: string) => void) {
  const repo = makeRepo();
  setup(repo);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'before the turn');
  const preTurn = head(repo);
  const turnId = distBegin(repo, 'chat-1', 'reshape');
  edit(repo);
  const end = distJson<{ version: string | null }>(repo, ['turn', 'end', turnId, '--outcome', 'completed']);
  assert.ok(end.version, 'the turn made a version');
  return { repo, turnId, preTurn, version: end.version };
}

/**
 * Undo This File of `file`: it must succeed with exactly that path back as in `preTurn` (removed when absent there)
 * and every other path of HEAD as it was; the working tree equals the new HEAD; nothing is lost.
 */
function undoFileExactly(repo: string, turnId: string, preTurn: string, file: string): void {
  const before = contentInventory(repo);
  const expected = entries(repo);
  const old = entries(repo, preTurn).get(file);
  if (old === undefined) expected.delete(file);
  else expected.set(file, old);
  const r = dist(repo, ['undo-file', '--turn', turnId, file]);
  assert.equal(r.code, 0, `undo-file ${file}: ${r.stderr}`);
  assert.match(subjectOf(repo), new RegExp(`^\\[Revert\\] Undid ${file.replace(/\./g, '\\.')} of turn`));
  assert.deepEqual(entries(repo), expected, `only ${file} changed`);
  assert.equal(porcelain(repo), '', 'the working tree is exactly the new HEAD');
  assertNothingLost(repo, before);
}

/** Undo This File of `file` refused with `message`, exit 1, the repository exactly as it was (HEAD, refs, files). */
function undoFileRefused(repo: string, turnId: string, file: string, message: RegExp): void {
  const picture = repoPicture(repo);
  const headBefore = head(repo);
  const r = dist(repo, ['undo-file', '--turn', turnId, file]);
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.stderr, message);
  assert.match(r.stderr, /Nothing was changed\./);
  assert.doesNotMatch(r.stderr, /update-index|exit 128/);
  assert.equal(head(repo), headBefore, 'HEAD did not move (no [Interrupted] commit)');
  assert.deepEqual(repoPicture(repo), picture);
}

describe('Undo This File on every kind of change to a path (issue 33 item 7)', function () {
  this.timeout(120_000);
  after(cleanupTempDirs);

  it('contents, mode, file→link, link→file, added and deleted: each path back exactly, one at a time', () => {
    const { repo, turnId, preTurn } = turnOn(
      (r) => {
        write(r, 'a.txt', 'one\n');
        write(r, 'run.sh', 'echo hi\n');
        write(r, 'was-file', 'a file\n');
        fs.symlinkSync('a.txt', path.join(r, 'was-link'));
        write(r, 'gone.txt', 'deleted by the turn\n');
      },
      (r) => {
        write(r, 'a.txt', 'two\n');
        fs.chmodSync(path.join(r, 'run.sh'), 0o755);
        fs.rmSync(path.join(r, 'was-file'));
        fs.symlinkSync('run.sh', path.join(r, 'was-file'));
        fs.rmSync(path.join(r, 'was-link'));
        write(r, 'was-link', 'now a file\n');
        fs.rmSync(path.join(r, 'gone.txt'));
        write(r, 'new.txt', 'added by the turn\n');
      },
    );
    for (const file of ['a.txt', 'run.sh', 'was-file', 'was-link', 'gone.txt', 'new.txt'])
      undoFileExactly(repo, turnId, preTurn, file);
    assert.equal(git(repo, 'rev-parse', 'HEAD^{tree}'), git(repo, 'rev-parse', `${preTurn}^{tree}`));
    assert.equal(fs.lstatSync(path.join(repo, 'was-link')).isSymbolicLink(), true);
    assert.equal(fs.statSync(path.join(repo, 'run.sh')).mode & 0o111, 0);
  });

  it('a file the turn made a folder: the file is refused (naming the turn) until the folder’s files are undone', () => {
    const { repo, turnId, preTurn } = turnOn(
      (r) => write(r, 'p', 'a file before the turn\n'),
      (r) => {
        fs.rmSync(path.join(r, 'p'));
        write(r, 'p/x', 'in the folder\n');
        write(r, 'p/y', 'in the folder too\n');
      },
    );
    undoFileRefused(repo, turnId, 'p', /This turn made p a folder.*Undo the files the turn put in it first/);
    undoFileExactly(repo, turnId, preTurn, 'p/x');
    undoFileRefused(repo, turnId, 'p', /This turn made p a folder/);
    undoFileExactly(repo, turnId, preTurn, 'p/y');
    undoFileExactly(repo, turnId, preTurn, 'p');
    assert.equal(read(repo, 'p'), 'a file before the turn\n');
  });

  it('a folder the turn made a file: its files are refused (naming the turn) until the file is undone', () => {
    const { repo, turnId, preTurn } = turnOn(
      (r) => {
        write(r, 'd/x', 'x\n');
        write(r, 'd/y', 'y\n');
      },
      (r) => {
        fs.rmSync(path.join(r, 'd'), { recursive: true });
        write(r, 'd', 'a file now\n');
      },
    );
    undoFileRefused(repo, turnId, 'd/x', /This turn made d a file where a folder was.*Undo This File of d first/);
    undoFileExactly(repo, turnId, preTurn, 'd');
    undoFileExactly(repo, turnId, preTurn, 'd/x');
    undoFileExactly(repo, turnId, preTurn, 'd/y');
    assert.equal(git(repo, 'rev-parse', 'HEAD^{tree}'), git(repo, 'rev-parse', `${preTurn}^{tree}`));
  });

  for (const committed of [false, true]) {
    it(`the user made the path a folder after the turn (${committed ? 'committed' : 'uncommitted'}): refused, nothing saved or moved`, () => {
      const { repo, turnId } = turnOn(
        (r) => write(r, 'p', 'before\n'),
        (r) => write(r, 'p', 'by the turn\n'),
      );
      fs.rmSync(path.join(repo, 'p'));
      write(repo, 'p/mine.txt', 'the user’s own file\n');
      if (committed) {
        git(repo, 'add', '-A');
        git(repo, 'commit', '-q', '-m', 'mine');
      }
      undoFileRefused(repo, turnId, 'p', /p has been made a folder since this turn.*Move that folder away first/);
      assert.equal(read(repo, 'p/mine.txt'), 'the user’s own file\n');
    });
  }

  it('a file the turn added, made a folder by the user since: refused, the user’s folder kept', () => {
    const { repo, turnId } = turnOn(
      () => undefined,
      (r) => write(r, 'new', 'added by the turn\n'),
    );
    fs.rmSync(path.join(repo, 'new'));
    write(repo, 'new/mine.txt', 'the user’s\n');
    undoFileRefused(repo, turnId, 'new', /new has been made a folder since this turn/);
  });

  it('a parent folder the user made a file (or a link) since: refused, naming it', () => {
    const { repo, turnId } = turnOn(
      (r) => write(r, 'd/e/x', 'before\n'),
      (r) => write(r, 'd/e/x', 'by the turn\n'),
    );
    fs.rmSync(path.join(repo, 'd/e'), { recursive: true });
    write(repo, 'd/e', 'the user’s file\n');
    undoFileRefused(repo, turnId, 'd/e/x', /d\/e has been made a file \(it was a folder\) since this turn/);
    fs.rmSync(path.join(repo, 'd/e'));
    fs.symlinkSync('..', path.join(repo, 'd/e'));
    undoFileRefused(repo, turnId, 'd/e/x', /d\/e has been made a file/);
  });

  it('an empty folder where the file goes is no obstacle: the user’s other edits saved first, the file put back', () => {
    const { repo, turnId, preTurn } = turnOn(
      (r) => {
        write(r, 'p', 'before\n');
        write(r, 'other.txt', 'other\n');
      },
      (r) => write(r, 'p', 'by the turn\n'),
    );
    fs.rmSync(path.join(repo, 'p'));
    fs.mkdirSync(path.join(repo, 'p/empty'), { recursive: true });
    write(repo, 'other.txt', 'the user’s edit\n');
    const before = contentInventory(repo);
    const r = dist(repo, ['undo-file', '--turn', turnId, 'p']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(read(repo, 'p'), 'before\n');
    assert.equal(read(repo, 'other.txt'), 'the user’s edit\n');
    assert.equal(git(repo, 'rev-parse', 'HEAD:p').trim(), git(repo, 'rev-parse', `${preTurn}:p`).trim());
    assert.equal(porcelain(repo), '');
    assertNothingLost(repo, before);
  });
});
