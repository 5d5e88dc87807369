/**
 * The hook fast path killed (SIGKILL, a real process) while it appends its one journal record, through the shipped
 * command's test build (dist/test-extension/dist/cli.js: the same bundles, failpoints live): half a record on disk is
 * a torn tail every process cuts off as never acknowledged; a whole record is the event, applied everywhere. The
 * store opens either way, the next event is recorded, and no file content is lost.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VersionHistory } from '../../src/core/versionHistory';
import { CLI, TEST_BUILD_CLI } from '../support/cliProcess';
import { getTurn } from '../../src/core/turns/turnRecords';
import { contextOf } from '../../src/core/repoContextOf';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  tempDir,
  testGitEnv,
  write,
} from '../support/gitFixtures';

function hook(
  repo: string,
  payload: Record<string, unknown>,
  failpoint?: string,
  extraEnv: NodeJS.ProcessEnv = {},
): { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string } {
  const env = { ...testGitEnv(), ...(failpoint ? { AVH_FAILPOINT: failpoint } : {}), ...extraEnv };
  // The shipped command; the test build's when a failpoint must fire (the shipped one ignores it).
  return spawnSync(process.execPath, [failpoint ? TEST_BUILD_CLI : CLI, 'hook', 'claude-code', '--json'], {
    cwd: repo,
    input: JSON.stringify({ cwd: repo, ...payload }),
    encoding: 'utf8',
    env,
    timeout: 60_000,
  });
}

const begin = { hook_event_name: 'UserPromptSubmit', session_id: 'chat-1', prompt: 'p' };
const stop = { hook_event_name: 'Stop', session_id: 'chat-1' };

async function turns(repo: string): Promise<{ total: number; running: string[] }> {
  const history = await VersionHistory.open(repo);
  try {
    const status = await history.status();
    return { total: status.counts.turns, running: status.runningTurns.map((t) => t.turnId) };
  } finally {
    await history.close();
  }
}

describe('hook fast path under SIGKILL during its journal append', function () {
  this.timeout(120_000);
  after(cleanupTempDirs);

  /** A repository whose chat is known and whose facts are current, so the next begin takes the fast path. */
  function readyRepo(): string {
    const repo = makeRepo();
    for (const payload of [begin, stop]) assert.equal(hook(repo, payload).status, 0);
    return repo;
  }

  it('half a record written: the event is not recorded, the tail is cut, the next event is recorded', async () => {
    const repo = readyRepo();
    const before = contentInventory(repo);
    const journal = path.join(repo, '.git', 'agent-versions', 'state.journal');
    const size = fs.statSync(journal).size;
    const killed = hook(repo, begin, 'hook-fast:torn-append');
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    assert.ok(fs.statSync(journal).size > size, 'the torn half reached the file');
    assert.deepEqual(await turns(repo), { total: 1, running: [] });
    assert.equal(fs.statSync(journal).size, size, 'the torn tail was cut off');
    const next = hook(repo, begin);
    assert.equal(next.status, 0, next.stderr);
    const { turnId } = JSON.parse(next.stdout) as { turnId: string };
    assert.deepEqual(await turns(repo), { total: 2, running: [turnId] });
    assertNothingLost(repo, before);
  });

  it('killed after the whole record was fsynced: the turn is recorded, and the next event (facts now stale) ends it', async () => {
    const repo = readyRepo();
    const before = contentInventory(repo);
    const killed = hook(repo, begin, 'hook-fast:after-append');
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const after = await turns(repo);
    assert.equal(after.total, 2);
    assert.equal(after.running.length, 1);
    const ended = hook(repo, stop);
    assert.equal(ended.status, 0, ended.stderr);
    assert.equal((JSON.parse(ended.stdout) as { turnId: string }).turnId, after.running[0]);
    assert.deepEqual(await turns(repo), { total: 2, running: [] });
    assertNothingLost(repo, before);
  });
});

describe('hook fast path under SIGKILL while a Stop makes its version (write-ahead: outcome, commit, version record)', function () {
  this.timeout(120_000);
  after(cleanupTempDirs);

  for (const point of ['turn-end:after-outcome', 'turn-commit:after-commit', 'turn-commit:after-update-ref']) {
    it(`killed at ${point} on the fast path: the next process settles the turn as the full path's crash there would`, async () => {
      const repo = makeRepo();
      for (const payload of [begin, stop, begin]) assert.equal(hook(repo, payload).status, 0);
      const start = head(repo);
      write(repo, 'work.txt', 'agent work\n');
      const before = contentInventory(repo);
      const log = path.join(tempDir('avh-hooklog-'), 'path.log');
      const killed = hook(repo, stop, point, { AVH_HOOK_PATH_LOG: log });
      assert.equal(killed.signal, 'SIGKILL', `${point}: ${killed.stderr}`);
      // Killed inside the fast path: it never declined to the full path (which would have logged first).
      assert.equal(fs.existsSync(log), false, fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '');
      const history = await VersionHistory.open(repo);
      try {
        const running = (await history.status()).runningTurns;
        assert.deepEqual(running, []);
        const turn = await contextOf(history).store.read((r) =>
          r.get<{ id: string }>('SELECT id FROM turns ORDER BY seq DESC LIMIT 1'),
        );
        const row = await contextOf(history).store.read((r) => getTurn(r, turn!.id));
        assert.equal(row?.terminal_outcome, 'completed');
        if (point === 'turn-commit:after-update-ref') {
          assert.equal(row?.version_commit, head(repo), 'the commit that landed is recorded');
          assert.equal(row?.no_version_reason, null);
          assert.equal(git(repo, 'status', '--porcelain'), '', 'the index followed the branch (repaired)');
        } else {
          assert.equal(head(repo), start);
          assert.equal(row?.version_commit, null);
          assert.equal(row?.no_version_reason, 'interrupted');
        }
      } finally {
        await history.close();
      }
      assertNothingLost(repo, before);
      // The next turn is recorded as usual.
      assert.equal(hook(repo, begin).status, 0);
    });
  }
});
