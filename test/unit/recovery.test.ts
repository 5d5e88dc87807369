import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runRecoverCommand } from '../../src/cli/commands/recover';
import { AvhError } from '../../src/core/errors';
import {
  acceptCurrentVersion,
  checkRepository,
  RecoveryBlockedError,
  RecoveryBlocker,
  saveAndAcceptCurrentVersion,
} from '../../src/core/recovery/recoveryActions';
import { readRecovery, setRecovery } from '../../src/core/operations/recoveryLatch';
import { RECOVERY_SUBJECT } from '../../src/core/domain/promptSummary';
import { VersionHistory } from '../../src/core/versionHistory';
import { recordingLog, repoPicture } from '../support/assertions';
import { runCliProcess } from '../support/cliProcess';
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

async function openWithLatch(
  repo: string,
  lines: string[] = [],
): Promise<{ history: VersionHistory; generation: number }> {
  const history = await VersionHistory.open(repo, { log: recordingLog(lines), leaseWaitMs: 2000 });
  const generation = await contextOf(history).store.transaction((tx) =>
    setRecovery(tx, 'op-test-1', 'ambiguous', 'update-worktree', Date.now()),
  );
  return { history, generation };
}

const latchOf = (history: VersionHistory) => contextOf(history).store.read((r) => readRecovery(r));

async function expectBlocked(promise: Promise<unknown>, blocker: RecoveryBlocker): Promise<RecoveryBlockedError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof RecoveryBlockedError, `expected RecoveryBlockedError, got ${String(error)}`);
    assert.equal(error.assessment.blocker, blocker);
    return error;
  }
  assert.fail(`expected save to be refused (${blocker})`);
}

/** Two commits that conflict on conflict.txt: `main` and `other` each change its one line differently. */
function conflictingBranches(repo: string): { base: string; other: string } {
  write(repo, 'conflict.txt', 'base\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'base');
  const base = head(repo);
  git(repo, 'checkout', '-q', '-b', 'other');
  write(repo, 'conflict.txt', 'theirs\n');
  git(repo, 'commit', '-q', '-am', 'theirs');
  const other = head(repo);
  git(repo, 'checkout', '-q', 'main');
  write(repo, 'conflict.txt', 'ours\n');
  git(repo, 'commit', '-q', '-am', 'ours');
  return { base, other };
}

interface BlockerCase {
  blocker: RecoveryBlocker;
  /** How the state is made: real git unless said otherwise. */
  how: string;
  make: (repo: string) => void;
  resolve: (repo: string) => void;
}

const BLOCKERS: BlockerCase[] = [
  {
    blocker: 'unmerged',
    how: 'a conflicting `git stash pop` (unmerged entries, no operation markers)',
    make: (repo) => {
      write(repo, 'conflict.txt', 'base\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'base');
      write(repo, 'conflict.txt', 'stashed\n');
      git(repo, 'stash', '-q');
      write(repo, 'conflict.txt', 'committed\n');
      git(repo, 'commit', '-q', '-am', 'committed');
      assert.notEqual(gitStatus(repo, 'stash', 'pop').code, 0, 'the pop conflicts');
    },
    // The stash is kept on conflict, so taking HEAD's side loses nothing.
    resolve: (repo) => git(repo, 'checkout', '-q', 'HEAD', '--', 'conflict.txt'),
  },
  {
    blocker: 'merge',
    how: 'a conflicting `git merge`',
    make: (repo) => {
      conflictingBranches(repo);
      assert.notEqual(gitStatus(repo, 'merge', 'other').code, 0);
    },
    resolve: (repo) => git(repo, 'merge', '--abort'),
  },
  {
    blocker: 'rebase',
    how: 'a conflicting `git rebase` (detached HEAD and unmerged entries too: the operation is what is named)',
    make: (repo) => {
      conflictingBranches(repo);
      assert.notEqual(gitStatus(repo, 'rebase', 'other').code, 0);
    },
    resolve: (repo) => git(repo, 'rebase', '--abort'),
  },
  {
    blocker: 'am',
    how: 'a conflicting `git am` of a patch made by `git format-patch`',
    make: (repo) => {
      const { base, other } = conflictingBranches(repo);
      const patch = path.join(tempDir('avh-patch-'), 'change.patch');
      fs.writeFileSync(patch, git(repo, 'format-patch', '--stdout', `${base}..${other}`));
      assert.notEqual(gitStatus(repo, 'am', '-q', patch).code, 0);
    },
    resolve: (repo) => git(repo, 'am', '--abort'),
  },
  {
    blocker: 'cherry-pick',
    how: 'a conflicting `git cherry-pick`',
    make: (repo) => {
      conflictingBranches(repo);
      assert.notEqual(gitStatus(repo, 'cherry-pick', 'other').code, 0);
    },
    resolve: (repo) => git(repo, 'cherry-pick', '--abort'),
  },
  {
    blocker: 'revert',
    how: 'a conflicting `git revert`',
    make: (repo) => {
      write(repo, 'conflict.txt', 'one\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'one');
      write(repo, 'conflict.txt', 'two\n');
      git(repo, 'commit', '-q', '-am', 'two');
      write(repo, 'conflict.txt', 'three\n');
      git(repo, 'commit', '-q', '-am', 'three');
      assert.notEqual(gitStatus(repo, 'revert', '--no-edit', 'HEAD~1').code, 0);
    },
    resolve: (repo) => git(repo, 'revert', '--abort'),
  },
  {
    blocker: 'bisect',
    how: '`git bisect start` with a bad and a good commit (HEAD detached at the midpoint)',
    make: (repo) => {
      const first = head(repo);
      for (const n of [1, 2, 3]) {
        write(repo, `step${n}.txt`, `${n}\n`);
        git(repo, 'add', '-A');
        git(repo, 'commit', '-q', '-m', `step ${n}`);
      }
      git(repo, 'bisect', 'start');
      git(repo, 'bisect', 'bad');
      git(repo, 'bisect', 'good', first);
    },
    resolve: (repo) => git(repo, 'bisect', 'reset'),
  },
  {
    blocker: 'detached',
    how: '`git checkout --detach`',
    make: (repo) => git(repo, 'checkout', '-q', '--detach'),
    resolve: (repo) => git(repo, 'checkout', '-q', 'main'),
  },
  {
    blocker: 'index-locked',
    how: 'an index.lock file (what a running or crashed git process leaves)',
    make: (repo) => write(repo, '.git/index.lock', ''),
    resolve: (repo) => fs.rmSync(path.join(repo, '.git', 'index.lock')),
  },
];

describe('guided recovery actions (real git, real state files)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('clean repository: check is healthy, Use current version accepts, removes the latch and leaves git byte-identical', async () => {
    const repo = makeRepo();
    write(repo, 'ignored/cache.txt', 'ignored\n');
    const lines: string[] = [];
    const { history } = await openWithLatch(repo, lines);
    try {
      const before = repoPicture(repo);
      const assessment = await checkRepository(contextOf(history));
      assert.deepEqual(assessment, { kind: 'healthy', branch: 'main', head: head(repo) });
      const settlement = await acceptCurrentVersion(contextOf(history));
      assert.deepEqual(settlement, { result: 'accepted', branch: 'main', head: head(repo) });
      assert.equal(await latchOf(history), null);
      assert.deepEqual(repoPicture(repo), before, 'refs, index file, markers and worktree are byte-identical');
      assert.ok(lines.includes('recovery.checkpoint-removed operation=op-test-1 generation=1'), lines.join('\n'));
      assert.ok(lines.includes('recovery.accept action=accept result=accepted reason=healthy'), lines.join('\n'));
      // Accepting again: nothing left to accept.
      assert.deepEqual(await acceptCurrentVersion(contextOf(history)), { result: 'not-required' });
      assert.deepEqual(await saveAndAcceptCurrentVersion(contextOf(history)), { result: 'not-required' });
    } finally {
      await history.close();
    }
  });

  it('dirty tree: the only blocker is reported as dirty; save & use commits every file as [Recovery] and leaves a clean attached HEAD', async () => {
    const repo = makeRepo();
    write(repo, 'tracked.txt', 'v1\n');
    write(repo, 'gone.txt', 'to be deleted\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'files');
    const oldHead = head(repo);
    write(repo, 'tracked.txt', 'v2 modified\n');
    fs.rmSync(path.join(repo, 'gone.txt'));
    write(repo, 'staged.txt', 'staged only\n');
    git(repo, 'add', 'staged.txt');
    write(repo, 'new dir/untracked file.txt', 'untracked\n');
    write(repo, 'bin/blob.bin', Buffer.from([0, 255, 1, 254, 0, 0, 10, 13]));
    write(repo, 'ignored/cache.txt', 'ignored\n');
    write(repo, 'debug.log', 'ignored too\n');
    const inventory = contentInventory(repo);
    const lines: string[] = [];
    const { history } = await openWithLatch(repo, lines);
    try {
      const assessment = await checkRepository(contextOf(history));
      assert.equal(assessment.kind, 'dirty');
      assert.deepEqual(assessment.kind === 'dirty' && assessment.counts, {
        staged: 1,
        unstaged: 2,
        untracked: 2,
        unmerged: 0,
      });
      const before = repoPicture(repo);
      const rejected = await acceptCurrentVersion(contextOf(history));
      assert.equal(rejected.result, 'rejected');
      assert.equal(rejected.result === 'rejected' && rejected.assessment.kind, 'dirty');
      assert.ok(await latchOf(history), 'Use current version on a dirty tree keeps recovery');
      assert.deepEqual(repoPicture(repo), before, 'and changes nothing');

      const saved = await saveAndAcceptCurrentVersion(contextOf(history));
      assert.equal(saved.result, 'accepted');
      const savedCommit = saved.result === 'accepted' ? saved.savedCommit : undefined;
      assert.ok(savedCommit);
      assert.deepEqual(saved, { result: 'accepted', branch: 'main', head: savedCommit, savedCommit });
      assert.equal(head(repo), savedCommit);
      assert.equal(subjectOf(repo), RECOVERY_SUBJECT);
      assert.equal(git(repo, 'rev-parse', 'HEAD^').trim(), oldHead);
      assert.equal(git(repo, 'symbolic-ref', 'HEAD').trim(), 'refs/heads/main', 'HEAD stays attached');
      assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all').trim(), '', 'clean afterwards');
      assert.deepEqual(git(repo, 'ls-tree', '-r', '--name-only', 'HEAD').trim().split('\n').sort(), [
        '.gitignore',
        'README.md',
        'bin/blob.bin',
        'new dir/untracked file.txt',
        'staged.txt',
        'tracked.txt',
      ]);
      assert.deepEqual(Buffer.from(git(repo, 'cat-file', '-p', 'HEAD:bin/blob.bin'), 'latin1').length, 8);
      assert.equal(git(repo, 'show', 'HEAD:tracked.txt'), 'v2 modified\n');
      assert.equal(read(repo, 'ignored/cache.txt'), 'ignored\n', 'ignored files are not touched');
      assert.equal(read(repo, 'debug.log'), 'ignored too\n');
      assertNothingLost(repo, inventory);
      assert.equal(await latchOf(history), null, 'recovery cleared only after the clean re-probe');
      assert.ok(lines.includes('recovery.accept action=save result=accepted reason=saved'), lines.join('\n'));
      assert.ok(lines.some((l) => l.startsWith('recovery.checkpoint-removed operation=op-test-1')));
      for (const line of lines)
        assert.doesNotMatch(line, /tracked|untracked|blob|v2 modified|new dir/, 'logs are content-free');
    } finally {
      await history.close();
    }
  });

  it('a held index.lock refuses save & use before anything is written; recovery stays; after it is gone, save works', async () => {
    const repo = makeRepo();
    write(repo, 'work.txt', 'unsaved work\n');
    const { history } = await openWithLatch(repo);
    try {
      write(repo, '.git/index.lock', '');
      const before = repoPicture(repo);
      const objectsBefore = git(repo, 'count-objects', '-v');
      const error = await expectBlocked(saveAndAcceptCurrentVersion(contextOf(history)), 'index-locked');
      assert.equal(error.reason, 'index-locked');
      assert.match(error.message, /index\.lock/);
      assert.deepEqual(repoPicture(repo), before);
      assert.equal(git(repo, 'count-objects', '-v'), objectsBefore, 'not even an object was written');
      assert.ok(await latchOf(history));
      fs.rmSync(path.join(repo, '.git', 'index.lock'));
      const saved = await saveAndAcceptCurrentVersion(contextOf(history));
      assert.equal(saved.result, 'accepted');
      assert.equal(subjectOf(repo), RECOVERY_SUBJECT);
    } finally {
      await history.close();
    }
  });

  it('a failure after the [Recovery] commit object is made (branch ref locked) keeps recovery and moves nothing', async () => {
    const repo = makeRepo();
    write(repo, 'work.txt', 'unsaved work\n');
    const inventory = contentInventory(repo);
    const lines: string[] = [];
    const { history } = await openWithLatch(repo, lines);
    try {
      write(repo, '.git/refs/heads/main.lock', '');
      const before = repoPicture(repo);
      await assert.rejects(
        saveAndAcceptCurrentVersion(contextOf(history)),
        (error: unknown) => error instanceof AvhError && !(error instanceof RecoveryBlockedError),
      );
      assert.deepEqual(repoPicture(repo), before, 'HEAD, the branch, the index and the files are unchanged');
      assert.ok(await latchOf(history));
      assert.ok(
        lines.some((l) => l.startsWith('recovery.accept action=save result=failed')),
        lines.join('\n'),
      );
      assertNothingLost(repo, inventory);
      fs.rmSync(path.join(repo, '.git', 'refs', 'heads', 'main.lock'));
      assert.equal((await saveAndAcceptCurrentVersion(contextOf(history))).result, 'accepted');
    } finally {
      await history.close();
    }
  });

  for (const c of BLOCKERS) {
    it(`${c.blocker} (${c.how}): rejected without changes, never offered save; accepted once resolved outside`, async () => {
      const repo = makeRepo();
      const { history } = await openWithLatch(repo);
      try {
        c.make(repo);
        const before = repoPicture(repo);
        const assessment = await checkRepository(contextOf(history));
        assert.equal(assessment.kind, 'blocked', JSON.stringify(assessment));
        assert.equal(assessment.kind === 'blocked' && assessment.blocker, c.blocker);
        assert.match(assessment.kind === 'blocked' ? assessment.message : '', /then check again\.$/);
        const accept = await acceptCurrentVersion(contextOf(history));
        assert.deepEqual(accept, { result: 'rejected', assessment });
        await expectBlocked(saveAndAcceptCurrentVersion(contextOf(history)), c.blocker);
        assert.deepEqual(repoPicture(repo), before, 'nothing was repaired, continued, aborted or committed');
        assert.ok(await latchOf(history), 'recovery stays');

        c.resolve(repo);
        const again = await checkRepository(contextOf(history));
        assert.equal(again.kind, 'healthy', JSON.stringify(again));
        assert.equal((await acceptCurrentVersion(contextOf(history))).result, 'accepted');
        assert.equal(await latchOf(history), null);
      } finally {
        await history.close();
      }
    });
  }

  it('the rebase copy names the operation in plain words', async () => {
    const repo = makeRepo();
    const { history } = await openWithLatch(repo);
    try {
      BLOCKERS.find((b) => b.blocker === 'rebase')!.make(repo);
      const assessment = await checkRepository(contextOf(history));
      assert.deepEqual(assessment, {
        kind: 'blocked',
        blocker: 'rebase',
        message: 'A Git rebase is still in progress. Finish or cancel it outside VS Code, then check again.',
      });
    } finally {
      await history.close();
    }
  });

  it('unborn branch: rejected (no version to continue from) until a first commit exists', async () => {
    const repo = makeRepo({ commit: false });
    const { history } = await openWithLatch(repo);
    try {
      write(repo, 'first.txt', 'hello\n');
      const assessment = await checkRepository(contextOf(history));
      assert.equal(assessment.kind === 'blocked' && assessment.blocker, 'unborn');
      await expectBlocked(saveAndAcceptCurrentVersion(contextOf(history)), 'unborn');
      assert.equal(gitStatus(repo, 'rev-parse', '--verify', '-q', 'HEAD').code, 1, 'no commit was made');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'first');
      assert.equal((await acceptCurrentVersion(contextOf(history))).result, 'accepted');
    } finally {
      await history.close();
    }
  });

  it('missing repository: rejected without recreating anything; accepted once the folder is back', async () => {
    const repo = makeRepo();
    const { history } = await openWithLatch(repo);
    const away = `${repo}-moved`;
    try {
      fs.renameSync(repo, away);
      const assessment = await checkRepository(contextOf(history));
      assert.equal(assessment.kind === 'blocked' && assessment.blocker, 'missing');
      assert.equal((await acceptCurrentVersion(contextOf(history))).result, 'rejected');
      await expectBlocked(saveAndAcceptCurrentVersion(contextOf(history)), 'missing');
      assert.equal(fs.existsSync(repo), false, 'the missing folder was not recreated');
      fs.renameSync(away, repo);
      assert.equal((await acceptCurrentVersion(contextOf(history))).result, 'accepted');
    } finally {
      if (fs.existsSync(away)) fs.renameSync(away, repo);
      await history.close();
    }
  });

  it('a stale generation cannot clear a newer latch, and a repeated dispatch accepts once', async () => {
    const repo = makeRepo();
    const lines: string[] = [];
    const { history, generation: first } = await openWithLatch(repo, lines);
    try {
      const second = await contextOf(history).store.transaction((tx) =>
        setRecovery(tx, 'op-test-2', 'ambiguous', 'update-branch', Date.now()),
      );
      assert.ok(second > first);
      assert.deepEqual(await acceptCurrentVersion(contextOf(history), { generation: first }), {
        result: 'superseded',
        generation: second,
      });
      await expectSuperseded(saveAndAcceptCurrentVersion(contextOf(history), { generation: first }), second);
      assert.equal((await latchOf(history))?.generation, second, 'the newer latch stays');
      const results = await Promise.all([
        acceptCurrentVersion(contextOf(history), { generation: second }),
        acceptCurrentVersion(contextOf(history), { generation: second }),
      ]);
      assert.deepEqual(results.map((r) => r.result).sort(), ['accepted', 'not-required']);
      assert.equal(lines.filter((l) => l.startsWith('recovery.checkpoint-removed')).length, 1);
      assert.ok(lines.includes('recovery.checkpoint-removed operation=op-test-2 generation=2'), lines.join('\n'));
    } finally {
      await history.close();
    }
  });
});

async function expectSuperseded(promise: Promise<unknown>, generation: number): Promise<void> {
  assert.deepEqual(await promise, { result: 'superseded', generation });
}

describe('agent-versions recover (exit codes and JSON)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('check / accept / save-and-accept without a latch: not required, exit 0', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      const check = await runRecoverCommand(history, 'check', true);
      assert.equal(check.exitCode, 0);
      assert.deepEqual(check.json, {
        recovery: 'not-required',
        assessment: { kind: 'healthy', branch: 'main', head: head(repo) },
      });
      for (const sub of ['accept', 'save-and-accept']) {
        const r = await runRecoverCommand(history, sub, true);
        assert.equal(r.exitCode, 0);
        assert.deepEqual(r.json, { recovery: 'not-required', result: 'not-required' });
      }
    } finally {
      await history.close();
    }
  });

  it('dirty: check exits 3, accept exits 3 and keeps recovery, save-and-accept exits 0 with the saved commit', async () => {
    const repo = makeRepo();
    write(repo, 'work.txt', 'unsaved\n');
    const { history } = await openWithLatch(repo);
    try {
      const check = await runRecoverCommand(history, 'check', false);
      assert.equal(check.exitCode, 3);
      assert.match(check.text, /Your current changes need to be saved .*recover save-and-accept/);
      assert.deepEqual((check.json as { recovery: string; assessment: { kind: string } }).recovery, 'required');
      assert.deepEqual((check.json as { assessment: { kind: string } }).assessment.kind, 'dirty');
      const accept = await runRecoverCommand(history, 'accept', true);
      assert.equal(accept.exitCode, 3);
      assert.equal((accept.json as { result: string }).result, 'rejected');
      const save = await runRecoverCommand(history, 'save-and-accept', true);
      assert.equal(save.exitCode, 0);
      assert.deepEqual(save.json, {
        recovery: 'not-required',
        result: 'accepted',
        branch: 'main',
        head: head(repo),
        savedCommit: head(repo),
      });
      assert.match(
        save.text,
        /^Current changes saved — Your changes were saved as \[Recovery\] Saved current changes before continuing Version History/,
      );
    } finally {
      await history.close();
    }
  });

  it('blocked: every subcommand exits 3 with the blocker; clean: check exits 0, accept exits 0', async () => {
    const repo = makeRepo();
    const { history } = await openWithLatch(repo);
    try {
      git(repo, 'checkout', '-q', '--detach');
      for (const sub of ['check', 'accept', 'save-and-accept']) {
        const r = await runRecoverCommand(history, sub, true);
        assert.equal(r.exitCode, 3, sub);
        assert.equal((r.json as { recovery: string }).recovery, 'required');
        assert.equal((r.json as { assessment: { blocker: string } }).assessment.blocker, 'detached', sub);
      }
      git(repo, 'checkout', '-q', 'main');
      const check = await runRecoverCommand(history, 'check', false);
      assert.equal(check.exitCode, 0);
      assert.match(check.text, /recover accept/);
      assert.ok(await latchOf(history), 'check never clears recovery');
      const accept = await runRecoverCommand(history, 'accept', false);
      assert.equal(accept.exitCode, 0);
      assert.match(accept.text, /^Version History is ready — Continuing from the current code version/);
      await assert.rejects(runRecoverCommand(history, 'fix', false), /recover needs one of/);
    } finally {
      await history.close();
    }
  });

  it('the real CLI process: exit 3 while blocked, 0 once accepted', async () => {
    const repo = makeRepo();
    const seed = await VersionHistory.open(repo);
    await contextOf(seed).store.transaction((tx) =>
      setRecovery(tx, 'op-blocked', 'ambiguous', 'update-branch', Date.now()),
    );
    await seed.close();
    git(repo, 'checkout', '-q', '--detach');
    const blocked = runCliProcess(['--repo', repo, 'recover', 'accept']);
    assert.equal(blocked.code, 3);
    assert.match(blocked.stdout, /not on a branch .*then check again\./);
    git(repo, 'checkout', '-q', 'main');
    const ok = runCliProcess(['--repo', repo, 'recover', 'accept']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^Version History is ready — Continuing from the current code version/);
  });
});
