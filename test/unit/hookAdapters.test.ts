/**
 * Hook adapters end to end: each agent's payload fixtures (test/fixtures/hooks/) fed through the production CLI
 * bundle (dist/cli.js, built by `npm run build`) as real processes, in real git repositories, read back through
 * the real store. Every output of every run is searched for the canary prompt.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VersionHistory } from '../../src/core/versionHistory';
import { repoPicture } from '../support/assertions';
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
  write,
} from '../support/gitFixtures';

const ROOT = path.resolve(__dirname, '../../..');
const DIST_CLI = path.join(ROOT, 'dist/cli.js');
const FIXTURES = path.join(ROOT, 'test/fixtures/hooks');
const CANARY = 'CANARY-7f3a9c-the prompt must never be printed';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Everything every hook process printed in this file, for the canary check. */
const printed: string[] = [];

function hook(args: string[], input: string, cwd: string): Run {
  const r = spawnSync(process.execPath, [DIST_CLI, 'hook', ...args], {
    cwd,
    input,
    encoding: 'utf8',
    env: testGitEnv(),
    timeout: 60_000,
  });
  printed.push(r.stdout, r.stderr);
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A fixture with `cwd` pointed at the test repository and every prompt replaced by the canary. */
function fixture(name: string, repo: string, overrides: Record<string, unknown> = {}): string {
  const payload = JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as Record<string, unknown>;
  payload.cwd = repo;
  if ('prompt' in payload) payload.prompt = CANARY;
  if ('input-messages' in payload) payload['input-messages'] = [CANARY];
  return JSON.stringify({ ...payload, ...overrides });
}

interface HookJson {
  agent: string;
  event: string;
  action: 'began' | 'ended' | 'ignored';
  turnId?: string;
  outcome?: string;
  version?: string | null;
  cancelled?: string[];
}

/** Runs one event with --json (a hook prints nothing without it) from an unrelated folder, as agents do. */
function event(agent: string, name: string, repo: string, overrides: Record<string, unknown> = {}): HookJson {
  const r = hook([agent, '--json'], fixture(name, repo, overrides), path.dirname(repo));
  assert.equal(r.code, 0, `hook ${agent} ${name}: ${r.stderr}`);
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout) as HookJson;
}

async function running(repo: string): Promise<{ chatId: string; agent: string | null; turnId: string }[]> {
  const history = await VersionHistory.open(repo);
  try {
    return (await history.status()).runningTurns.map((t) => ({ chatId: t.chatId, agent: t.agent, turnId: t.turnId }));
  } finally {
    await history.close();
  }
}

async function turnCount(repo: string): Promise<number> {
  if (!fs.existsSync(path.join(repo, '.git', 'agent-versions'))) return 0;
  const history = await VersionHistory.open(repo);
  try {
    return (await history.status()).counts.turns;
  } finally {
    await history.close();
  }
}

const CLAUDE_SESSION = '2f7c5e0a-8a4b-4d8e-9a61-3c1b9e2d7f10';
const CODEX_THREAD = '019d036d-c7fa-72d2-b6fd-78878bfe34e4';

describe('hook adapters: recorded payloads of Claude Code, VS Code (Copilot) and Codex through the real CLI bundle', function () {
  this.timeout(120_000);
  before(() => assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first'));
  afterEach(cleanupTempDirs);
  after(() => {
    const all = printed.join('\n');
    assert.ok(printed.length > 0);
    assert.ok(!all.includes(CANARY) && !all.includes('CANARY-7f3a9c'), "the prompt reached a hook process's output");
  });

  it('Claude Code: UserPromptSubmit begins a claude-code turn, Stop makes one [Agent] version; nothing lost', async () => {
    const repo = makeRepo();
    write(repo, 'notes.txt', "the user's own edit\n");
    const before = contentInventory(repo);
    const begun = event('claude-code', 'claude-code/UserPromptSubmit.json', repo);
    assert.equal(begun.action, 'began');
    assert.deepEqual(await running(repo), [{ chatId: CLAUDE_SESSION, agent: 'claude-code', turnId: begun.turnId! }]);
    write(repo, 'health.ts', 'export const ok = true;\n');
    const ended = event('claude-code', 'claude-code/Stop.json', repo);
    assert.deepEqual(
      { ...ended, version: typeof ended.version },
      {
        agent: 'claude-code',
        event: 'Stop',
        action: 'ended',
        turnId: begun.turnId,
        outcome: 'completed',
        version: 'string',
        cancelled: [],
      },
    );
    assert.equal(head(repo), ended.version);
    assert.match(
      git(repo, 'log', '-1', '--format=%B'),
      new RegExp(`Agent-Turn: ${begun.turnId}\\nAgent-Chat: ${CLAUDE_SESSION}\\n`),
    );
    assert.equal(read(repo, 'health.ts'), 'export const ok = true;\n');
    assertNothingLost(repo, before);
    // A second Stop (no running turn) is acknowledged and changes nothing.
    const picture = repoPicture(repo);
    assert.equal(event('claude-code', 'claude-code/Stop.json', repo).action, 'ignored');
    assert.deepEqual(repoPicture(repo), picture);
  });

  it('Claude Code: StopFailure ends errored and SessionEnd cancelled, no version; the changes stay in the tree', async () => {
    const repo = makeRepo();
    const start = head(repo);
    event('claude-code', 'claude-code/UserPromptSubmit.json', repo);
    write(repo, 'half.ts', 'half done\n');
    const failed = event('claude-code', 'claude-code/StopFailure.json', repo);
    assert.deepEqual([failed.action, failed.outcome, failed.version], ['ended', 'errored', null]);
    event('claude-code', 'claude-code/UserPromptSubmit.json', repo);
    const closed = event('claude-code', 'claude-code/SessionEnd.json', repo);
    assert.deepEqual([closed.action, closed.outcome, closed.version], ['ended', 'cancelled', null]);
    assert.equal(head(repo), start);
    assert.equal(read(repo, 'half.ts'), 'half done\n');
    assert.equal(await turnCount(repo), 2);
  });

  it('Claude Code: an event it does not act on (PreToolUse) exits 0, opens nothing and records nothing', async () => {
    const repo = makeRepo();
    const picture = repoPicture(repo);
    const r = event('claude-code', 'claude-code/PreToolUse.json', repo);
    assert.deepEqual(r, { agent: 'claude-code', event: 'PreToolUse', action: 'ignored' });
    assert.ok(!fs.existsSync(path.join(repo, '.git', 'agent-versions')), 'no state was created');
    assert.deepEqual(repoPicture(repo), picture);
  });

  it('VS Code agent hooks through the same claude-code snippet: recorded as copilot, in a chat of its own', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    assert.equal(event('claude-code', 'vscode/SessionStart.json', repo).action, 'ignored');
    const begun = event('claude-code', 'vscode/UserPromptSubmit.json', repo);
    assert.deepEqual([begun.agent, begun.event, begun.action], ['copilot', 'UserPromptSubmit', 'began']);
    assert.deepEqual(await running(repo), [
      { chatId: `copilot:${CLAUDE_SESSION}`, agent: 'copilot', turnId: begun.turnId! },
    ]);
    write(repo, 'src/health.ts', 'export {};\n');
    const ended = event('claude-code', 'vscode/Stop.json', repo);
    assert.deepEqual([ended.agent, ended.action, ended.outcome], ['copilot', 'ended', 'completed']);
    assert.equal(head(repo), ended.version);
    assert.match(git(repo, 'log', '-1', '--format=%B'), new RegExp(`Agent-Chat: copilot:${CLAUDE_SESSION}\\n`));
    // `hook copilot` (a hook file of VS Code's own) reads the same payloads.
    const again = event('copilot', 'vscode/UserPromptSubmit.json', repo);
    assert.equal(again.agent, 'copilot');
    assertNothingLost(repo, before);
  });

  it("two agents at once, even with the same session id: each Stop ends only its own agent's turn", async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const claude = event('claude-code', 'claude-code/UserPromptSubmit.json', repo);
    const copilot = event('claude-code', 'vscode/UserPromptSubmit.json', repo);
    const codex = event('codex', 'codex/UserPromptSubmit.json', repo, { session_id: CLAUDE_SESSION });
    assert.equal(new Set([claude.turnId, copilot.turnId, codex.turnId]).size, 3);
    assert.deepEqual(
      [claude.cancelled, copilot.cancelled, codex.cancelled],
      [[], [], []],
      "no agent cancelled another's turn",
    );
    const chats = (await running(repo)).map((t) => `${t.agent} ${t.chatId}`).sort();
    assert.deepEqual(chats, [
      `claude-code ${CLAUDE_SESSION}`,
      `codex codex:${CLAUDE_SESSION}`,
      `copilot copilot:${CLAUDE_SESSION}`,
    ]);
    write(repo, 'a.txt', 'a\n');
    const claudeEnd = event('claude-code', 'claude-code/Stop.json', repo);
    assert.equal(claudeEnd.turnId, claude.turnId);
    assert.deepEqual((await running(repo)).map((t) => t.turnId).sort(), [codex.turnId, copilot.turnId].sort());
    const copilotEnd = event('claude-code', 'vscode/Stop.json', repo);
    assert.equal(copilotEnd.turnId, copilot.turnId);
    const codexEnd = event('codex', 'codex/Stop.json', repo, { session_id: CLAUDE_SESSION });
    assert.equal(codexEnd.turnId, codex.turnId);
    assert.deepEqual(await running(repo), []);
    assertNothingLost(repo, before);
  });

  it('Codex hooks: UserPromptSubmit begins a codex turn, Stop makes the version, StopFailure ends errored', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const begun = event('codex', 'codex/UserPromptSubmit.json', repo);
    assert.deepEqual(await running(repo), [{ chatId: `codex:${CODEX_THREAD}`, agent: 'codex', turnId: begun.turnId! }]);
    write(repo, 'health.py', 'ok = True\n');
    const ended = event('codex', 'codex/Stop.json', repo);
    assert.deepEqual(
      [ended.agent, ended.action, ended.outcome, ended.version],
      ['codex', 'ended', 'completed', head(repo)],
    );
    assert.match(subjectOf(repo), /^\[Agent\] /);
    event('codex', 'codex/UserPromptSubmit.json', repo);
    const failed = event('codex', 'codex/StopFailure.json', repo);
    assert.deepEqual([failed.action, failed.outcome, failed.version], ['ended', 'errored', null]);
    assertNothingLost(repo, before);
  });

  it("Codex notify: the JSON argument ends the thread's running turn; without one, or another type, it is ignored", async () => {
    const repo = makeRepo();
    const notification = fixture('codex/notify-agent-turn-complete.json', repo);
    const idle = hook(['codex', notification, '--json'], '', repo);
    assert.equal(idle.code, 0, idle.stderr);
    assert.equal((JSON.parse(idle.stdout) as HookJson).action, 'ignored');
    const begun = event('codex', 'codex/UserPromptSubmit.json', repo);
    write(repo, 'n.txt', 'n\n');
    const r = hook(['codex', notification, '--json'], '', repo);
    assert.equal(r.code, 0, r.stderr);
    const ended = JSON.parse(r.stdout) as HookJson;
    assert.deepEqual(
      [ended.event, ended.action, ended.turnId, ended.outcome, ended.version],
      ['agent-turn-complete', 'ended', begun.turnId, 'completed', head(repo)],
    );
    const other = hook(
      ['codex', JSON.stringify({ type: 'approval-requested', 'thread-id': CODEX_THREAD, cwd: repo }), '--json'],
      '',
      repo,
    );
    assert.deepEqual([other.code, (JSON.parse(other.stdout) as HookJson).action], [0, 'ignored']);
  });

  it('a hook prints nothing on stdout without --json, even when it makes a version (stdout reaches the agent)', () => {
    const repo = makeRepo();
    const begin = hook(['claude-code'], fixture('claude-code/UserPromptSubmit.json', repo), repo);
    assert.deepEqual([begin.code, begin.stdout, begin.stderr], [0, '', '']);
    // --verbose logs content-free events on stderr (the after-hook checks them for the canary too).
    const again = hook(['claude-code', '--verbose'], fixture('claude-code/UserPromptSubmit.json', repo), repo);
    assert.match(again.stderr, /turn\.begin/);
    write(repo, 'x.txt', 'x\n');
    const end = hook(['claude-code', '--verbose'], fixture('claude-code/Stop.json', repo), repo);
    assert.deepEqual([again.code, again.stdout, end.code, end.stdout], [0, '', 0, '']);
    assert.match(end.stderr, /turn\.end/);
    assert.match(subjectOf(repo), /^\[Agent\] /);
  });

  // Malformed input: exit 1 with a message naming the problem (never 2: an agent would block the prompt), nothing recorded.
  const malformed: [string, string[], string, RegExp][] = [
    [
      'not JSON',
      ['claude-code'],
      `{"hook_event_name": "UserPromptSubmit", "prompt": "${CANARY}"`,
      /The hook event is not valid JSON\./,
    ],
    ['an array', ['claude-code'], '[]', /The hook event must be a JSON object\./],
    ['empty stdin', ['claude-code'], '', /The hook event is not valid JSON\./],
    [
      'no session id',
      ['claude-code'],
      `{"hook_event_name":"UserPromptSubmit","prompt":"${CANARY}"}`,
      /The hook event has no session_id\./,
    ],
    [
      'a number as the prompt',
      ['claude-code'],
      '{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":7}',
      /The hook event field prompt must be a string\./,
    ],
    [
      'VS Code shape without sessionId',
      ['claude-code'],
      `{"hookEventName":"UserPromptSubmit","prompt":"${CANARY}"}`,
      /The hook event has no sessionId\./,
    ],
    [
      'a session id the store refuses',
      ['claude-code'],
      `{"hook_event_name":"UserPromptSubmit","session_id":"-bad id","prompt":"${CANARY}"}`,
      /chatId must be 1–200 characters/,
    ],
    ['Codex without session_id', ['codex'], '{"hook_event_name":"Stop"}', /The Codex hook event has no session_id\./],
    [
      'Codex notify that is not JSON',
      ['codex', 'agent-turn-complete'],
      '',
      /The Codex notification is not valid JSON\./,
    ],
    [
      'Codex notify without thread-id',
      ['codex', '{"type":"agent-turn-complete"}'],
      '',
      /The Codex notification has no thread-id\./,
    ],
    [
      'an unknown agent',
      ['cursor'],
      '{}',
      /unknown hook adapter "cursor"; hook takes one of: claude-code, copilot, codex/,
    ],
  ];
  for (const [what, args, input, message] of malformed) {
    it(`malformed: ${what} → exit 1 with "${message.source.slice(0, 50)}", nothing recorded`, async () => {
      const repo = makeRepo();
      const picture = repoPicture(repo);
      const r = hook([...args, '--repo', repo], input, repo);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr.split('\n')[0], message);
      assert.equal(r.stdout, '');
      assert.deepEqual(repoPicture(repo), picture);
      assert.equal(await turnCount(repo), 0);
    });
  }
});
