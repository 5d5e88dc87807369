import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIRST_BASE_SUBJECT } from '../../src/core/git/workingTree';
import { CLI, runCliProcess } from '../support/cliProcess';
import { assertNothingLost, cleanupTempDirs, contentInventory, git, makeRepo, testGitEnv, write } from '../support/gitFixtures';

const FILES = ['data/input.csv', 'notes.md', 'script.py'];

function repoWithoutCommits(): { repo: string; inventory: Set<string> } {
  const repo = makeRepo({ commit: false });
  write(repo, 'notes.md', '# my notes\n');
  write(repo, 'data/input.csv', 'a,b\n1,2\n');
  write(repo, 'script.py', 'print("hi")\n');
  git(repo, 'add', 'notes.md'); // staged, as a user might
  return { repo, inventory: contentInventory(repo) };
}

const branchCommits = (repo: string) => {
  const r = spawnSync('git', ['rev-list', 'refs/heads/main'], { cwd: repo, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.split('\n').filter(Boolean) : [];
};

/**
 * The first turn's `[Base]` root commit (issue 13) is made by the one commit path inside `turn begin`. A real CLI
 * process is SIGKILLed while each of its git commands runs (the git child first, then the CLI); the next process
 * must leave exactly one `[Base]` holding the folder's files, the index following it, and nothing lost.
 */
describe('first turn in a repository without commits, killed while [Base] is made (real CLI processes)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  for (const point of ['git:write-tree:during', 'git:add:during', 'git:commit-tree:during', 'git:update-ref:during']) {
    it(`killed at ${point}: the retried begin makes exactly one [Base]; nothing is lost`, () => {
      const { repo, inventory } = repoWithoutCommits();
      const killed = spawnSync(process.execPath, [CLI, 'turn', 'begin', '--chat', 'c1', '--prompt', 'first', '--json'], {
        cwd: repo, encoding: 'utf8', env: { ...testGitEnv(), AVH_FAILPOINT: point }, timeout: 60_000,
      });
      assert.equal(killed.signal, 'SIGKILL', `the CLI died at ${point} (status ${killed.status}, stderr ${killed.stderr})`);
      assert.ok(branchCommits(repo).length <= 1, 'at most the one [Base] before the retry');
      assertNothingLost(repo, inventory);

      let retry = runCliProcess(['turn', 'begin', '--chat', 'c1', '--prompt', 'first again', '--json'], { cwd: repo });
      const lock = path.join(repo, '.git', 'refs', 'heads', 'main.lock');
      if (retry.code !== 0) {
        // git's own lock on the branch, left by the killed update-ref: refused by name, nothing changed; gone, it works.
        assert.match(retry.stderr, /git lock file for a branch is held/, retry.stderr);
        assert.ok(fs.existsSync(lock), 'refused only for the lock git left');
        assert.ok(branchCommits(repo).length <= 1);
        fs.rmSync(lock);
        retry = runCliProcess(['turn', 'begin', '--chat', 'c1', '--prompt', 'first again', '--json'], { cwd: repo });
      }
      assert.equal(retry.code, 0, retry.stderr);
      assert.ok((JSON.parse(retry.stdout) as { turnId?: string }).turnId, retry.stdout);
      const commits = branchCommits(repo);
      assert.equal(commits.length, 1, 'exactly one commit on the branch: the [Base]');
      const baseCommit = commits[0];
      assert.equal(git(repo, 'log', '-1', '--format=%s', baseCommit).trim(), FIRST_BASE_SUBJECT);
      assert.deepEqual(git(repo, 'ls-tree', '-r', '--name-only', baseCommit).split('\n').filter(Boolean).sort(), FILES);
      assert.equal(git(repo, 'status', '--porcelain').trim(), '', 'the index follows [Base]');
      assertNothingLost(repo, inventory);
    });
  }
});
