import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRecovery, setRecovery } from '../../src/core/operations/recoveryLatch';
import { RECOVERY_SUBJECT } from '../../src/core/domain/promptSummary';
import { VersionHistory } from '../../src/core/versionHistory';
import { runCliProcess, TEST_BUILD_CLI } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  subjectOf,
  testGitEnv,
  write,
} from '../support/gitFixtures';
import { contextOf } from '../../src/core/repoContextOf';

describe('guided recovery under SIGKILL (real CLI processes)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  it('killed after the [Recovery] commit but before settlement: a new process still requires recovery, then accept succeeds', async () => {
    const repo = makeRepo();
    const oldHead = head(repo);
    write(repo, 'work.txt', 'unsaved work\n');
    write(repo, 'assets/logo.bin', Buffer.from([137, 80, 78, 71, 0, 1, 2, 3]));
    const inventory = contentInventory(repo);
    const seed = await VersionHistory.open(repo);
    await contextOf(seed).store.transaction((tx) =>
      setRecovery(tx, 'op-crashed', 'ambiguous', 'update-worktree', Date.now()),
    );
    await seed.close();

    // The child is the real CLI; the failpoint kills it right after the commit, the branch move and the index install.
    const killed = spawnSync(
      process.execPath,
      [TEST_BUILD_CLI, '--repo', repo, 'recover', 'save-and-accept', '--json'],
      {
        encoding: 'utf8',
        env: { ...testGitEnv(), AVH_FAILPOINT: 'recovery:after-commit' },
        timeout: 60_000,
      },
    );
    assert.equal(
      killed.signal,
      'SIGKILL',
      `the CLI died at the failpoint (status ${killed.status}, stderr ${killed.stderr})`,
    );
    assert.equal(subjectOf(repo), RECOVERY_SUBJECT, 'the [Recovery] commit was made before the crash');
    assert.equal(git(repo, 'rev-parse', 'HEAD^').trim(), oldHead);
    assert.ok(
      fs.existsSync(path.join(repo, '.git', 'agent-versions', 'repository.lease')),
      'the dead process left its lease behind',
    );

    // Restart: recovery is still required (the transient saving state was never persisted) and the repository is clean.
    const check = runCliProcess(['--repo', repo, 'recover', 'check', '--json']);
    assert.equal(check.code, 0, check.stderr);
    const checked = JSON.parse(check.stdout) as { recovery: string; assessment: { kind: string; head: string } };
    assert.equal(checked.recovery, 'required');
    assert.equal(checked.assessment.kind, 'healthy');
    assert.equal(checked.assessment.head, head(repo));
    const status = runCliProcess(['--repo', repo, 'status', '--json']);
    assert.ok((JSON.parse(status.stdout) as { recovery: unknown }).recovery, 'status reports recovery too');

    const accept = runCliProcess(['--repo', repo, 'recover', 'accept', '--json']);
    assert.equal(accept.code, 0, accept.stderr);
    assert.deepEqual(JSON.parse(accept.stdout), {
      recovery: 'not-required',
      result: 'accepted',
      branch: 'main',
      head: head(repo),
    });
    const after = await VersionHistory.open(repo);
    try {
      assert.equal(await contextOf(after).store.read((r) => readRecovery(r)), null);
    } finally {
      await after.close();
    }
    assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all').trim(), '');
    assertNothingLost(repo, inventory);
  });
});
