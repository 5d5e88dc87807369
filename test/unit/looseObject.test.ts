import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { flaggedFromLsFiles, readCachedIndexTree, readFlaggedEntries } from '../../src/core/git/indexFlags';
import { isLooseObject, looseCommitParents, looseCommitTree, writeLooseCommit } from '../../src/core/git/looseObject';
import { cleanupTempDirs, git, gitStatus, head, makeRepo, tempDir, testGitEnv, write } from '../support/gitFixtures';

const repoOf = (root: string) => ({ root, gitDir: `${root}/.git`, stateDir: `${root}/.git/agent-versions` });
const gitParents = (repo: string, rev: string) =>
  git(repo, 'rev-list', '--parents', '-n', '1', rev).trim().split(' ').slice(1);

describe("looseCommitParents: a fresh commit's parents without starting git, else null", () => {
  afterEach(cleanupTempDirs);

  it('root, ordinary and merge commits give exactly the parents git gives', () => {
    const repo = makeRepo();
    const root = git(repo, 'rev-list', '--max-parents=0', 'HEAD').trim();
    assert.deepEqual(looseCommitParents(repoOf(repo), root), gitParents(repo, root));
    git(repo, 'switch', '-q', '-c', 'side');
    write(repo, 'side.txt', 'side\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'side');
    git(repo, 'switch', '-q', '-');
    write(repo, 'main.txt', 'main\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'main');
    assert.deepEqual(looseCommitParents(repoOf(repo), head(repo)), gitParents(repo, 'HEAD'));
    git(repo, 'merge', '-q', '--no-edit', 'side');
    const merge = head(repo);
    assert.equal(gitParents(repo, merge).length, 2);
    assert.deepEqual(looseCommitParents(repoOf(repo), merge), gitParents(repo, merge));
  });

  it('null whenever git must be asked: packed, a tree, not an oid, no such object, a replace ref', () => {
    const repo = makeRepo();
    write(repo, 'second.txt', 'second\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'second');
    const commit = head(repo);
    assert.equal(looseCommitParents(repoOf(repo), commit)?.length, 1);
    assert.equal(looseCommitParents(repoOf(repo), git(repo, 'rev-parse', 'HEAD^{tree}').trim()), null, 'a tree');
    assert.equal(looseCommitParents(repoOf(repo), 'HEAD'), null);
    assert.equal(looseCommitParents(repoOf(repo), '0'.repeat(40)), null, 'no such object');
    git(repo, 'replace', '--graft', commit);
    assert.equal(looseCommitParents(repoOf(repo), commit), null, 'replace refs rewrite what git reports');
    git(repo, 'replace', '-d', commit);
    git(repo, 'gc', '-q');
    assert.equal(looseCommitParents(repoOf(repo), commit), null, 'packed');
  });
});

describe('writeLooseCommit: the synthetic merge input written without starting git, else null', () => {
  afterEach(cleanupTempDirs);

  const spec = (repo: string) => ({
    tree: git(repo, 'rev-parse', 'HEAD^{tree}').trim(),
    parents: [head(repo)],
    message: 'Agent Version History: turn taken back (merge input, never on a branch)\n',
    date: 1,
  });

  it('the same object, byte for byte, as git commit-tree makes from the same inputs; valid for git fsck; written once', () => {
    const repo = makeRepo();
    const s = spec(repo);
    const ours = writeLooseCommit(repoOf(repo), s);
    const identity = {
      GIT_AUTHOR_NAME: 'Agent Version History',
      GIT_AUTHOR_EMAIL: 'agent-versions@localhost',
      GIT_AUTHOR_DATE: '@1 +0000',
      GIT_COMMITTER_NAME: 'Agent Version History',
      GIT_COMMITTER_EMAIL: 'agent-versions@localhost',
      GIT_COMMITTER_DATE: '@1 +0000',
    };
    const theirs = execFileSync('git', ['commit-tree', s.tree, '-p', s.parents[0]], {
      cwd: repo,
      input: s.message,
      env: { ...testGitEnv(), ...identity },
      encoding: 'utf8',
    }).trim();
    assert.equal(ours, theirs);
    assert.equal(git(repo, 'cat-file', '-t', ours!).trim(), 'commit');
    git(repo, 'fsck', '--strict', '--no-dangling');
    assert.equal(writeLooseCommit(repoOf(repo), s), ours, 'an object already there is taken as is');
    const leftovers = fs
      .readdirSync(path.join(repo, '.git', 'objects', ours!.slice(0, 2)))
      .filter((f) => f.startsWith('tmp_obj'));
    assert.deepEqual(leftovers, []);
  });

  it('null where git must write it: a name instead of an oid, SHA-256 objects, a shared repository, an outside object directory', () => {
    const repo = makeRepo();
    assert.equal(writeLooseCommit(repoOf(repo), { ...spec(repo), tree: 'HEAD^{tree}' }), null);
    git(repo, 'config', 'core.sharedRepository', 'group');
    assert.equal(writeLooseCommit(repoOf(repo), spec(repo)), null);
    git(repo, 'config', '--unset', 'core.sharedRepository');
    process.env.GIT_OBJECT_DIRECTORY = path.join(repo, '.git', 'objects');
    try {
      assert.equal(writeLooseCommit(repoOf(repo), spec(repo)), null);
    } finally {
      delete process.env.GIT_OBJECT_DIRECTORY;
    }
    const sha256 = tempDir('avh-sha256-');
    git(sha256, 'init', '-q', '--object-format=sha256');
    assert.equal(
      writeLooseCommit(repoOf(sha256), { tree: 'a'.repeat(40), parents: [], message: 'x\n', date: 1 }),
      null,
    );
  });
});

describe("looseCommitTree and isLooseObject: a commit's tree and an object's presence without starting git, else null", () => {
  afterEach(cleanupTempDirs);

  const treeOf = (repo: string, rev: string) => git(repo, 'rev-parse', `${rev}^{tree}`).trim();

  it('the tree git gives, for root, ordinary and SHA-256 commits; null when packed, replaced, not a commit or absent', () => {
    const repo = makeRepo();
    assert.equal(looseCommitTree(repoOf(repo), head(repo)), treeOf(repo, 'HEAD'));
    write(repo, 'second.txt', 'second\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'second');
    const commit = head(repo);
    assert.equal(looseCommitTree(repoOf(repo), commit), treeOf(repo, 'HEAD'));
    assert.ok(isLooseObject(repoOf(repo), treeOf(repo, 'HEAD')));
    assert.equal(looseCommitTree(repoOf(repo), treeOf(repo, 'HEAD')), null, 'a tree');
    assert.equal(looseCommitTree(repoOf(repo), 'HEAD'), null);
    assert.equal(looseCommitTree(repoOf(repo), '0'.repeat(40)), null, 'no such object');
    assert.equal(isLooseObject(repoOf(repo), '0'.repeat(40)), false);
    git(repo, 'replace', '--graft', commit);
    assert.equal(looseCommitTree(repoOf(repo), commit), null, 'replace refs may change what git reports');
    git(repo, 'replace', '-d', commit);
    process.env.GIT_OBJECT_DIRECTORY = path.join(repo, '.git', 'objects');
    try {
      assert.equal(isLooseObject(repoOf(repo), treeOf(repo, 'HEAD')), false, 'an object folder set from outside');
    } finally {
      delete process.env.GIT_OBJECT_DIRECTORY;
    }
    git(repo, 'gc', '-q');
    assert.equal(looseCommitTree(repoOf(repo), commit), null, 'packed');
    assert.equal(isLooseObject(repoOf(repo), treeOf(repo, 'HEAD')), false, 'packed');
    const sha256 = tempDir('avh-sha256-');
    git(sha256, 'init', '-q', '-b', 'main', '--object-format=sha256');
    write(sha256, 'a.txt', 'a\n');
    git(sha256, 'add', '-A');
    git(sha256, '-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-qm', 'a');
    assert.equal(looseCommitTree(repoOf(sha256), head(sha256)), treeOf(sha256, 'HEAD'));
  });
});

describe('readCachedIndexTree: the tree `git write-tree` prints for an index whose cache tree is valid, else null', () => {
  afterEach(cleanupTempDirs);

  /** What git writes for the index file (from a copy, so the file under test is not rewritten). */
  const writeTree = (repo: string, file: string) => {
    const copy = path.join(tempDir('avh-index-'), 'index');
    fs.copyFileSync(file, copy);
    return execFileSync('git', ['write-tree'], {
      cwd: repo,
      env: { ...testGitEnv(), GIT_INDEX_FILE: copy },
      encoding: 'utf8',
    }).trim();
  };

  it('after a commit, after write-tree, in index v4 and in a SHA-256 repository: exactly what write-tree prints', () => {
    const repo = makeRepo();
    const index = path.join(repo, '.git', 'index');
    write(repo, 'src/deep/a.ts', 'a\n');
    write(repo, 'src/b.ts', 'b\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'folders');
    assert.equal(readCachedIndexTree(index, 'sha1'), writeTree(repo, index));
    assert.equal(readCachedIndexTree(index, 'sha1'), git(repo, 'rev-parse', 'HEAD^{tree}').trim());
    // Staged since: the root is invalidated; once git wrote the tree into the index again, it is valid again.
    write(repo, 'src/deep/a.ts', 'a, staged\n');
    git(repo, 'add', 'src/deep/a.ts');
    assert.equal(readCachedIndexTree(index, 'sha1'), null);
    git(repo, 'write-tree');
    assert.equal(readCachedIndexTree(index, 'sha1'), writeTree(repo, index));
    assert.notEqual(readCachedIndexTree(index, 'sha1'), git(repo, 'rev-parse', 'HEAD^{tree}').trim());
    git(repo, 'update-index', '--index-version', '4');
    git(repo, 'write-tree');
    assert.equal(readCachedIndexTree(index, 'sha1'), writeTree(repo, index));
    const sha256 = tempDir('avh-sha256-');
    git(sha256, 'init', '-q', '-b', 'main', '--object-format=sha256');
    write(sha256, 'x/a.txt', 'a\n');
    git(sha256, 'add', '-A');
    git(sha256, '-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-qm', 'a');
    const index256 = path.join(sha256, '.git', 'index');
    assert.equal(readCachedIndexTree(index256, 'sha256'), writeTree(sha256, index256));
  });

  it('null where git has to compute it: no cache tree, unmerged entries, a split index, no index', () => {
    const repo = makeRepo();
    const index = path.join(repo, '.git', 'index');
    // An index built entry by entry has no cache tree.
    const bare = path.join(tempDir('avh-index-'), 'index');
    execFileSync('git', ['read-tree', '--empty'], { cwd: repo, env: { ...testGitEnv(), GIT_INDEX_FILE: bare } });
    execFileSync('git', ['update-index', '--add', 'README.md'], {
      cwd: repo,
      env: { ...testGitEnv(), GIT_INDEX_FILE: bare },
    });
    assert.equal(readCachedIndexTree(bare, 'sha1'), null);
    assert.equal(readCachedIndexTree(path.join(repo, 'no-such-index'), 'sha1'), null);
    // A conflict: write-tree refuses the index.
    git(repo, 'switch', '-q', '-c', 'side');
    write(repo, 'README.md', 'side\n');
    git(repo, 'commit', '-qam', 'side');
    git(repo, 'switch', '-q', 'main');
    write(repo, 'README.md', 'main\n');
    git(repo, 'commit', '-qam', 'main');
    assert.notEqual(gitStatus(repo, 'merge', '-q', 'side').code, 0);
    assert.equal(readCachedIndexTree(index, 'sha1'), null);
    git(repo, 'merge', '--abort');
    git(repo, 'update-index', '--split-index');
    assert.equal(readCachedIndexTree(index, 'sha1'), null);
  });
});

describe('readFlaggedEntries: exactly the flagged entries git lists, in index versions 3 and 4', () => {
  afterEach(cleanupTempDirs);

  it('assume-unchanged and skip-worktree entries among many, with names of every length: the same as `git ls-files -v`', () => {
    const repo = makeRepo();
    const index = path.join(repo, '.git', 'index');
    for (let i = 0; i < 300; i++) write(repo, `d${i % 7}/${'n'.repeat(i % 90)}${i}.txt`, `${i}\n`);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'many');
    git(repo, 'update-index', '--assume-unchanged', `d3/${'n'.repeat(10)}10.txt`, 'README.md');
    git(repo, 'update-index', '--skip-worktree', `d0/${'n'.repeat(77)}77.txt`, `d3/${'n'.repeat(10)}10.txt`);
    const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1);
    for (const version of ['3', '4']) {
      git(repo, 'update-index', '--index-version', version);
      const listed = flaggedFromLsFiles(git(repo, 'ls-files', '-v', '-s', '-z')).sort(byPath);
      assert.equal(listed.length, 3, version);
      assert.deepEqual(readFlaggedEntries(index, 'sha1')?.sort(byPath), listed, `index version ${version}`);
    }
  });
});
