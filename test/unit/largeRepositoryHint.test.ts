/**
 * A repository above 100,000 files without git's untracked cache (issue 36): the hook says once, on stderr, which
 * setting would make its look at the working tree cheaper; doctor says it every time, and says ok once the user's
 * own `git status` has built the cache. Real git, the test build of dist/cli.js with the threshold lowered to 1,000
 * files (AVH_TEST_LARGE_REPOSITORY_ENTRIES: 100,000 files take minutes to write on this machine's /tmp).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cliJson, runCliProcess, TEST_BUILD_CLI } from '../support/cliProcess';
import { assertNothingLost, cleanupTempDirs, contentInventory, git, makeRepo } from '../support/gitFixtures';

interface DoctorJson {
  checks: { id: string; status: string; summary: string; fix?: string; facts: Record<string, unknown> }[];
}

const LOWERED = { AVH_TEST_LARGE_REPOSITORY_ENTRIES: '1000', COPILOT_CLI: '' };

/** 1,010 small files in 11 folders beside the two makeRepo commits, one commit. */
function largeRepository(): string {
  const repo = makeRepo();
  for (let d = 0; d <= 10; d++) {
    const dir = path.join(repo, 'pkg', String(d));
    fs.mkdirSync(dir, { recursive: true });
    for (let f = 0; f < (d === 10 ? 10 : 100); f++) fs.writeFileSync(path.join(dir, `f${f}.txt`), `${d}/${f}\n`);
  }
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'many files');
  return repo;
}

describe('a large repository without an untracked cache: the hook’s one line and doctor (issue 36)', function () {
  this.timeout(60_000);
  after(cleanupTempDirs);

  it('the hook prints the setting once (never on stdout), doctor warns until the cache exists, then says ok', () => {
    const repo = largeRepository();
    const before = contentInventory(repo);
    const event = (name: string) =>
      runCliProcess(['hook', 'claude-code'], {
        cwd: repo,
        input: JSON.stringify({ hook_event_name: name, session_id: 'big', cwd: repo, prompt: 'p' }),
        env: LOWERED,
        cli: TEST_BUILD_CLI,
      });
    const hinted: string[] = [];
    for (const name of ['UserPromptSubmit', 'Stop', 'UserPromptSubmit', 'Stop']) {
      const r = event(name);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /untrackedCache/, 'the agent’s context (stdout) never carries the hint');
      if (/untrackedCache/.test(r.stderr)) hinted.push(name);
    }
    assert.equal(hinted.length, 1, 'said once');
    const [line] = runCliProcess(['hook', 'claude-code'], {
      cwd: repo,
      input: JSON.stringify({ hook_event_name: 'Stop', session_id: 'big', cwd: repo }),
      env: LOWERED,
      cli: TEST_BUILD_CLI,
    }).stderr.split('\n');
    assert.equal(line, '', 'not again');
    assert.ok(fs.existsSync(path.join(repo, '.git', 'agent-versions', 'hint-large-repository')));

    const warned = cliJson<DoctorJson>(['doctor'], { cwd: repo, env: LOWERED, cli: TEST_BUILD_CLI }).checks.find(
      (c) => c.id === 'large-repository',
    );
    assert.equal(warned?.status, 'warning');
    assert.match(warned!.summary, /^1,012 files tracked, and git keeps no untracked cache here/);
    assert.match(warned!.summary, /450 → 250 ms/);
    assert.equal(
      warned!.fix,
      'git config core.untrackedCache true && git status (your own status builds the cache; Agent Version History only reads it).',
    );

    git(repo, 'config', 'core.untrackedCache', 'true');
    git(repo, 'status', '--porcelain');
    const fine = cliJson<DoctorJson>(['doctor'], { cwd: repo, env: LOWERED, cli: TEST_BUILD_CLI }).checks.find(
      (c) => c.id === 'large-repository',
    );
    assert.equal(fine?.status, 'ok');
    assert.deepEqual(fine?.facts, { entries: 1_012, untrackedCache: 'normal' });
    assertNothingLost(repo, before);
  });

  it('a repository below the line gets neither the line nor the doctor check', () => {
    const repo = makeRepo();
    fs.mkdirSync(path.join(repo, '.git', 'agent-versions'), { recursive: true });
    const r = runCliProcess(['hook', 'claude-code'], {
      cwd: repo,
      input: JSON.stringify({ hook_event_name: 'UserPromptSubmit', session_id: 's', cwd: repo, prompt: 'p' }),
      env: LOWERED,
      cli: TEST_BUILD_CLI,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const checks = cliJson<DoctorJson>(['doctor'], { cwd: repo, env: LOWERED, cli: TEST_BUILD_CLI }).checks.map(
      (c) => c.id,
    );
    assert.ok(!checks.includes('large-repository'));
  });
});

describe('one look at the working tree per event (issue 36)', () => {
  after(cleanupTempDirs);

  /** The git commands one hook event ran (git's own trace2 event stream), by subcommand. */
  function gitCommandsOf(repo: string, payload: object): string[] {
    const trace = path.join(repo, '..', `trace-${Date.now()}.json`);
    const r = runCliProcess(['hook', 'claude-code'], {
      cwd: repo,
      input: JSON.stringify(payload),
      env: { GIT_TRACE2_EVENT: trace, COPILOT_CLI: '' },
    });
    assert.equal(r.code, 0, r.stderr);
    const starts = fs
      .readFileSync(trace, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"event":"start"'))
      .map((l) =>
        (JSON.parse(l) as { argv: string[] }).argv.slice(1).filter((a, i, all) => a !== '-c' && all[i - 1] !== '-c'),
      );
    fs.rmSync(trace);
    return starts.map((argv) => argv[0]);
  }

  it('a new chat’s first prompt (the fast path declines) runs one status: the full path takes the entry’s', () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    fs.writeFileSync(path.join(repo, 'README.md'), 'edited before the chat\n');
    const first = gitCommandsOf(repo, { hook_event_name: 'UserPromptSubmit', session_id: 'a', cwd: repo, prompt: 'p' });
    // (the very first event also initialises the state: more git, but still one status)
    assert.equal(first.filter((c) => c === 'status').length, 1, first.join(' '));
    gitCommandsOf(repo, { hook_event_name: 'Stop', session_id: 'a', cwd: repo });
    const next = gitCommandsOf(repo, { hook_event_name: 'UserPromptSubmit', session_id: 'b', cwd: repo, prompt: 'p' });
    assert.equal(next.filter((c) => c === 'status').length, 1, next.join(' '));
    assertNothingLost(repo, before);
  });
});
