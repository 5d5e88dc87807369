/**
 * Which git runs: always an absolute path resolved outside the repository (docs/product-contract.md §9, security). A
 * `git` placed in the repository (its root, or a folder of it on PATH) is never run, by the core or by the CLI process.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  configureGitExecutable,
  findGitExecutable,
  gitExecutable,
  runGit,
  untrustedFolderOf,
} from '../../src/core/git/gitRunner';
import { runCliProcess } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  makeRepo,
  tempDir,
  testGitEnv,
} from '../support/gitFixtures';

const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();

/** A fake `git` that records it ran (in a marker outside the repository) and fails. */
function plantFakeGit(dir: string, marker: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'git');
  fs.writeFileSync(file, `#!/bin/sh\necho "$@" >> '${marker}'\nexit 1\n`, { mode: 0o755 });
  return file;
}

describe('git executable resolution', () => {
  let marker: string;
  beforeEach(() => {
    marker = path.join(tempDir('avh-marker-'), 'fake-git-ran');
    configureGitExecutable(null);
  });
  afterEach(() => configureGitExecutable(null));
  after(cleanupTempDirs);

  it('skips relative PATH entries and entries inside the repository; finds the installed git after them', () => {
    const repo = makeRepo();
    plantFakeGit(repo, marker);
    plantFakeGit(path.join(repo, 'node_modules/.bin'), marker);
    const env = {
      PATH: ['.', '', 'bin', path.join(repo, 'node_modules/.bin'), path.dirname(REAL_GIT)].join(path.delimiter),
    };
    assert.deepEqual(findGitExecutable(env, [], untrustedFolderOf(path.join(repo, 'sub/dir')), 'linux'), {
      git: REAL_GIT,
    });
    assert.deepEqual(findGitExecutable({ PATH: '.' }, [], repo, 'linux'), { missing: 'not-found' });
    assert.deepEqual(findGitExecutable({ PATH: path.join(repo, 'node_modules/.bin') }, [], repo, 'linux'), {
      missing: 'only-inside',
    });
  });

  it('honours a configured absolute path (VS Code git.path), ignores relative or missing ones', () => {
    const elsewhere = plantFakeGit(tempDir('avh-usergit-'), marker);
    const env = { PATH: path.dirname(REAL_GIT) };
    assert.deepEqual(findGitExecutable(env, ['git', '/nonexistent/git', elsewhere], '/tmp/x', 'linux'), {
      git: elsewhere,
    });
    assert.deepEqual(findGitExecutable(env, ['./git', 'relative/git'], '/tmp/x', 'linux'), { git: REAL_GIT });
  });

  it('a working folder that was deleted → "no longer exists", not "git was not found", and git is still found after', async () => {
    const repo = makeRepo();
    const gone = path.join(repo, 'moved-away');
    fs.mkdirSync(gone);
    assert.equal(gitExecutable(gone), REAL_GIT); // resolved while the folder existed
    fs.rmdirSync(gone);
    await assert.rejects(runGit(gone, ['status']), (error: Error & { reason?: string }) => {
      assert.match(error.message, /no longer exists/);
      assert.doesNotMatch(error.message, /not found on PATH/);
      assert.equal(error.reason, 'not-a-repository');
      return true;
    });
    assert.equal((await runGit(repo, ['rev-parse', '--is-inside-work-tree'])).stdout.trim(), 'true');
  });

  it('a repository folder on PATH is the only git → a specific refusal, and nothing ran', async () => {
    const repo = makeRepo();
    plantFakeGit(path.join(repo, 'tools'), marker);
    const saved = process.env.PATH;
    process.env.PATH = path.join(repo, 'tools');
    try {
      configureGitExecutable(null); // forget what was resolved under the old PATH
      await assert.rejects(runGit(repo, ['status']), /only git on PATH is inside this repository/);
    } finally {
      process.env.PATH = saved;
      configureGitExecutable(null);
    }
    assert.equal(fs.existsSync(marker), false);
    assert.equal(gitExecutable(repo), REAL_GIT);
  });

  it('the CLI with "." first on PATH never runs a git in the repository root (and a plain spawn would)', () => {
    const repo = makeRepo();
    plantFakeGit(repo, marker);
    const before = contentInventory(repo);
    const env = { ...testGitEnv(), PATH: `.${path.delimiter}${process.env.PATH ?? ''}` };
    // The hazard is real: a bare `git` with this PATH runs the repository's file.
    spawnSync('git', ['--version'], { cwd: repo, env });
    assert.equal(fs.existsSync(marker), true, 'the fake git should run through a bare PATH lookup');
    fs.rmSync(marker);

    const begun = runCliProcess(['turn', 'begin', '--chat', 'c', '--prompt', 'p', '--json'], { cwd: repo, env });
    assert.equal(begun.code, 0, begun.stderr);
    const { turnId } = JSON.parse(begun.stdout) as { turnId: string };
    fs.writeFileSync(path.join(repo, 'app.ts'), 'agent\n');
    const ended = runCliProcess(['turn', 'end', turnId, '--outcome', 'completed', '--json'], { cwd: repo, env });
    assert.equal(ended.code, 0, ended.stderr);
    const status = runCliProcess(['status', '--json'], { cwd: path.join(repo), env });
    assert.equal(status.code, 0, status.stderr);
    assert.equal(fs.existsSync(marker), false, 'the repository git ran');
    assertNothingLost(repo, before);
  });
});
