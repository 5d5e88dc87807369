import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIRST_BASE_SUBJECT } from '../../src/core/git/workingTree';
import { runCliProcess, TEST_BUILD_CLI } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  testGitEnv,
  write,
} from '../support/gitFixtures';
import { holdRefTransaction, killedWhileRunning, lingeringGitPath, slowGit } from '../support/slowGit';

const FILES = ['data/input.csv', 'notes.md', 'script.py'];

function repoWithoutCommits(): { repo: string; inventory: Set<string> } {
  const repo = makeRepo({ commit: false });
  write(repo, 'notes.md', '# my notes\n');
  write(repo, 'data/input.csv', 'a,b\n1,2\n');
  write(repo, 'script.py', 'print("hi")\n');
  git(repo, 'add', 'notes.md'); // staged, as a user might
  return { repo, inventory: contentInventory(repo) };
}

/** Every `*.lock` file under `dir`, relative to it (what the user removes; a failure's message lists them). */
function lockFilesUnder(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.endsWith('.lock'));
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

  // Each kill lands inside the named git command every time: the process is slowed where git allows it (the add's
  // clean filter; the branch's reference transaction held before or after the ref moved), proven by git's trace2
  // events; write-tree and commit-tree, which nothing slows, are killed after their objects are written.
  const cases: {
    point: string;
    name: string;
    slow: (repo: string) => { env: NodeJS.ProcessEnv; release: () => void };
  }[] = [
    {
      point: 'git:write-tree:during',
      name: 'after its tree is written',
      slow: () => ({ env: { PATH: lingeringGitPath('write-tree') }, release: () => undefined }),
    },
    {
      point: 'git:add:during',
      name: 'in its clean filter',
      slow: (repo) => ({ env: {}, release: slowGit(repo, 'add') }),
    },
    {
      point: 'git:commit-tree:during',
      name: 'after its commit is written',
      slow: () => ({ env: { PATH: lingeringGitPath('commit-tree') }, release: () => undefined }),
    },
    {
      point: 'git:update-ref:during',
      name: "holding the branch's lock",
      slow: (repo) => ({ env: {}, release: holdRefTransaction(repo, 'prepared', 'refs/heads/main') }),
    },
    {
      point: 'git:update-ref:during',
      name: 'after the branch moved',
      slow: (repo) => ({ env: {}, release: holdRefTransaction(repo, 'committed', 'refs/heads/main') }),
    },
  ];
  for (const { point, name, slow } of cases) {
    it(`killed at ${point}, ${name}: the retried begin makes exactly one [Base]; nothing is lost`, () => {
      const { repo, inventory } = repoWithoutCommits();
      const { env, release } = slow(repo);
      const trace = path.join(repo, '.git', 'avh-trace2.json');
      const lingering = env.PATH !== undefined;
      const killed = spawnSync(
        process.execPath,
        [TEST_BUILD_CLI, 'turn', 'begin', '--chat', 'c1', '--prompt', 'first', '--json'],
        {
          cwd: repo,
          encoding: 'utf8',
          timeout: 60_000,
          env: {
            ...testGitEnv(),
            ...env,
            AVH_FAILPOINT: point,
            AVH_FAILPOINT_DELAY_MS: '300',
            ...(lingering ? {} : { GIT_TRACE2_EVENT: trace }),
          },
        },
      );
      release();
      assert.equal(
        killed.signal,
        'SIGKILL',
        `the CLI died at ${point} (status ${killed.status}, stderr ${killed.stderr})`,
      );
      if (!lingering)
        assert.ok(
          killedWhileRunning(trace, point.split(':')[1]),
          `the kill landed while git ${point.split(':')[1]} ran`,
        );
      fs.rmSync(trace, { force: true });
      assert.ok(branchCommits(repo).length <= 1, 'at most the one [Base] before the retry');
      assertNothingLost(repo, inventory);

      let retry = runCliProcess(['turn', 'begin', '--chat', 'c1', '--prompt', 'first again', '--json'], { cwd: repo });
      const lock = path.join(repo, '.git', 'refs', 'heads', 'main.lock');
      if (retry.code !== 0) {
        // git's own locks, left by the killed update-ref: on the branch, on HEAD (the branch is the current one) and
        // on the transaction's private ref keeping the staged tree (notes.md is staged). Refused, nothing changed; once
        // the user removes them, as the message says (every .lock under .git/refs, and HEAD.lock), it works. (Leaving
        // the private ref's lock made the retry fail whenever it ran in the same second: the same commit, the same
        // ref name.)
        assert.match(
          retry.stderr,
          /git lock file for a branch is held \(a \.lock file under \.git\/refs, or \.git\/HEAD\.lock/,
          retry.stderr,
        );
        // The one git named, from .git/ on (the absolute path is not printed).
        assert.match(retry.stderr, /git named \.git\/(refs\/\S+|HEAD)\.lock\)/, retry.stderr);
        assert.doesNotMatch(retry.stderr, new RegExp(repo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
        assert.ok(fs.existsSync(lock), 'refused only for the lock git left');
        assert.ok(branchCommits(repo).length <= 1);
        for (const name of lockFilesUnder(path.join(repo, '.git', 'refs')))
          fs.rmSync(path.join(repo, '.git', 'refs', name));
        fs.rmSync(path.join(repo, '.git', 'HEAD.lock'), { force: true });
        retry = runCliProcess(['turn', 'begin', '--chat', 'c1', '--prompt', 'first again', '--json'], { cwd: repo });
      }
      assert.equal(
        retry.code,
        0,
        `${retry.stderr}\nlock files under .git: ${lockFilesUnder(path.join(repo, '.git')).join(', ') || 'none'}`,
      );
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
