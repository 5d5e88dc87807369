/**
 * Hook adapters end to end: each agent's payload fixtures (test/fixtures/hooks/) fed through the production CLI
 * bundle (dist/cli.js, built by `npm run build`) as real processes, in real git repositories, read back through
 * the real store. Every output of every run is searched for the canary prompt.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENTS } from '../../src/cli/agents/registry';
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
  tempDir,
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

function hook(args: string[], input: string, cwd: string, env: NodeJS.ProcessEnv = {}): Run {
  const r = spawnSync(process.execPath, [DIST_CLI, 'hook', ...args], {
    cwd,
    input,
    encoding: 'utf8',
    // Not Copilot CLI's process unless a test says so, whatever runs these tests.
    env: { ...testGitEnv(), COPILOT_CLI: '', ...env },
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
  reason?: string;
  turnId?: string;
  outcome?: string;
  version?: string | null;
  cancelled?: string[];
}

/** Runs one event with --json (a hook prints nothing without it) from an unrelated folder, as agents do. */
function event(
  agent: string,
  name: string,
  repo: string,
  overrides: Record<string, unknown> = {},
  env: NodeJS.ProcessEnv = {},
): HookJson {
  const r = hook([agent, '--json'], fixture(name, repo, overrides), path.dirname(repo), env);
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

/** The session id a fixture names. */
function sessionOf(name: string): string {
  const o = JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as Record<string, unknown>;
  return String(o.session_id ?? o.sessionId);
}

const CLAUDE_SESSION = sessionOf('claude-code/UserPromptSubmit.json');
const CODEX_THREAD = sessionOf('codex/UserPromptSubmit.json');

/** A Codex transcript (`transcript_path`) whose last turn ended as `record` says, as Codex 0.171 writes it. */
function codexTranscript(dir: string, last: Record<string, unknown> | null): string {
  const file = path.join(dir, 'rollout-2026-12-01T17-58-24-session.jsonl');
  const lines = [
    { type: 'session_meta', payload: { id: 'session' } },
    { type: 'event_msg', payload: { type: 'task_started', turn_id: 't1' } },
    ...(last ? [{ type: 'event_msg', payload: { turn_id: 't1', ...last } }] : []),
  ];
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

describe('hook adapters: captured payloads of every agent through the real CLI bundle', function () {
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

  it('Claude Code’s project hooks run by Copilot CLI (COPILOT_CLI=1): ignored, left to hook copilot, nothing opened', async () => {
    const repo = makeRepo();
    const picture = repoPicture(repo);
    for (const name of ['copilot-cli/UserPromptSubmit.json', 'copilot-cli/Stop.json', 'copilot-cli/SessionEnd.json']) {
      const r = event('claude-code', name, repo, {}, { COPILOT_CLI: '1' });
      assert.deepEqual([r.agent, r.action, r.reason], ['claude-code', 'ignored', 'another-agent'], name);
    }
    assert.ok(!fs.existsSync(path.join(repo, '.git', 'agent-versions')), 'no state was created');
    assert.deepEqual(repoPicture(repo), picture);
  });

  it('GitHub Copilot CLI (COPILOT_CLI=1): a copilot-cli turn in its own chat; SessionEnd "error" ends errored, "complete" cancelled; ErrorOccurred ignored', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const cli = { COPILOT_CLI: '1' };
    const session = sessionOf('copilot-cli/UserPromptSubmit.json');
    const begun = event('copilot', 'copilot-cli/UserPromptSubmit.json', repo, {}, cli);
    assert.deepEqual([begun.agent, begun.action], ['copilot-cli', 'began']);
    assert.deepEqual(await running(repo), [
      { chatId: `copilot-cli:${session}`, agent: 'copilot-cli', turnId: begun.turnId! },
    ]);
    write(repo, 'greet.txt', 'hi\n');
    const ended = event('copilot', 'copilot-cli/Stop.json', repo, {}, cli);
    assert.deepEqual([ended.outcome, ended.version], ['completed', head(repo)]);
    assert.match(git(repo, 'log', '-1', '--format=%B'), new RegExp(`Agent-Chat: copilot-cli:${session}\\n`));
    event('copilot', 'copilot-cli/UserPromptSubmit.json', repo, {}, cli);
    assert.equal(event('copilot', 'copilot-cli/ErrorOccurred.json', repo, {}, cli).action, 'ignored');
    const failed = event('copilot', 'copilot-cli/SessionEnd-error.json', repo, {}, cli);
    assert.deepEqual([failed.action, failed.outcome], ['ended', 'errored']);
    event('copilot', 'copilot-cli/UserPromptSubmit.json', repo, {}, cli);
    const interrupted = event('copilot', 'copilot-cli/SessionEnd.json', repo, {}, cli);
    assert.deepEqual([interrupted.action, interrupted.outcome], ['ended', 'cancelled']);
    assertNothingLost(repo, before);
  });

  it('VS Code 1.139 agent hooks (snake_case, no COPILOT_CLI): hook copilot records copilot turns; the older camelCase payload too, also through the claude-code command', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const session = sessionOf('vscode/UserPromptSubmit.json');
    assert.equal(event('copilot', 'vscode/SessionStart.json', repo).action, 'ignored');
    const begun = event('copilot', 'vscode/UserPromptSubmit.json', repo);
    assert.deepEqual([begun.agent, begun.event, begun.action], ['copilot', 'UserPromptSubmit', 'began']);
    assert.deepEqual(await running(repo), [{ chatId: `copilot:${session}`, agent: 'copilot', turnId: begun.turnId! }]);
    write(repo, 'src/health.ts', 'export {};\n');
    const ended = event('copilot', 'vscode/Stop.json', repo);
    assert.deepEqual([ended.agent, ended.action, ended.outcome], ['copilot', 'ended', 'completed']);
    assert.equal(head(repo), ended.version);
    assert.match(git(repo, 'log', '-1', '--format=%B'), new RegExp(`Agent-Chat: copilot:${session}\\n`));
    const legacy = sessionOf('vscode/legacy-UserPromptSubmit.json');
    for (const agent of ['copilot', 'claude-code']) {
      const again = event(agent, 'vscode/legacy-UserPromptSubmit.json', repo);
      assert.deepEqual([again.agent, again.action], ['copilot', 'began'], agent);
      assert.deepEqual(await running(repo), [{ chatId: `copilot:${legacy}`, agent: 'copilot', turnId: again.turnId! }]);
      assert.equal(event(agent, 'vscode/legacy-Stop.json', repo).outcome, 'completed', agent);
    }
    assertNothingLost(repo, before);
  });

  it("two agents at once, even with the same session id: each end event ends only its own agent's turn", async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const id = { session_id: CLAUDE_SESSION };
    const claude = event('claude-code', 'claude-code/UserPromptSubmit.json', repo);
    const copilot = event('copilot', 'vscode/UserPromptSubmit.json', repo, id);
    const codex = event('codex', 'codex/UserPromptSubmit.json', repo, id);
    const gemini = event('gemini', 'gemini/BeforeAgent.json', repo, id);
    const opencode = event('opencode', 'opencode/chat.message.json', repo, id);
    const turns = [claude, copilot, codex, gemini, opencode];
    assert.equal(new Set(turns.map((t) => t.turnId)).size, 5);
    assert.deepEqual(
      turns.map((t) => t.cancelled),
      [[], [], [], [], []],
      "no agent cancelled another's turn",
    );
    const chats = (await running(repo)).map((t) => `${t.agent} ${t.chatId}`).sort();
    assert.deepEqual(chats, [
      `claude-code ${CLAUDE_SESSION}`,
      `codex codex:${CLAUDE_SESSION}`,
      `copilot copilot:${CLAUDE_SESSION}`,
      `gemini gemini:${CLAUDE_SESSION}`,
      `opencode opencode:${CLAUDE_SESSION}`,
    ]);
    write(repo, 'a.txt', 'a\n');
    assert.equal(event('claude-code', 'claude-code/Stop.json', repo).turnId, claude.turnId);
    assert.deepEqual((await running(repo)).length, 4);
    assert.equal(event('copilot', 'vscode/Stop.json', repo, id).turnId, copilot.turnId);
    assert.equal(event('codex', 'codex/Stop.json', repo, id).turnId, codex.turnId);
    assert.equal(event('gemini', 'gemini/AfterAgent.json', repo, id).turnId, gemini.turnId);
    assert.equal(event('opencode', 'opencode/session.idle.json', repo, id).turnId, opencode.turnId);
    assert.deepEqual(await running(repo), []);
    assertNothingLost(repo, before);
  });

  it('Codex hooks: UserPromptSubmit begins a codex turn, Stop makes the version, Interrupt ends cancelled, a later SessionEnd finds nothing', async () => {
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
    assert.equal(event('codex', 'codex/PostModelRequest.json', repo).action, 'ignored');
    const interrupted = event('codex', 'codex/Interrupt.json', repo);
    assert.deepEqual([interrupted.action, interrupted.outcome, interrupted.version], ['ended', 'cancelled', null]);
    assert.equal(event('codex', 'codex/SessionEnd.json', repo).action, 'ignored');
    assertNothingLost(repo, before);
  });

  it('Codex SessionEnd of a running turn: errored when its transcript says the turn failed, cancelled when it was aborted, unreadable or missing', async () => {
    const repo = makeRepo();
    const dir = tempDir('avh-codex-home-');
    const cases: [string, Record<string, unknown> | null | 'missing' | 'relative', string][] = [
      [
        'failed',
        { type: 'task_complete', error: { message: 'high demand', codex_error_info: 'internal_server_error' } },
        'errored',
      ],
      ['aborted', { type: 'turn_aborted', reason: 'interrupted' }, 'cancelled'],
      ['completed', { type: 'task_complete', error: null, last_agent_message: 'hi' }, 'cancelled'],
      ['still running', null, 'cancelled'],
      ['missing', 'missing', 'cancelled'],
      ['relative', 'relative', 'cancelled'],
    ];
    for (const [what, last, outcome] of cases) {
      event('codex', 'codex/UserPromptSubmit.json', repo);
      const transcript =
        last === 'missing'
          ? path.join(dir, 'gone.jsonl')
          : last === 'relative'
            ? 'sessions/rollout.jsonl'
            : codexTranscript(dir, last);
      const r = event('codex', 'codex/SessionEnd.json', repo, { transcript_path: transcript });
      assert.deepEqual([r.action, r.outcome], ['ended', outcome], what);
    }
  });

  it('Gemini CLI: BeforeAgent begins a gemini turn, AfterAgent makes the version; AfterAgent "[no response text]" (Escape) and SessionEnd end cancelled', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const session = sessionOf('gemini/BeforeAgent.json');
    const begun = event('gemini', 'gemini/BeforeAgent.json', repo);
    assert.deepEqual(await running(repo), [{ chatId: `gemini:${session}`, agent: 'gemini', turnId: begun.turnId! }]);
    write(repo, 'greet.txt', 'hi from gemini\n');
    const ended = event('gemini', 'gemini/AfterAgent.json', repo);
    assert.deepEqual([ended.outcome, ended.version], ['completed', head(repo)]);
    event('gemini', 'gemini/BeforeAgent.json', repo);
    const escaped = event('gemini', 'gemini/AfterAgent-escape.json', repo);
    assert.deepEqual([escaped.action, escaped.outcome, escaped.version], ['ended', 'cancelled', null]);
    event('gemini', 'gemini/BeforeAgent.json', repo);
    const closed = event('gemini', 'gemini/SessionEnd.json', repo);
    assert.deepEqual([closed.action, closed.outcome], ['ended', 'cancelled']);
    assertNothingLost(repo, before);
  });

  it('opencode (our plugin’s payload): chat.message begins, session.idle makes the version; session.error ends cancelled for an abort, errored otherwise; the idle after it finds nothing', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const session = sessionOf('opencode/chat.message.json');
    const begun = event('opencode', 'opencode/chat.message.json', repo);
    assert.deepEqual(await running(repo), [
      { chatId: `opencode:${session}`, agent: 'opencode', turnId: begun.turnId! },
    ]);
    write(repo, 'greet.txt', 'hi from opencode\n');
    const ended = event('opencode', 'opencode/session.idle.json', repo);
    assert.deepEqual([ended.outcome, ended.version], ['completed', head(repo)]);
    for (const [name, outcome] of [
      ['opencode/session.error-aborted.json', 'cancelled'],
      ['opencode/session.error-api.json', 'errored'],
    ]) {
      event('opencode', 'opencode/chat.message.json', repo);
      const r = event('opencode', name, repo);
      assert.deepEqual([r.action, r.outcome], ['ended', outcome], name);
      assert.equal(event('opencode', 'opencode/session.idle.json', repo).action, 'ignored');
    }
    assertNothingLost(repo, before);
  });

  it("Codex notify: the JSON argument ends the thread's running turn; without one, or another type, it is ignored", async () => {
    const repo = makeRepo();
    const notification = fixture('codex/notify-agent-turn-complete.json', repo, { 'thread-id': CODEX_THREAD });
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
    ['empty stdin', ['claude-code'], '', /The hook event is empty \(nothing came on standard input\)\./],
    ['only white space', ['claude-code'], ' \n', /The hook event is empty \(nothing came on standard input\)\./],
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
      new RegExp(`unknown hook adapter "cursor"; hook takes one of: ${AGENTS.map((a) => a.name).join(', ')}`),
    ],
    [
      'Gemini without session_id',
      ['gemini'],
      '{"hook_event_name":"AfterAgent"}',
      /The Gemini hook event has no session_id\./,
    ],
    [
      'opencode with a number as the error name',
      ['opencode'],
      '{"hook_event_name":"session.error","session_id":"s","error_name":7}',
      /The opencode plugin event field error_name must be a string\./,
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
