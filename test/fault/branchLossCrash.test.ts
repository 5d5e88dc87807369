import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VersionHistory } from '../../src/core/versionHistory';
import { localBranchNames, loseChatBranch, repoWithChatBranch } from '../support/chatBranchFixtures';
import { CLI, cliJson, TEST_BUILD_CLI } from '../support/cliProcess';
import { assertNothingLost, cleanupTempDirs, contentInventory, git, testGitEnv, write } from '../support/gitFixtures';
import { holdRefTransaction, killedWhileRunning } from '../support/slowGit';
import { contextOf } from '../../src/core/repoContextOf';

interface ChatState {
  branch: string;
  resume: string | null;
  done: number;
  pending: number;
}

async function chatState(repo: string): Promise<ChatState> {
  // Opening reconciles, as every CLI command and every activation does.
  const history = await VersionHistory.open(repo);
  try {
    return await contextOf(history).store.read((r) => ({
      branch: r.get<{ branch: string }>("SELECT branch FROM chats WHERE id = 'chat-1'")!.branch,
      resume: r.get<{ resume_identity: string | null }>("SELECT resume_identity FROM chats WHERE id = 'chat-1'")!
        .resume_identity,
      done: r.get<{ n: number }>("SELECT COUNT(*) AS n FROM chat_events WHERE status = 'done'")!.n,
      pending: r.get<{ n: number }>("SELECT COUNT(*) AS n FROM chat_events WHERE status = 'pending'")!.n,
    }));
  } finally {
    await history.close();
  }
}

/**
 * The real CLI, SIGKILLed at `failpoint` in the middle of Continue on a New Branch. `env` adds to the failpoint's
 * environment (a `git:<verb>:during` point gets a delay and a trace2 file to prove the kill landed while git ran).
 */
function killedContinue(repo: string, failpoint: string, env: Record<string, string> = {}): void {
  const killed = spawnSync(
    process.execPath,
    [TEST_BUILD_CLI, '--repo', repo, 'chat', 'continue-on-new-branch', '--chat', 'chat-1', '--json'],
    {
      encoding: 'utf8',
      env: { ...testGitEnv(), AVH_FAILPOINT: failpoint, ...env },
      timeout: 60_000,
    },
  );
  assert.equal(
    killed.signal,
    'SIGKILL',
    `the CLI died at ${failpoint} (status ${killed.status}, stderr ${killed.stderr})`,
  );
}

/**
 * Kills the CLI 300 ms into the `git update-ref` that creates the new branch, while git's transaction on it is
 * held at `state` (see holdRefTransaction), and proves from git's trace2 events that git was still running.
 */
function killedWhileCreatingBranch(repo: string, state: 'prepared' | 'committed'): void {
  const release = holdRefTransaction(repo, state, 'refs/heads/feature/login-2');
  const trace = path.join(repo, '.git', 'avh-trace2.json');
  try {
    killedContinue(repo, 'git:update-ref:during', { AVH_FAILPOINT_DELAY_MS: '300', GIT_TRACE2_EVENT: trace });
    assert.ok(killedWhileRunning(trace, 'update-ref'), 'the kill landed while git update-ref ran');
  } finally {
    release();
    fs.rmSync(trace, { force: true });
  }
}

async function lostChatRepo(): Promise<{ repo: string; inventory: Set<string> }> {
  const { repo, history } = await repoWithChatBranch();
  await history.close();
  loseChatBranch(repo);
  write(repo, 'notes.txt', 'uncommitted notes\n');
  return { repo, inventory: contentInventory(repo) };
}

describe('Continue on a New Branch under SIGKILL (real CLI processes)', function () {
  this.timeout(180_000);
  afterEach(cleanupTempDirs);

  it('killed between creating the branch and updating the chat: reconciliation finishes it; a retry makes no second branch or warning', async () => {
    const { repo, inventory } = await lostChatRepo();
    killedContinue(repo, 'chat-continue:after-branch');
    assert.deepEqual(localBranchNames(repo), ['feature/login-2', 'main'], 'the branch was created before the crash');
    assert.equal(git(repo, 'symbolic-ref', '--short', 'HEAD').trim(), 'main', 'not yet checked out');

    // The next process reconciles: the chat points at the branch that was made, with exactly one warning.
    assert.deepEqual(await chatState(repo), { branch: 'feature/login-2', resume: 'resume-abc', done: 1, pending: 0 });
    // The user clicks again: same branch (now checked out), still one warning, no -3.
    const retry = cliJson<{ result: string; continuation: { newBranch: string } }>([
      '--repo',
      repo,
      'chat',
      'continue-on-new-branch',
      '--chat',
      'chat-1',
    ]);
    assert.deepEqual([retry.result, retry.continuation.newBranch], ['already-continued', 'feature/login-2']);
    assert.equal(git(repo, 'symbolic-ref', '--short', 'HEAD').trim(), 'feature/login-2');
    assert.deepEqual(await chatState(repo), { branch: 'feature/login-2', resume: 'resume-abc', done: 1, pending: 0 });
    assert.deepEqual(localBranchNames(repo), ['feature/login-2', 'main']);
    assertNothingLost(repo, inventory);
  });

  it('killed after the checkout, before the chat update: one branch, one warning, chat consistent after reconciliation', async () => {
    const { repo, inventory } = await lostChatRepo();
    killedContinue(repo, 'chat-continue:after-switch');
    assert.equal(git(repo, 'symbolic-ref', '--short', 'HEAD').trim(), 'feature/login-2');
    const status = cliJson<{ branch: string; chatBranch: string; continuations: unknown[] }>([
      '--repo',
      repo,
      'chat',
      'status',
      '--chat',
      'chat-1',
    ]);
    assert.deepEqual([status.branch, status.chatBranch, status.continuations.length], ['ok', 'feature/login-2', 1]);
    assert.deepEqual(await chatState(repo), { branch: 'feature/login-2', resume: 'resume-abc', done: 1, pending: 0 });
    assert.deepEqual(localBranchNames(repo), ['feature/login-2', 'main']);
    assertNothingLost(repo, inventory);
  });

  it("killed while git creates the branch, before the ref moved: reconciliation removes git's lock; the retry makes the branch", async () => {
    const { repo, inventory } = await lostChatRepo();
    killedWhileCreatingBranch(repo, 'prepared');
    const lockFile = path.join(repo, '.git', 'refs', 'heads', 'feature', 'login-2.lock');
    assert.ok(fs.existsSync(lockFile), "git was killed holding the new branch's lock");
    assert.deepEqual(localBranchNames(repo), ['main']);
    assert.deepEqual(await chatState(repo), { branch: 'feature/login', resume: 'resume-abc', done: 0, pending: 0 });
    assert.equal(fs.existsSync(lockFile), false, 'our own lock is removed by reconciliation');
    const retry = cliJson<{ result: string; continuation: { newBranch: string } }>([
      '--repo',
      repo,
      'chat',
      'continue-on-new-branch',
      '--chat',
      'chat-1',
    ]);
    assert.deepEqual([retry.result, retry.continuation.newBranch], ['continued', 'feature/login-2']);
    assert.deepEqual(await chatState(repo), { branch: 'feature/login-2', resume: 'resume-abc', done: 1, pending: 0 });
    assert.deepEqual(localBranchNames(repo), ['feature/login-2', 'main']);
    assertNothingLost(repo, inventory);
  });

  it('killed while git creates the branch, after the ref moved: reconciliation completes it; the retry makes no second branch or warning', async () => {
    const { repo, inventory } = await lostChatRepo();
    killedWhileCreatingBranch(repo, 'committed');
    assert.deepEqual(localBranchNames(repo), ['feature/login-2', 'main'], 'the ref landed before the kill');
    assert.deepEqual(await chatState(repo), { branch: 'feature/login-2', resume: 'resume-abc', done: 1, pending: 0 });
    const retry = cliJson<{ result: string; continuation: { newBranch: string } }>([
      '--repo',
      repo,
      'chat',
      'continue-on-new-branch',
      '--chat',
      'chat-1',
    ]);
    assert.deepEqual([retry.result, retry.continuation.newBranch], ['already-continued', 'feature/login-2']);
    assert.equal(git(repo, 'symbolic-ref', '--short', 'HEAD').trim(), 'feature/login-2');
    assert.deepEqual(await chatState(repo), { branch: 'feature/login-2', resume: 'resume-abc', done: 1, pending: 0 });
    assert.deepEqual(localBranchNames(repo), ['feature/login-2', 'main']);
    assertNothingLost(repo, inventory);
  });

  it("killed after planning, with a lock on the new branch holding another value: it is some other git command's, so it stays and the retry names it", async () => {
    // Our own lock (the value our command was writing) is removed: 'killed while git creates the branch, before
    // the ref moved' above. A lock with any other value stays, and the retry names it and changes nothing.
    const other = await lostChatRepo();
    killedContinue(other.repo, 'chat-continue:after-plan');
    const otherLock = path.join(other.repo, '.git', 'refs', 'heads', 'feature', 'login-2.lock');
    fs.mkdirSync(path.dirname(otherLock), { recursive: true });
    fs.writeFileSync(otherLock, `${'1'.repeat(40)}\n`);
    const refused = spawnSync(
      process.execPath,
      [CLI, '--repo', other.repo, 'chat', 'continue-on-new-branch', '--chat', 'chat-1', '--json'],
      { encoding: 'utf8', env: testGitEnv() },
    );
    assert.equal(refused.status, 1);
    assert.match(
      refused.stderr,
      /git lock file for a branch is held .*git named \.git\/refs\/heads\/feature\/login-2\.lock\)/,
    );
    assert.equal(fs.readFileSync(otherLock, 'utf8'), `${'1'.repeat(40)}\n`);
    assert.deepEqual(localBranchNames(other.repo), ['main']);
    assertNothingLost(other.repo, other.inventory);
  });
});
