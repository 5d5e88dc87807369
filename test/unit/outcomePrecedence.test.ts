/**
 * Outcome precedence (issue 23 #6): Claude Code sends StopFailure (errored) and SessionEnd (cancelled) for the same
 * failed turn within milliseconds, in either order. The outcome is `errored` whichever arrives first: an error is
 * never overwritten by a later cancel, and a cancel recorded first gives way to the error right after it, while
 * nothing else happened to the turn. The pure rule; the ledger through the façade; and the hook through the shipped
 * bundle (dist/cli.js) and the tsc entry with its path log, so the fast path and the full path are seen to agree.
 */
import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { contextOf } from '../../src/core/repoContextOf';
import { mayReEnd, reEnds } from '../../src/core/turns/turnDecisions';
import { getTurn, type TurnRow } from '../../src/core/turns/turnRecords';
import { VersionHistory } from '../../src/core/versionHistory';
import { expectReason } from '../support/assertions';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  makeRepo,
  tempDir,
  testGitEnv,
  write,
} from '../support/gitFixtures';
import { DIST_CLI } from '../support/turnFixtures';

const ENTRY = path.resolve(__dirname, '../../src/cli/entry.js');
const SESSION = '6a1d8f5e-0c2b-4d7a-9e31-5b8c2f4a7d90';
const PROMPT = { hook_event_name: 'UserPromptSubmit', session_id: SESSION, prompt: 'call the API' };
const STOP_FAILURE = { hook_event_name: 'StopFailure', session_id: SESSION, error: 'server_error' };
const SESSION_END = { hook_event_name: 'SessionEnd', session_id: SESSION, reason: 'other' };

interface HookRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The path the event took (tsc entry only): 'fast engines=N' or 'declined:<reason>'. */
  path?: string;
}

let logs = 0;
/** One hook event as Claude Code runs it: `hook claude-code --json`, the payload on stdin, in the project folder. */
function hook(repo: string, payload: object, entry: 'dist' | 'tsc', env: NodeJS.ProcessEnv = {}): HookRun {
  const log = path.join(tempDir('avh-hooklog-'), `path-${logs++}.log`);
  const r = spawnSync(process.execPath, [entry === 'dist' ? DIST_CLI : ENTRY, 'hook', 'claude-code', '--json'], {
    cwd: repo,
    input: JSON.stringify({ cwd: repo, ...payload }),
    encoding: 'utf8',
    env: { ...testGitEnv(), AVH_HOOK_PATH_LOG: log, ...env },
    timeout: 60_000,
  });
  const logged = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim() : undefined;
  assert.equal(r.status, 0, r.stderr);
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, ...(logged ? { path: logged } : {}) };
}

/** Both events started at once, as Claude Code runs its hooks: the order they record in is up to the machine. */
function race(repo: string, payloads: object[]): Promise<void> {
  return Promise.all(
    payloads.map(
      (payload) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn(process.execPath, [DIST_CLI, 'hook', 'claude-code'], {
            cwd: repo,
            env: testGitEnv(),
            stdio: ['pipe', 'ignore', 'pipe'],
          });
          let stderr = '';
          child.stderr.on('data', (d: Buffer) => (stderr += d));
          child.once('error', reject);
          child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`hook exited ${code}: ${stderr}`))));
          child.stdin.end(JSON.stringify({ cwd: repo, ...payload }));
        }),
    ),
  ).then(() => undefined);
}

async function onlyTurn(repo: string): Promise<TurnRow> {
  const history = await VersionHistory.open(repo);
  try {
    const rows = await contextOf(history).store.read((r) => r.all<TurnRow>('SELECT * FROM turns'));
    assert.equal(rows.length, 1);
    return rows[0];
  } finally {
    await history.close();
  }
}

describe('outcome precedence: errored wins over cancelled in either order (StopFailure / SessionEnd)', function () {
  this.timeout(180_000);
  afterEach(cleanupTempDirs);

  it('the rule: only errored re-ends, only over cancelled, only while the turn is its chat’s latest and nothing acted on it', () => {
    const latest = { outcome: 'cancelled' as const, latestOfChat: true, actedOnSince: false };
    assert.equal(reEnds('errored', latest), true);
    assert.equal(reEnds('cancelled', { ...latest, outcome: 'errored' }), false, 'never downgraded');
    assert.equal(reEnds('errored', { ...latest, outcome: 'completed' }), false, 'a completed turn is never touched');
    assert.equal(reEnds('errored', { ...latest, outcome: 'errored' }), false);
    assert.equal(reEnds('completed', latest), false);
    assert.equal(reEnds('errored', { ...latest, latestOfChat: false }), false, 'a later prompt began');
    assert.equal(reEnds('errored', { ...latest, actedOnSince: true }), false, 'an Undo named it');
    assert.equal(reEnds('errored', null), false);
    assert.deepEqual((['completed', 'cancelled', 'errored'] as const).map(mayReEnd), [false, false, true]);
  });

  it('the ledger (façade): errored then cancelled stays errored; cancelled then errored becomes errored, keeping what the cancel recorded', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    const row = (id: string) => contextOf(history).store.read((r) => getTurn(r, id)!);
    try {
      const before = contentInventory(repo);
      const a = await history.beginTurn({ chatId: 'a', prompt: 'p' });
      write(repo, 'partial.txt', 'partial\n');
      await history.endTurn(a.turnId, 'errored');
      await expectReason(history.endTurn(a.turnId, 'cancelled'), 'turn-already-ended');
      assert.equal((await row(a.turnId)).terminal_outcome, 'errored');

      const b = await history.beginTurn({ chatId: 'b', prompt: 'p' });
      await history.endTurn(b.turnId, 'cancelled');
      const cancelled = await row(b.turnId);
      const reEnded = await history.endTurn(b.turnId, 'errored');
      assert.deepEqual([reEnded.outcome, reEnded.version], ['errored', null]);
      const errored = await row(b.turnId);
      assert.deepEqual(
        { ...errored, terminal_outcome: 'cancelled' },
        cancelled,
        'only the outcome changed (its end time, what it changed)',
      );
      await expectReason(history.endTurn(b.turnId, 'cancelled'), 'turn-already-ended');
      await expectReason(history.endTurn(b.turnId, 'errored'), 'turn-already-ended');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('the ledger (façade): a cancel is not re-ended after the chat’s next prompt, after an Undo took it back, or when it completed', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    const outcome = async (id: string) =>
      (await contextOf(history).store.read((r) => getTurn(r, id)!)).terminal_outcome;
    try {
      const before = contentInventory(repo);
      const first = await history.beginTurn({ chatId: 'c', prompt: 'p1' });
      await history.endTurn(first.turnId, 'cancelled');
      const next = await history.beginTurn({ chatId: 'c', prompt: 'p2' });
      await expectReason(history.endTurn(first.turnId, 'errored'), 'turn-already-ended');
      assert.equal(await outcome(first.turnId), 'cancelled');
      assert.equal(await history.reEndLatestTurnOfChat('c', 'errored'), null, 'the latest turn is running');

      write(repo, 'x.txt', 'x\n');
      await history.undo(next.turnId); // Undo of the running turn ends it cancelled, then takes it back
      assert.equal(await outcome(next.turnId), 'cancelled');
      await expectReason(history.endTurn(next.turnId, 'errored'), 'turn-already-ended');
      assert.equal(await history.reEndLatestTurnOfChat('c', 'errored'), null);

      const done = await history.beginTurn({ chatId: 'd', prompt: 'p3' });
      await history.endTurn(done.turnId, 'completed');
      assert.equal(await history.reEndLatestTurnOfChat('d', 'errored'), null);
      assert.equal(await outcome(done.turnId), 'completed');
      for (const o of ['completed', 'cancelled'] as const)
        assert.equal(await history.reEndLatestTurnOfChat('d', o), null);
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  for (const order of [
    ['StopFailure', 'SessionEnd'],
    ['SessionEnd', 'StopFailure'],
  ] as const) {
    it(`hook (dist/cli.js and the tsc entry, fast and full path): ${order.join(' then ')} → errored, the partial work kept`, async () => {
      for (const [entry, fast] of [
        ['dist', true],
        ['tsc', true],
        ['tsc', false],
      ] as const) {
        const repo = makeRepo();
        const before = contentInventory(repo);
        const env = fast ? {} : { AVH_HOOK_FAST: 'off' };
        assert.equal(JSON.parse(hook(repo, PROMPT, entry, env).stdout).action, 'began');
        write(repo, 'partial.ts', 'half an answer\n');
        const runs = order.map((name) => hook(repo, name === 'StopFailure' ? STOP_FAILURE : SESSION_END, entry, env));
        const [firstEnd, secondEnd] = runs.map((r) => JSON.parse(r.stdout) as { action: string; outcome?: string });
        const what = `${entry}${fast ? '' : ' (full path)'}`;
        assert.deepEqual(firstEnd.action, 'ended', what);
        const turn = await onlyTurn(repo);
        assert.equal(turn.terminal_outcome, 'errored', what);
        assert.equal(turn.no_version_reason, 'not-completed', `${what}: its partial work is recorded as such`);
        if (order[0] === 'SessionEnd') {
          assert.deepEqual([secondEnd.action, secondEnd.outcome], ['ended', 'errored'], what);
          // The fast path recorded the cancel and left the error to the full path, which re-ended the turn.
          if (entry === 'tsc' && fast)
            assert.deepEqual([runs[0].path, runs[1].path], ['fast engines=0', 'declined:ended-turn']);
        } else {
          assert.equal(secondEnd.action, 'ignored', `${what}: a cancel after the error changes nothing`);
        }
        assert.equal(fs.readFileSync(path.join(repo, 'partial.ts'), 'utf8'), 'half an answer\n');
        assertNothingLost(repo, before);
      }
    });
  }

  it('a cancel records whether the turn changed anything, the same on the fast path and the full path (clean start, and the user’s uncommitted edit)', async () => {
    for (const dirty of [false, true]) {
      for (const edits of [false, true]) {
        const reasons: (string | null)[] = [];
        for (const fast of [true, false]) {
          const repo = makeRepo();
          if (dirty) write(repo, 'README.md', '# demo\nthe user is editing this\n');
          const env = fast ? {} : { AVH_HOOK_FAST: 'off' };
          hook(repo, PROMPT, 'tsc', env);
          if (edits) write(repo, 'partial.ts', 'half\n');
          const ended = hook(repo, SESSION_END, 'tsc', env);
          if (fast) assert.equal(ended.path, 'fast engines=0', 'the cancel took the fast path');
          reasons.push((await onlyTurn(repo)).no_version_reason);
        }
        const expected = edits ? 'not-completed' : 'no-changes';
        assert.deepEqual(reasons, [expected, expected], `dirty start: ${dirty}, edits: ${edits}`);
      }
    }
  });

  it('hook (dist/cli.js): StopFailure and SessionEnd started at the same moment, five times → errored every time', async () => {
    for (let i = 0; i < 5; i++) {
      const repo = makeRepo();
      hook(repo, PROMPT, 'dist');
      write(repo, 'partial.ts', `attempt ${i}\n`);
      await race(repo, i % 2 ? [STOP_FAILURE, SESSION_END] : [SESSION_END, STOP_FAILURE]);
      assert.equal((await onlyTurn(repo)).terminal_outcome, 'errored', `run ${i}`);
    }
  });
});
