import * as assert from 'node:assert/strict';
import { looseCommitParents } from '../../src/core/git/looseObject';
import { cleanupTempDirs, git, head, makeRepo, write } from '../support/gitFixtures';

const repoOf = (root: string) => ({ root, gitDir: `${root}/.git`, stateDir: `${root}/.git/agent-versions` });
const gitParents = (repo: string, rev: string) => git(repo, 'rev-list', '--parents', '-n', '1', rev).trim().split(' ').slice(1);

describe('looseCommitParents: a fresh commit\'s parents without starting git, else null', () => {
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
