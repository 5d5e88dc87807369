import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acceptCurrentVersion } from '../../src/core/recovery/recoveryActions';
import { setRecovery } from '../../src/core/operations/recoveryLatch';
import { VersionHistory } from '../../src/core/versionHistory';
import { expectReason, recordingLog, repoPicture } from '../support/assertions';
import { cliJson, runCliProcess } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  gitStatus,
  head,
  makeRepo,
  read,
  subjectOf,
  tempDir,
  write,
} from '../support/gitFixtures';
import { contextOf } from '../../src/core/repoContextOf';

describe('turn ledger (real git, real sql.js files)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('a completed turn becomes one [Agent] commit holding exactly the turn changes plus trailers', async () => {
    const repo = makeRepo();
    write(repo, 'keep.txt', 'user edit before the turn\n');
    const before = contentInventory(repo);
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({
        chatId: 'chat-1',
        prompt: 'Add a greeting\nwith more detail',
        agent: 'test-agent',
      });
      write(repo, 'src/hello.ts', 'export const hi = 1;\n');
      write(repo, 'bin/data.bin', Buffer.from([0, 1, 2, 255, 0, 10]));
      write(repo, 'ignored/cache.txt', 'ignored\n');
      write(repo, 'build.log', 'ignored too\n');
      const end = await history.endTurn(turnId, 'completed');
      assert.ok(end.version, 'a version commit was made');
      assert.equal(head(repo), end.version);
      assert.equal(subjectOf(repo), '[Agent] Add a greeting');
      const body = git(repo, 'log', '-1', '--format=%B');
      assert.match(body, new RegExp(`Agent-Turn: ${turnId}`));
      assert.match(body, /Agent-Chat: chat-1/);
      // The diff against the base snapshot is exactly the turn's own changes.
      const turnBase = await contextOf(history).store.read((r) =>
        r.get<{ base_commit: string }>('SELECT base_commit FROM turns WHERE id = ?', [turnId]),
      );
      const changed = git(repo, 'diff', '--name-only', turnBase!.base_commit, 'HEAD').trim().split('\n').sort();
      assert.deepEqual(changed, ['bin/data.bin', 'src/hello.ts']);
      // Untracked and binary files are in the version; ignored files are neither committed nor touched.
      assert.equal(git(repo, 'show', 'HEAD:bin/data.bin').length > 0, true);
      assert.equal(gitStatus(repo, 'cat-file', '-e', 'HEAD:ignored/cache.txt').code !== 0, true);
      assert.equal(read(repo, 'ignored/cache.txt'), 'ignored\n');
      assert.equal(read(repo, 'build.log'), 'ignored too\n');
      // The user's index matches the new HEAD: status is clean apart from ignored files.
      assert.equal(git(repo, 'status', '--porcelain').trim(), '');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('odd file names (spaces, newline, unicode) and a symlink are recorded', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    const before = contentInventory(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'odd names' });
      write(repo, 'with space.txt', 'a\n');
      write(repo, 'new\nline.txt', 'b\n');
      write(repo, 'ünïcødé/日本.txt', 'c\n');
      fs.symlinkSync('with space.txt', path.join(repo, 'link-to-space'));
      const end = await history.endTurn(turnId, 'completed');
      assert.ok(end.version);
      const names = git(repo, 'ls-tree', '-r', '-z', '--name-only', 'HEAD').split('\0').filter(Boolean).sort();
      for (const expected of ['with space.txt', 'new\nline.txt', 'ünïcødé/日本.txt', 'link-to-space'])
        assert.ok(names.includes(expected), `missing ${JSON.stringify(expected)}`);
      assert.match(git(repo, 'ls-tree', 'HEAD', 'link-to-space'), /^120000 /);
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('a huge file (64 MiB): new, it stays out of versions and is named once (issue 13); already tracked, it is versioned like any other', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'big' });
      const big = Buffer.alloc(64 * 1024 * 1024, 7);
      big.write('unique header', 0);
      write(repo, 'data/big.bin', big);
      write(repo, 'data/small.txt', 'small\n');
      const end = await history.endTurn(turnId, 'completed');
      assert.ok(end.version);
      assert.match(end.notice ?? '', /data\/big\.bin is larger than 50 MB/);
      assert.equal(gitStatus(repo, 'cat-file', '-e', 'HEAD:data/big.bin').code !== 0, true, 'not in the version');
      assert.equal(fs.statSync(path.join(repo, 'data/big.bin')).size, big.length, 'kept in the folder');
      assert.equal((await history.undo()).result, 'restored');
      assert.equal(fs.existsSync(path.join(repo, 'data/small.txt')), false);
      assert.equal(
        fs.statSync(path.join(repo, 'data/big.bin')).size,
        big.length,
        'Undo never touches the excluded file',
      );

      // A huge file the user versions themselves stays theirs: the turn that changes it records it, Undo restores it.
      write(repo, 'tracked.bin', big);
      git(repo, 'add', '-f', 'tracked.bin');
      git(repo, 'commit', '-q', '-m', 'user adds a big file');
      const t2 = await history.beginTurn({ chatId: 'c', prompt: 'bigger' });
      const changed = Buffer.concat([big, Buffer.from('more')]);
      write(repo, 'tracked.bin', changed);
      const end2 = await history.endTurn(t2.turnId, 'completed');
      assert.ok(end2.version);
      assert.equal(git(repo, 'cat-file', '-s', 'HEAD:tracked.bin').trim(), String(changed.length));
      assert.equal((await history.undo()).result, 'restored');
      assert.equal(fs.statSync(path.join(repo, 'tracked.bin')).size, big.length);
      assert.equal(
        git(repo, 'cat-file', '-s', `${end2.version}:tracked.bin`).trim(),
        String(changed.length),
        'still reachable in history',
      );
    } finally {
      await history.close();
    }
  });

  it('a turn that changes nothing makes no commit; cancelled and errored turns make none and keep their changes', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    const before = contentInventory(repo);
    try {
      const start = head(repo);
      const t1 = await history.beginTurn({ chatId: 'c', prompt: 'nothing' });
      const r1 = await history.endTurn(t1.turnId, 'completed');
      assert.equal(r1.version, null);
      assert.equal(r1.reason, 'no-changes');
      const t2 = await history.beginTurn({ chatId: 'c', prompt: 'cancel me' });
      write(repo, 'partial.txt', 'half done\n');
      const r2 = await history.endTurn(t2.turnId, 'cancelled');
      assert.equal(r2.version, null);
      const t3 = await history.beginTurn({ chatId: 'c', prompt: 'error' });
      write(repo, 'partial2.txt', 'broken\n');
      const r3 = await history.endTurn(t3.turnId, 'errored');
      assert.equal(r3.version, null);
      assert.equal(head(repo), start, 'no commit was made');
      assertNothingLost(repo, before);
      assert.equal(read(repo, 'partial.txt'), 'half done\n');
      assert.equal(read(repo, 'partial2.txt'), 'broken\n');
      const outcomes = await contextOf(history).store.read((r) =>
        r.all<{ terminal_outcome: string; recovery: string }>(
          'SELECT terminal_outcome, recovery FROM turns ORDER BY seq',
        ),
      );
      assert.deepEqual(
        outcomes.map((o) => `${o.recovery}:${o.terminal_outcome}`),
        ['terminal:completed', 'terminal:cancelled', 'terminal:errored'],
      );
    } finally {
      await history.close();
    }
  });

  it('beginTurn captures dirty and untracked pre-turn edits and leaves HEAD, index and worktree byte-identical', async () => {
    const repo = makeRepo();
    write(repo, 'README.md', '# changed by the user\n');
    write(repo, 'staged.txt', 'staged\n');
    git(repo, 'add', 'staged.txt');
    write(repo, 'staged.txt', 'staged then edited\n');
    write(repo, 'untracked.txt', 'untracked\n');
    fs.rmSync(path.join(repo, '.gitignore'));
    const before = repoPicture(repo);
    const history = await VersionHistory.open(repo);
    try {
      const { turnId, baseCommit } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      const after = Object.fromEntries(
        Object.entries(repoPicture(repo)).filter(([file]) => !file.startsWith('.git/refs/agent-versions/')),
      );
      assert.deepEqual(
        after,
        before,
        'HEAD, branches, index and worktree unchanged (only the private base ref is new)',
      );
      assert.notEqual(baseCommit, head(repo));
      assert.equal(git(repo, 'show', `${baseCommit}:README.md`), '# changed by the user\n');
      assert.equal(git(repo, 'show', `${baseCommit}:staged.txt`), 'staged then edited\n');
      assert.equal(git(repo, 'show', `${baseCommit}:untracked.txt`), 'untracked\n');
      assert.notEqual(
        gitStatus(repo, 'cat-file', '-e', `${baseCommit}:.gitignore`).code,
        0,
        'deleted file is absent from the snapshot',
      );
      assert.equal(git(repo, 'rev-parse', `refs/agent-versions/base/${turnId}`).trim(), baseCommit);
    } finally {
      await history.close();
    }
  });

  it('a clean tree makes the base snapshot HEAD itself and writes nothing to git', async () => {
    const repo = makeRepo();
    const refsBefore = git(repo, 'for-each-ref');
    const history = await VersionHistory.open(repo);
    try {
      const { baseCommit } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      assert.equal(baseCommit, head(repo));
      assert.equal(git(repo, 'for-each-ref'), refsBefore);
    } finally {
      await history.close();
    }
  });

  it('ending an unknown or already-ended turn is a clear error that changes nothing', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      await expectReason(history.endTurn('00000000-0000-4000-8000-000000000000', 'completed'), 'turn-unknown');
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, 'a.txt', 'a\n');
      await history.endTurn(turnId, 'cancelled');
      const start = head(repo);
      const err = await expectReason(history.endTurn(turnId, 'completed'), 'turn-already-ended');
      assert.match(err.message, /already ended \(cancelled\)/);
      assert.equal(head(repo), start);
      const row = await contextOf(history).store.read((r) =>
        r.get<{ terminal_outcome: string }>('SELECT terminal_outcome FROM turns WHERE id = ?', [turnId]),
      );
      assert.equal(row?.terminal_outcome, 'cancelled');
      await expectReason(history.endTurn(turnId, 'finished'), 'invalid-input');
      await expectReason(history.endTurn('not-an-id', 'completed'), 'invalid-input');
      await expectReason(history.beginTurn({ chatId: '', prompt: 'p' }), 'invalid-input');
      await expectReason(history.beginTurn({ chatId: 'c', prompt: 42 }), 'invalid-input');
      await expectReason(history.beginTurn({ chatId: 'c', prompt: 'p', extra: true }), 'invalid-input');
    } finally {
      await history.close();
    }
  });

  it('bad repositories: not a repository, detached HEAD, each with a specific reason and no change (an unborn branch records: newProjects.test.ts)', async () => {
    const plain = tempDir();
    await expectReason(VersionHistory.open(plain), 'not-a-repository');
    assert.equal(fs.existsSync(path.join(plain, '.git')), false);

    const detached = makeRepo();
    git(detached, 'checkout', '-q', '--detach');
    const h2 = await VersionHistory.open(detached);
    try {
      const start = head(detached);
      await expectReason(h2.beginTurn({ chatId: 'c', prompt: 'p' }), 'detached-head');
      assert.equal(head(detached), start);
      const count = await contextOf(h2).store.read((r) => r.get<{ n: number }>('SELECT COUNT(*) AS n FROM turns'));
      assert.equal(count?.n, 0);
    } finally {
      await h2.close();
    }
  });

  it('index.lock held at turn end: the version is made (the index follows later); a merge in progress: no commit, clear reason', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const history = await VersionHistory.open(repo);
    try {
      const t1 = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, 'a.txt', 'agent work\n');
      // Issue 25: the commit path stages into a copy of the index and never needs its lock.
      fs.writeFileSync(path.join(repo, '.git', 'index.lock'), '');
      const r1 = await history.endTurn(t1.turnId, 'completed');
      assert.ok(r1.version, 'the version is made through the temporary index');
      assert.equal(git(repo, 'show', 'HEAD:a.txt'), 'agent work\n');
      fs.rmSync(path.join(repo, '.git', 'index.lock'));
      const start = head(repo);

      const t2 = await history.beginTurn({ chatId: 'c', prompt: 'p2' });
      // A merge started during the turn (MERGE_HEAD present) blocks the version commit.
      git(repo, 'branch', 'other');
      fs.writeFileSync(path.join(repo, '.git', 'MERGE_HEAD'), `${head(repo)}\n`);
      const r2 = await history.endTurn(t2.turnId, 'completed');
      assert.equal(r2.version, null);
      assert.equal(r2.reason, 'operation-in-progress');
      assert.equal(head(repo), start);
      const outcomes = await contextOf(history).store.read((r) =>
        r.all<{ terminal_outcome: string }>('SELECT terminal_outcome FROM turns'),
      );
      assert.deepEqual(
        outcomes.map((o) => o.terminal_outcome),
        ['completed', 'completed'],
      );
      assert.equal(read(repo, 'a.txt'), 'agent work\n');
      assert.equal(git(repo, 'diff', '--cached', '--name-only', 'HEAD').trim(), '', 'the index followed the version');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('while recovery is required: new turns are refused (exit 3 from the CLI); a running turn ends with its outcome but no commit', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, 'work.txt', 'agent work\n');
      await contextOf(history).store.transaction((tx) =>
        setRecovery(tx, 'op-x', 'ambiguous', 'update-worktree', Date.now()),
      );
      const start = head(repo);
      const r = await history.endTurn(turnId, 'completed');
      assert.equal(r.version, null);
      assert.equal(r.reason, 'recovery-required');
      assert.equal(head(repo), start);
      assert.equal(read(repo, 'work.txt'), 'agent work\n');
      await expectReason(history.beginTurn({ chatId: 'c', prompt: 'p2' }), 'recovery-required');
    } finally {
      await history.close();
    }
    const cli = runCliProcess(['turn', 'begin', '--chat', 'c', '--prompt', 'x'], { cwd: repo });
    assert.equal(cli.code, 3);
    assert.match(cli.stderr, /needs attention/);
    assertNothingLost(repo, before);
  });

  it('commits without running hooks or signing, and without a configured identity', async () => {
    const repo = makeRepo();
    write(repo, '.git/hooks/pre-commit', '#!/bin/sh\necho ran > hook-ran\nexit 1\n');
    fs.chmodSync(path.join(repo, '.git/hooks/pre-commit'), 0o755);
    git(repo, 'config', 'commit.gpgsign', 'true');
    git(repo, 'config', 'gpg.program', '/bin/false');
    git(repo, 'config', '--unset', 'user.name');
    git(repo, 'config', '--unset', 'user.email');
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, 'b.txt', 'b\n');
      const r = await history.endTurn(turnId, 'completed');
      assert.ok(r.version, `version made (${r.reason ?? ''})`);
      assert.equal(fs.existsSync(path.join(repo, 'hook-ran')), false);
    } finally {
      await history.close();
    }
  });

  it('outcomes survive a new process (CLI begin, CLI end, CLI status in separate processes)', () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const { turnId } = cliJson<{ turnId: string }>(['turn', 'begin', '--chat', 'cli-chat', '--prompt', 'cli prompt'], {
      cwd: repo,
    });
    write(repo, 'cli.txt', 'from the cli turn\n');
    const status1 = cliJson<{ runningTurns: { turnId: string }[] }>(['status'], { cwd: repo });
    assert.deepEqual(
      status1.runningTurns.map((t) => t.turnId),
      [turnId],
    );
    const end = cliJson<{ turnId: string; outcome: string; version: string | null }>([
      'turn',
      'end',
      turnId,
      '--outcome',
      'completed',
      '--repo',
      repo,
    ]);
    assert.equal(end.outcome, 'completed');
    assert.equal(end.version, head(repo));
    const versions = cliJson<{ oid: string; kind: string; turnId?: string; outcome?: string }[]>(
      ['versions', '--limit', '5'],
      { cwd: repo },
    );
    assert.equal(versions[0].kind, 'agent');
    assert.equal(versions[0].turnId, turnId);
    assert.equal(versions[0].outcome, 'completed');
    assert.equal(versions[1].kind, 'user');
    const status2 = cliJson<{ runningTurns: unknown[]; counts: { turns: number } }>(['status'], { cwd: repo });
    assert.equal(status2.runningTurns.length, 0);
    assert.equal(status2.counts.turns, 1);
    assertNothingLost(repo, before);
  });

  it('CLI exit codes: 2 for bad usage and input, 1 for a failure that changed nothing', () => {
    const repo = makeRepo();
    assert.equal(runCliProcess(['frobnicate'], { cwd: repo }).code, 2);
    assert.equal(runCliProcess(['turn', 'begin'], { cwd: repo }).code, 2);
    assert.equal(runCliProcess(['turn', 'end', 'x', '--outcome', 'done'], { cwd: repo }).code, 2);
    assert.equal(runCliProcess(['versions', '--limit', 'many'], { cwd: repo }).code, 2);
    const notRepo = runCliProcess(['status'], { cwd: tempDir() });
    assert.equal(notRepo.code, 1);
    assert.match(notRepo.stderr, /not a git repository/);
    const unknown = runCliProcess(['turn', 'end', '00000000-0000-4000-8000-000000000000', '--outcome', 'completed'], {
      cwd: repo,
    });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /No turn with this id/);
  });

  it('the Claude Code hook sequence gives the right outcomes', () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const hook = (event: Record<string, unknown>) => {
      const r = runCliProcess(['hook', 'claude-code', '--json'], {
        cwd: repo,
        input: JSON.stringify({ session_id: 'sess-1', cwd: repo, transcript_path: '/dev/null', ...event }),
      });
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as {
        action: string;
        turnId?: string;
        outcome?: string;
        version?: string | null;
        cancelled?: string[];
      };
    };
    const a = hook({ hook_event_name: 'UserPromptSubmit', prompt: 'first prompt' });
    assert.equal(a.action, 'began');
    write(repo, 'one.txt', '1\n');
    // Interrupted: Claude Code sends no Stop, the next prompt arrives.
    const b = hook({ hook_event_name: 'UserPromptSubmit', prompt: 'second prompt' });
    assert.deepEqual(b.cancelled, [a.turnId]);
    write(repo, 'two.txt', '2\n');
    const c = hook({ hook_event_name: 'Stop', stop_hook_active: false });
    assert.equal(c.outcome, 'completed');
    assert.equal(c.turnId, b.turnId);
    assert.equal(c.version, head(repo));
    const d = hook({ hook_event_name: 'UserPromptSubmit', prompt: 'third' });
    const e = hook({ hook_event_name: 'StopFailure', error: 'rate_limit' });
    assert.equal(e.outcome, 'errored');
    assert.equal(e.turnId, d.turnId);
    const f = hook({ hook_event_name: 'UserPromptSubmit', prompt: 'fourth' });
    const g = hook({ hook_event_name: 'SessionEnd', reason: 'exit' });
    assert.equal(g.outcome, 'cancelled');
    assert.equal(g.turnId, f.turnId);
    assert.equal(hook({ hook_event_name: 'Stop' }).action, 'ignored');
    assert.equal(hook({ hook_event_name: 'PreToolUse', tool_name: 'Edit' }).action, 'ignored');
    // Without --json the hook prints nothing on stdout (UserPromptSubmit stdout would reach the agent's context).
    const quiet = runCliProcess(['hook', 'claude-code'], {
      cwd: repo,
      input: JSON.stringify({ session_id: 's2', cwd: repo, hook_event_name: 'UserPromptSubmit', prompt: 'x' }),
    });
    assert.equal(quiet.code, 0);
    assert.equal(quiet.stdout, '');
    // Malformed hook input is a plain failure (exit 1), never Claude Code's blocking exit 2.
    assert.equal(runCliProcess(['hook', 'claude-code'], { cwd: repo, input: '{not json' }).code, 1);
    assert.equal(runCliProcess(['hook', 'claude-code'], { cwd: repo, input: '{"hook_event_name":"Stop"}' }).code, 1);
    assertNothingLost(repo, before);
  });

  it('a corrupt state file is moved aside, the store rebuilt from commit trailers, and the user told', async () => {
    const repo = makeRepo();
    const h1 = await VersionHistory.open(repo);
    const ids: string[] = [];
    try {
      for (const n of [1, 2]) {
        const { turnId } = await h1.beginTurn({ chatId: 'chat-r', prompt: `turn ${n}` });
        write(repo, `f${n}.txt`, `${n}\n`);
        await h1.endTurn(turnId, 'completed');
        ids.push(turnId);
      }
    } finally {
      await h1.close();
    }
    const stateFile = path.join(repo, '.git', 'agent-versions', 'state.sqlite');
    fs.writeFileSync(stateFile, 'this is not a database at all');
    const h2 = await VersionHistory.open(repo);
    try {
      assert.equal(h2.notices.length, 1);
      assert.equal(h2.notices[0].kind, 'state-rebuilt');
      assert.equal(h2.notices[0].turnsRecovered, 2);
      assert.match(h2.notices[0].message, /moved it aside/);
      assert.ok(fs.existsSync(h2.notices[0].movedTo), 'the damaged file is kept');
      assert.equal(fs.readFileSync(h2.notices[0].movedTo, 'utf8'), 'this is not a database at all');
      const versions = await h2.getVersions(3);
      assert.deepEqual(
        versions.slice(0, 2).map((v) => [v.turnId, v.outcome]),
        [
          [ids[1], 'completed'],
          [ids[0], 'completed'],
        ],
      );
      // Fail closed: the lost file may have held a latch or a restore in flight, so a check comes first.
      assert.match(h2.notices[0].message, /recover check/);
      assert.equal((await h2.status()).recovery?.reason, 'state-rebuilt');
      await expectReason(h2.undo(), 'recovery-required');
      assert.equal((await acceptCurrentVersion(contextOf(h2))).result, 'accepted');
      // The rebuilt turns are undoable: Undo restores the latest one's base.
      const undo = await h2.undo();
      assert.equal(undo.result, 'restored');
      assert.equal(fs.existsSync(path.join(repo, 'f2.txt')), false);
      assert.equal(read(repo, 'f1.txt'), '1\n');
    } finally {
      await h2.close();
    }
    const cli = runCliProcess(['status'], { cwd: repo });
    assert.equal(cli.code, 0);
  });

  it('a canary prompt never appears in logs, stderr or error messages', async () => {
    const canary = 'CANARY-7f3a9-secret-prompt-text';
    const repo = makeRepo();
    const lines: string[] = [];
    const history = await VersionHistory.open(repo, { log: recordingLog(lines) });
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: `${canary} do things` });
      write(repo, 'x.txt', 'x\n');
      await history.endTurn(turnId, 'completed');
      try {
        await history.endTurn(turnId, 'completed');
      } catch (error) {
        assert.ok(!String((error as Error).message).includes(canary));
      }
      const t2 = await history.beginTurn({ chatId: 'c', prompt: canary });
      fs.writeFileSync(path.join(repo, '.git', 'index.lock'), '');
      write(repo, 'y.txt', 'y\n');
      const r = await history.endTurn(t2.turnId, 'completed');
      assert.ok(!(r.message ?? '').includes(canary));
      fs.rmSync(path.join(repo, '.git', 'index.lock'));
    } finally {
      await history.close();
    }
    assert.ok(lines.length > 0, 'events were logged');
    for (const line of lines) assert.ok(!line.includes(canary), `log line leaked the prompt: ${line}`);
    const cliRuns = [
      runCliProcess(['turn', 'begin', '--chat', 'c', '--prompt', canary, '--verbose'], { cwd: repo }),
      runCliProcess(['hook', 'claude-code', '--verbose'], {
        cwd: repo,
        input: JSON.stringify({ session_id: 's', cwd: repo, hook_event_name: 'UserPromptSubmit', prompt: canary }),
      }),
      runCliProcess(['hook', 'claude-code', '--verbose'], {
        cwd: repo,
        input: JSON.stringify({ session_id: 's', cwd: repo, hook_event_name: 'Stop' }),
      }),
      runCliProcess(['turn', 'begin', '--chat', '', '--prompt', canary], { cwd: repo }),
      runCliProcess(['status', '--verbose'], { cwd: repo }),
    ];
    for (const r of cliRuns) {
      assert.ok(!r.stderr.includes(canary), `stderr leaked the prompt: ${r.stderr}`);
      assert.ok(!r.stdout.includes(canary), `stdout leaked the prompt: ${r.stdout}`);
    }
  });
});
