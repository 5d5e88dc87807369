import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { branchNotices } from '../../src/core/chats/chatBranches';
import { classifyBranch } from '../../src/core/git/remoteBranch';
import { VersionHistory } from '../../src/core/versionHistory';
import { expectReason, recordingLog, repoPicture } from '../support/assertions';
import { cliJson, runCliProcess } from '../support/cliProcess';
import { localBranchNames, loseChatBranch, repoWithChatBranch } from '../support/chatBranchFixtures';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  gitStatus,
  head,
  makeRepo,
  read,
  write,
} from '../support/gitFixtures';
import { contextOf } from '../../src/core/repoContextOf';

function chatRow(
  history: VersionHistory,
): Promise<{ branch: string; base_branch: string; remote: string | null; resume_identity: string | null }> {
  return contextOf(history).store.read((r) =>
    r.get<{ branch: string; base_branch: string; remote: string | null; resume_identity: string | null }>(
      "SELECT branch, base_branch, remote, resume_identity FROM chats WHERE id = 'chat-1'",
    )!,
  );
}

function warningCount(history: VersionHistory): Promise<number> {
  return contextOf(history).store.read(
    (r) => r.get<{ n: number }>("SELECT COUNT(*) AS n FROM chat_events WHERE status = 'done'")!.n,
  );
}

describe('branch loss (real repositories, a real bare remote on disk)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('records the chat’s branch, the remote’s default branch as base, and the remote at the first turn', async () => {
    const { history } = await repoWithChatBranch();
    try {
      const chat = await chatRow(history);
      assert.equal(chat.branch, 'feature/login');
      assert.equal(chat.base_branch, 'main', 'refs/remotes/origin/HEAD names the base');
      assert.equal(chat.remote, 'origin');
    } finally {
      await history.close();
    }
  });

  it('without a remote the base is the current branch; an explicit baseBranch wins; a malformed one is refused', async () => {
    const repo = makeRepo();
    git(repo, 'switch', '-q', '-c', 'work');
    const history = await VersionHistory.open(repo);
    try {
      await history.beginTurn({ chatId: 'a', prompt: 'x' });
      await history.beginTurn({ chatId: 'b', prompt: 'x', baseBranch: 'main' });
      await expectReason(history.beginTurn({ chatId: 'c', prompt: 'x', baseBranch: 'bad..name' }), 'invalid-input');
      const rows = await contextOf(history).store.read((r) =>
        r.all<{ id: string; base_branch: string; remote: string | null }>(
          'SELECT id, base_branch, remote FROM chats ORDER BY id',
        ),
      );
      assert.deepEqual(rows, [
        { id: 'a', base_branch: 'work', remote: null },
        { id: 'b', base_branch: 'main', remote: null },
      ]);
    } finally {
      await history.close();
    }
  });

  it('deleted locally but still on the remote: not lost — every action says so and offers to restore it from the remote', async () => {
    const { repo, history, turnId } = await repoWithChatBranch();
    try {
      const remoteTip = git(repo, 'rev-parse', 'refs/remotes/origin/feature/login').trim();
      git(repo, 'branch', '-q', '-D', 'feature/login');
      const status = await history.chatStatus('chat-1');
      assert.equal(status.branch, 'on-remote');
      assert.equal(status.remote, 'origin');
      assert.match(status.message!, /deleted locally but still exists on "origin"/);
      const picture = repoPicture(repo);
      const begin = await expectReason(history.beginTurn({ chatId: 'chat-1', prompt: 'go on' }), 'branch-on-remote');
      assert.doesNotMatch(begin.message, /lost|cannot be recovered/);
      await expectReason(history.undo(turnId), 'branch-on-remote');
      await expectReason(history.continueChatOnNewBranch('chat-1'), 'branch-on-remote');
      assert.deepEqual(repoPicture(repo), picture, 'refusals change nothing');
      // Restore from the remote: the branch comes back at the remote's commit, with its upstream; HEAD stays on main.
      git(repo, 'update-ref', '-d', 'refs/remotes/origin/feature/login');
      const restored = await history.restoreChatBranch('chat-1');
      assert.deepEqual(restored, { branch: 'feature/login', remote: 'origin', commit: remoteTip });
      assert.equal(git(repo, 'rev-parse', 'refs/heads/feature/login').trim(), remoteTip);
      assert.equal(git(repo, 'config', 'branch.feature/login.remote').trim(), 'origin');
      assert.equal(git(repo, 'symbolic-ref', '--short', 'HEAD').trim(), 'main');
      assert.equal((await history.chatStatus('chat-1')).branch, 'ok');
      assert.equal(await warningCount(history), 0, 'nothing was continued, so no warning');
    } finally {
      await history.close();
    }
  });

  it('deleted locally and on the remote: lost; Continue on a New Branch makes <old>-2 from the base, once, keeping the resume identity', async () => {
    const log: string[] = [];
    const { repo, remote, history, turnId } = await repoWithChatBranch({ log: recordingLog(log) });
    try {
      loseChatBranch(repo);
      write(repo, 'notes.txt', 'uncommitted user notes\n');
      const inventory = contentInventory(repo);
      const status = await history.chatStatus('chat-1');
      assert.equal(status.branch, 'lost');
      assert.equal(
        status.message,
        'The branch "feature/login" for this chat no longer exists locally or on "origin". Its code changes cannot be recovered. Continue on a new branch to keep the conversation going; nothing was changed.',
      );
      // Nothing is replaced before the click: an agent resuming and an Undo are both refused, untouched.
      const picture = repoPicture(repo);
      const refused = await expectReason(history.beginTurn({ chatId: 'chat-1', prompt: 'continue' }), 'branch-lost');
      assert.equal(refused.details.canContinue, true);
      await expectReason(history.undo(turnId), 'branch-lost');
      assert.deepEqual(repoPicture(repo), picture);
      assert.equal((await chatRow(history)).branch, 'feature/login');

      const mainTip = head(repo);
      const result = await history.continueChatOnNewBranch('chat-1');
      assert.equal(result.result, 'continued');
      assert.deepEqual(
        { ...result.continuation, at: 0 },
        {
          chatId: 'chat-1',
          oldBranch: 'feature/login',
          newBranch: 'feature/login-2',
          baseBranch: 'main',
          repository: repo,
          at: 0,
        },
      );
      assert.equal(git(repo, 'symbolic-ref', '--short', 'HEAD').trim(), 'feature/login-2', 'checked out');
      assert.equal(head(repo), mainTip, 'from the base branch');
      assert.equal(read(repo, 'notes.txt'), 'uncommitted user notes\n', 'uncommitted changes came along');
      const chat = await chatRow(history);
      assert.equal(chat.branch, 'feature/login-2');
      assert.equal(chat.resume_identity, 'resume-abc', 'the resume identity is kept');
      assert.equal(await warningCount(history), 1);

      // Retries change nothing: the same branch, still one warning, no -3.
      assert.equal((await history.continueChatOnNewBranch('chat-1')).result, 'already-continued');
      assert.equal((await history.continueChatOnNewBranch('chat-1')).result, 'already-continued');
      assert.equal(await warningCount(history), 1);
      assert.deepEqual(localBranchNames(repo), ['feature/login-2', 'main']);
      // The conversation goes on: its next turn is recorded on the new branch.
      const next = await history.beginTurn({ chatId: 'chat-1', prompt: 'continue' });
      await history.endTurn(next.turnId, 'cancelled');
      const notices = await branchNotices(contextOf(history), 'feature/login-2');
      assert.equal(notices.warnings.length, 1);
      assert.equal(notices.issues.length, 0);
      const json = cliJson<{ branch: string; continuations: unknown[] }>([
        '--repo',
        repo,
        'chat',
        'status',
        '--chat',
        'chat-1',
      ]);
      assert.equal(json.branch, 'ok');
      assert.equal(json.continuations.length, 1);
      assertNothingLost(repo, inventory);
      assert.ok(
        log.every((line) => !line.includes(remote) && !line.includes('feature/login')),
        'no remote URL or branch name in the log',
      );
    } finally {
      await history.close();
    }
  });

  it('name collisions: <old>-2 taken locally and <old>-3 on the remote → <old>-4', async () => {
    const { repo, history } = await repoWithChatBranch();
    try {
      git(repo, 'branch', 'feature/login-2', 'main');
      git(repo, 'push', '-q', 'origin', 'main:feature/login-3');
      git(repo, 'fetch', '-q', 'origin');
      git(repo, 'push', '-q', 'origin', '--delete', 'feature/login');
      git(repo, 'branch', '-q', '-D', 'feature/login');
      const result = await history.continueChatOnNewBranch('chat-1');
      assert.equal(result.continuation.newBranch, 'feature/login-4');
      assert.deepEqual(localBranchNames(repo), ['feature/login-2', 'feature/login-4', 'main']);
    } finally {
      await history.close();
    }
  });

  it('when switching would overwrite uncommitted changes, Continue on a New Branch is refused and changes nothing', async () => {
    const { repo, history } = await repoWithChatBranch();
    try {
      loseChatBranch(repo);
      git(repo, 'switch', '-q', '-c', 'other');
      write(repo, 'other.txt', 'committed on other\n');
      git(repo, 'add', 'other.txt');
      git(repo, 'commit', '-q', '-m', 'other work');
      write(repo, 'other.txt', 'edited, not committed\n');
      const inventory = contentInventory(repo);
      const picture = repoPicture(repo);
      const refused = await expectReason(history.continueChatOnNewBranch('chat-1'), 'dirty-conflict');
      assert.match(refused.message, /Commit or stash them, then try again\. Nothing was changed\./);
      assert.deepEqual(repoPicture(repo), picture, 'no branch, no checkout');
      assert.deepEqual(localBranchNames(repo), ['main', 'other']);
      assert.equal((await chatRow(history)).branch, 'feature/login');
      assert.equal(
        await contextOf(history).store.read((r) => r.get<{ n: number }>('SELECT COUNT(*) AS n FROM chat_events')!.n),
        0,
      );
      assertNothingLost(repo, inventory);
    } finally {
      await history.close();
    }
  });

  it('the remote path is missing: unknown (network), never lost; Try again changes nothing until it answers', async () => {
    const { repo, remote, history, turnId } = await repoWithChatBranch();
    try {
      git(repo, 'branch', '-q', '-D', 'feature/login');
      const moved = `${remote}-moved`;
      fs.renameSync(remote, moved);
      const status = await history.chatStatus('chat-1');
      assert.equal(status.branch, 'unknown');
      assert.equal(status.reason, 'network');
      assert.doesNotMatch(status.message!, /lost|cannot be recovered/);
      assert.ok(!status.message!.includes(remote), 'the remote URL is never in the message');
      const picture = repoPicture(repo);
      await expectReason(history.beginTurn({ chatId: 'chat-1', prompt: 'x' }), 'branch-unavailable');
      await expectReason(history.undo(turnId), 'branch-unavailable');
      const refused = await expectReason(history.continueChatOnNewBranch('chat-1'), 'branch-unavailable');
      assert.ok(!refused.message.includes(remote));
      assert.deepEqual(repoPicture(repo), picture);
      assert.equal(await warningCount(history), 0);
      // The remote is back: it has the branch, so the chat was never lost.
      fs.renameSync(moved, remote);
      assert.equal((await history.chatStatus('chat-1')).branch, 'on-remote');
    } finally {
      await history.close();
    }
  });

  it('ssh that cannot run (GIT_SSH_COMMAND=false), an ssh auth refusal, and a remote that does not answer in time: unknown with their reason', async () => {
    const { repo, history } = await repoWithChatBranch();
    const saved = process.env.GIT_SSH_COMMAND;
    try {
      git(repo, 'branch', '-q', '-D', 'feature/login');
      git(repo, 'remote', 'set-url', 'origin', 'ssh://git@example.invalid/team/app.git');
      process.env.GIT_SSH_COMMAND = 'false';
      assert.deepEqual(await classifyBranch(contextOf(history).repo, 'feature/login', { recordedRemote: 'origin' }), {
        state: 'unknown',
        remote: 'origin',
        reason: 'network',
      });
      const cli = runCliProcess(['--repo', repo, 'chat', 'status', '--chat', 'chat-1', '--json'], {
        env: { GIT_SSH_COMMAND: 'false' },
      });
      assert.equal(cli.code, 0, cli.stderr);
      assert.deepEqual(
        (({ branch, reason }) => ({ branch, reason }))(JSON.parse(cli.stdout) as { branch: string; reason: string }),
        { branch: 'unknown', reason: 'network' },
      );
      assert.ok(!cli.stdout.includes('example.invalid') && !cli.stderr.includes('example.invalid'));
      process.env.GIT_SSH_COMMAND =
        'sh -c \'echo "git@example.invalid: Permission denied (publickey)." >&2; exit 255\'';
      assert.deepEqual(await classifyBranch(contextOf(history).repo, 'feature/login'), {
        state: 'unknown',
        remote: 'origin',
        reason: 'auth',
      });
      process.env.GIT_SSH_COMMAND = 'sh -c "exec sleep 3"';
      assert.deepEqual(await classifyBranch(contextOf(history).repo, 'feature/login', { timeoutMs: 300 }), {
        state: 'unknown',
        remote: 'origin',
        reason: 'timeout',
      });
    } finally {
      if (saved === undefined) delete process.env.GIT_SSH_COMMAND;
      else process.env.GIT_SSH_COMMAND = saved;
      await history.close();
    }
  });

  it('without any remote a deleted branch is lost, and the new branch starts from the current branch when the base is gone too', async () => {
    const repo = makeRepo();
    git(repo, 'switch', '-q', '-c', 'spike');
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'chat-1', prompt: 'spike it' });
      write(repo, 'spike.txt', 'spike\n');
      await history.endTurn(turnId, 'completed');
      git(repo, 'switch', '-q', 'main');
      git(repo, 'branch', '-q', '-D', 'spike');
      const status = await history.chatStatus('chat-1');
      assert.equal(status.branch, 'lost');
      assert.match(status.message!, /no remote to look for it on/);
      const result = await history.continueChatOnNewBranch('chat-1');
      assert.deepEqual([result.continuation.newBranch, result.continuation.baseBranch], ['spike-2', 'main']);
    } finally {
      await history.close();
    }
  });

  it('multi-root: a lost branch in one repository does not disturb the chats of another', async () => {
    const a = await repoWithChatBranch();
    const b = await repoWithChatBranch();
    try {
      loseChatBranch(a.repo);
      assert.equal((await a.history.chatStatus('chat-1')).branch, 'lost');
      assert.equal((await b.history.chatStatus('chat-1')).branch, 'ok');
      assert.equal((await branchNotices(contextOf(b.history), 'main')).issues.length, 0);
      assert.equal((await branchNotices(contextOf(a.history), 'main')).issues[0].state, 'lost');
      git(b.repo, 'switch', '-q', 'feature/login');
      const turn = await b.history.beginTurn({ chatId: 'chat-1', prompt: 'more' });
      await b.history.endTurn(turn.turnId, 'cancelled');
      await a.history.continueChatOnNewBranch('chat-1');
      assert.deepEqual(localBranchNames(b.repo), ['feature/login', 'main'], 'the other repository got no branch');
      assert.equal(await warningCount(b.history), 0);
      assert.equal((await chatRow(b.history)).branch, 'feature/login');
    } finally {
      await a.history.close();
      await b.history.close();
    }
  });

  it('CLI: chat status and continue-on-new-branch --json; bad input is refused with a clear message', async () => {
    const { repo, history } = await repoWithChatBranch();
    await history.close();
    loseChatBranch(repo);
    const status = cliJson<{ branch: string; reason: string; chatBranch: string }>([
      '--repo',
      repo,
      'chat',
      'status',
      '--chat',
      'chat-1',
    ]);
    assert.deepEqual([status.branch, status.reason, status.chatBranch], ['lost', 'lost', 'feature/login']);
    const continued = cliJson<{ result: string; continuation: { newBranch: string } }>([
      '--repo',
      repo,
      'chat',
      'continue-on-new-branch',
      '--chat',
      'chat-1',
    ]);
    assert.deepEqual([continued.result, continued.continuation.newBranch], ['continued', 'feature/login-2']);
    const text = runCliProcess(['--repo', repo, 'chat', 'continue-on-new-branch', '--chat', 'chat-1']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /Already continued: Conversation continues on `feature\/login-2`; code changes from `feature\/login` were not recovered\./,
    );
    const unknown = runCliProcess(['--repo', repo, 'chat', 'status', '--chat', 'nobody']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /No chat with this id exists in this repository/);
    const missing = runCliProcess(['--repo', repo, 'chat', 'continue-on-new-branch']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /needs --chat/);
    assert.equal(gitStatus(repo, 'rev-parse', '--verify', '-q', 'refs/heads/feature/login-3').code, 1);
    assert.ok(fs.existsSync(path.join(repo, '.git', 'agent-versions')));
  });
});
