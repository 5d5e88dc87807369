// The demo agent (scripts/demoAgent.mjs) as a real process driving the real compiled CLI in real git
// repositories: a full turn completes as one [Agent] commit; --cancel-after and SIGINT are a Stop (the turn
// ends cancelled, partial changes stay in the tree, and Undo saves them as [Interrupted]); bad input changes nothing.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { VersionHistory } from '../../src/core/versionHistory';
import { repoPicture } from '../support/assertions';
import { CLI, cliJson } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  read,
  subjectOf,
  testGitEnv,
} from '../support/gitFixtures';
import { contextOf } from '../../src/core/repoContextOf';

const SCRIPT = path.resolve(__dirname, '../../../scripts/demoAgent.mjs');

function demoAgent(repo: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [SCRIPT, '--repo', repo, '--cli', CLI, ...args], {
    encoding: 'utf8',
    env: testGitEnv(),
    timeout: 150_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

async function turnOutcomes(repo: string): Promise<(string | null)[]> {
  const history = await VersionHistory.open(repo);
  try {
    return await contextOf(history).store.read((r) =>
      r
        .all<{ terminal_outcome: string | null }>('SELECT terminal_outcome FROM turns ORDER BY created_at')
        .map((t) => t.terminal_outcome),
    );
  } finally {
    await history.close();
  }
}

function porcelain(repo: string): string[] {
  return git(repo, 'status', '--porcelain', '--untracked-files=all').split('\n').filter(Boolean).sort();
}

describe('demo agent (scripts/demoAgent.mjs through the real CLI)', function () {
  // Each step is a separate CLI process; on a loaded 2-core machine one can take seconds.
  this.timeout(180_000);
  afterEach(cleanupTempDirs);

  it('a turn that runs to the end becomes one [Agent] commit with all its edits', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const r = demoAgent(repo, '--step-ms', '0');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /completed: version [0-9a-f]{10}/);
    assert.equal(subjectOf(repo), '[Agent] Add a greeter module with a test');
    assert.deepEqual(git(repo, 'show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort(), [
      'greeter/README.md',
      'greeter/greeting.js',
      'greeter/greeting.test.js',
    ]);
    assert.deepEqual(porcelain(repo), []);
    assert.deepEqual(await turnOutcomes(repo), ['completed']);
    assertNothingLost(repo, before);
  });

  it('--cancel-after is a Stop: the turn ends cancelled, its partial changes stay, Undo saves them as [Interrupted], Redo brings them back', async () => {
    const repo = makeRepo();
    assert.equal(demoAgent(repo, '--step-ms', '0').code, 0);
    const completedHead = head(repo);
    const before = contentInventory(repo);
    // The second task's first edit happens at once; the next one waits 10 s, long after the 200 ms Stop.
    const r = demoAgent(repo, '--cancel-after', '200', '--step-ms', '10000');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /stopped after 1 of 3 edits/);
    assert.equal(head(repo), completedHead, 'a cancelled turn makes no commit');
    assert.deepEqual(porcelain(repo), ['?? greeter/languages.js']);
    assert.match(read(repo, 'greeter/languages.js'), /Bonjour/);
    assert.deepEqual(await turnOutcomes(repo), ['completed', 'cancelled']);
    const status = cliJson<{ counts: { turns: number; runningTurns: number } }>(['status'], { cwd: repo });
    assert.deepEqual(status.counts, { turns: 2, runningTurns: 0 });

    // What the demo is for: Undo Agent Turn keeps the partial work as [Interrupted], then restores the base.
    const partial = contentInventory(repo);
    const partialLanguages = read(repo, 'greeter/languages.js');
    const undo = cliJson<{ result: string; preserved?: string }>(['undo'], { cwd: repo });
    assert.equal(undo.result, 'restored');
    assert.ok(undo.preserved, 'the partial changes were saved');
    assert.match(subjectOf(repo, undo.preserved), /^\[Interrupted\]/);
    assert.equal(git(repo, 'show', `${undo.preserved}:greeter/languages.js`), partialLanguages);
    assert.deepEqual(porcelain(repo), []);
    assert.equal(
      git(repo, 'rev-parse', 'HEAD^{tree}').trim(),
      git(repo, 'rev-parse', `${completedHead}^{tree}`).trim(),
    );
    // Redo brings back the tree the Undo replaced, partial changes included.
    assert.equal(cliJson<{ result: string }>(['redo'], { cwd: repo }).result, 'restored');
    assert.equal(
      git(repo, 'rev-parse', 'HEAD^{tree}').trim(),
      git(repo, 'rev-parse', `${undo.preserved}^{tree}`).trim(),
    );
    assert.equal(read(repo, 'greeter/languages.js'), partialLanguages);
    assertNothingLost(repo, before);
    assertNothingLost(repo, partial);
  });

  it('Ctrl+C (SIGINT) is a Stop: the turn ends cancelled with the edits made so far', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const child = spawn(process.execPath, [SCRIPT, '--repo', repo, '--cli', CLI, '--step-ms', '10000'], {
      env: testGitEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d;
        if (stdout.includes('created greeter/greeting.js')) resolve();
      });
      child.once('exit', () => reject(new Error(`demo agent exited before its first edit:\n${stdout}${stderr}`)));
    });
    child.kill('SIGINT');
    assert.equal(await exited, 0, stderr);
    assert.match(stdout, /SIGINT: stopping the turn/);
    assert.match(stdout, /stopped after 1 of 3 edits/);
    assert.equal(subjectOf(repo), 'initial');
    assert.deepEqual(porcelain(repo), ['?? greeter/greeting.js']);
    assert.deepEqual(await turnOutcomes(repo), ['cancelled']);
    assertNothingLost(repo, before);
  });

  it('bad input gets a specific message and changes nothing', () => {
    const repo = makeRepo();
    const picture = repoPicture(repo);
    const r = demoAgent(repo, '--cancel-after', 'soon');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--cancel-after must be a whole number of milliseconds, got "soon"/);
    const missing = demoAgent(path.join(repo, 'no-such-folder'));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no-such-folder is not a folder/);
    assert.deepEqual(repoPicture(repo), picture);
  });
});
