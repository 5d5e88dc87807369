import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedFacts } from '../../src/core/blame/attributionFacts';
import { attributeFile } from '../../src/core/blame/lineAttribution';
import { AvhError } from '../../src/core/errors';
import { gitLauncherReady, startGitLauncher, stopGitLauncher } from '../../src/core/git/gitLauncher';
import { resolveRepository } from '../../src/core/git/repository';
import { eventually } from '../support/eventually';
import { cleanupTempDirs, git, makeRepo, tempDir, write } from '../support/gitFixtures';
import { gitPidInTrace, killedWhileRunning, processRuns } from '../support/slowGit';

/**
 * The editor's attribution is cancelled when the editor changes (issue 26): an aborted git read rejects at once with
 * reason 'cancelled' and its git process is killed (git's own trace2 stream has no exit event for it), whether this
 * process spawned git or the launcher did.
 */
describe('cancelling a git read (the hover’s blame): rejected at once, the git process killed', function () {
  this.timeout(60_000);
  afterEach(() => {
    stopGitLauncher();
    cleanupTempDirs();
  });

  async function cancelSlowGit(repo: string): Promise<{ error: unknown; trace: string }> {
    const trace = path.join(tempDir('avh-trace-'), 'trace.json');
    const repository = await resolveRepository(repo);
    const abort = new AbortController();
    const running = repository.git
      .run(repo, ['-c', 'alias.slow=!sleep 3', 'slow'], { signal: abort.signal, env: { GIT_TRACE2_EVENT: trace } })
      .then(
        () => null,
        (error: unknown) => error,
      );
    // Aborted once git runs (its trace has begun), as when the user types while the blame runs.
    await eventually(
      'git to start',
      () => fs.existsSync(trace) && fs.readFileSync(trace, 'utf8').includes('"start"'),
      Boolean,
    );
    abort.abort();
    const error = await running;
    return { error, trace };
  }

  for (const via of ['spawned by this process', 'started by the launcher'] as const) {
    it(`git ${via}`, async () => {
      const repo = makeRepo();
      if (via === 'started by the launcher') {
        startGitLauncher();
        assert.equal(await gitLauncherReady(), true);
      }
      const { error, trace } = await cancelSlowGit(repo);
      assert.ok(error instanceof AvhError, String(error));
      assert.equal(error.reason, 'cancelled');
      // Rejected at once: git had not ended on its own (no exit event yet) when the promise rejected.
      assert.ok(killedWhileRunning(trace, 'slow'), 'rejected while git still ran');
      const pid = gitPidInTrace(trace, 'slow');
      assert.ok(pid !== null, 'the trace names the git process');
      // Killed: the process is gone, and git never wrote the exit event a finished git writes.
      await eventually(
        'the git process to be gone',
        () => processRuns(pid),
        (runs) => !runs,
      );
      assert.ok(killedWhileRunning(trace, 'slow'), 'ended by the kill, not on its own');
    });
  }

  it('an attribution asked with a signal already aborted runs no blame and says cancelled', async () => {
    const repo = makeRepo();
    write(repo, 'f.txt', 'one\ntwo\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'f');
    const abort = new AbortController();
    abort.abort();
    const error = await attributeFile({
      repo: await resolveRepository(repo),
      path: 'f.txt',
      facts: fixedFacts({ turns: [], operations: [] }),
      signal: abort.signal,
    }).catch((e: unknown) => e);
    assert.ok(error instanceof AvhError && error.reason === 'cancelled', String(error));
  });
});
