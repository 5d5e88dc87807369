/**
 * pathsHold: what an Undo that keeps later work is proven and classified by (docs/design.md, "Undo Only This Turn
 * in place"). Real git: the index entries and the file contents, as git would store them, of exactly the paths
 * a change writes; the rest of the tree is not looked at.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveRepository } from '../../src/core/git/repository';
import { pathsHold, treeChanges } from '../../src/core/git/worktreeUpdate';
import { cleanupTempDirs, git, head, makeRepo, write } from '../support/gitFixtures';

describe('pathsHold (real git)', function () {
  this.timeout(30_000);
  afterEach(cleanupTempDirs);

  /** base: a.txt, gone.txt, link → a.txt; next: a.txt changed, gone.txt deleted, new.txt and an executable added. */
  async function twoCommits() {
    const dir = makeRepo();
    write(dir, 'a.txt', 'a, first\n');
    write(dir, 'gone.txt', 'deleted by next\n');
    fs.symlinkSync('a.txt', path.join(dir, 'link'));
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'base');
    const base = head(dir);
    write(dir, 'a.txt', 'a, second\n');
    fs.rmSync(path.join(dir, 'gone.txt'));
    write(dir, 'new.txt', 'added by next\n');
    write(dir, 'run.sh', '#!/bin/sh\n');
    fs.chmodSync(path.join(dir, 'run.sh'), 0o755);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'next');
    const next = head(dir);
    const repo = await resolveRepository(dir);
    return { dir, repo, base, next, changes: await treeChanges(repo, base, next) };
  }

  it('new side at the new commit, old side after going back; elsewhere in the tree does not count', async () => {
    const { dir, repo, base, next, changes } = await twoCommits();
    assert.deepEqual(changes.map((c) => c.path).sort(), ['a.txt', 'gone.txt', 'new.txt', 'run.sh']);
    write(dir, 'README.md', 'an uncommitted edit elsewhere\n');
    write(dir, 'scratch.txt', 'untracked elsewhere\n');
    assert.equal(await pathsHold(repo, next, changes, 'new'), true);
    assert.equal(await pathsHold(repo, base, changes, 'old'), false);
    git(dir, 'read-tree', '-m', '-u', next, base);
    assert.equal(await pathsHold(repo, base, changes, 'old'), true);
    assert.equal(await pathsHold(repo, next, changes, 'new'), false);
  });

  it("any one path off makes it false: content, the index entry's mode, a file where none should be, a staged change", async () => {
    const { dir, repo, next, changes } = await twoCommits();
    const holds = () => pathsHold(repo, next, changes, 'new');
    write(dir, 'a.txt', 'edited\n');
    assert.equal(await holds(), false, 'content');
    git(dir, 'checkout', '--', 'a.txt');
    git(dir, 'update-index', '--chmod=-x', 'run.sh');
    assert.equal(await holds(), false, "the index entry's mode");
    git(dir, 'update-index', '--chmod=+x', 'run.sh');
    write(dir, 'gone.txt', 'back again\n');
    assert.equal(await holds(), false, 'a file where the commit has none');
    fs.rmSync(path.join(dir, 'gone.txt'));
    write(dir, 'new.txt', 'staged edit\n');
    git(dir, 'add', 'new.txt');
    write(dir, 'new.txt', 'added by next\n');
    assert.equal(await holds(), false, 'the index differs even though the file matches');
    git(dir, 'reset', '-q', '--', 'new.txt');
    assert.equal(await holds(), true);
  });

  it('contents compare as git stores them: a file checked out with CRLF line endings matches its LF blob', async () => {
    const dir = makeRepo();
    write(dir, '.gitattributes', '*.txt text eol=crlf\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'attributes');
    const base = head(dir);
    write(dir, 'notes.txt', 'one\ntwo\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'notes');
    fs.rmSync(path.join(dir, 'notes.txt'));
    git(dir, 'checkout', '--', 'notes.txt');
    assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'one\r\ntwo\r\n');
    const repo = await resolveRepository(dir);
    assert.equal(await pathsHold(repo, head(dir), await treeChanges(repo, base, head(dir)), 'new'), true);
  });
});
