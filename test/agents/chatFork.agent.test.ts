/**
 * Continue the chat from before an undone turn (issue 32) with the real agent binaries against their mock models:
 * a chat of three turns, Undo of the third, `agent-versions chat fork <third turn>` (the shipped bundle), then the
 * fork resumed with a fourth prompt. The mock's request log is the proof: the fourth request carries the first two
 * turns' messages and nothing of the third; the original session still resumes with all three. The refusals
 * (first turn, session file gone, agent not on PATH, Claude Agent SDK not installed) create nothing. Claude Code,
 * Codex and opencode; one chat each. Codex also forks a turn the history archive moved out.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { agentsDir, claudeAgentSdkDir, opencodeBinary } from './support/agentBinaries';
import { killProcessesUnder, processesUnder, startAgent, stopAllAgents, sweepProcesses } from './support/agentProcess';
import {
  addUserWork,
  agentEnv,
  avh,
  avhJson,
  commitSettings,
  DIST_CLI,
  inventory,
  makeSandbox,
  removeSandbox,
  Sandbox,
  turnsOf,
} from './support/agentSandbox';
import { say, useTools } from './support/anthropicMock';
import { ClaudeCodeSetup, claudePrint, setUpClaudeCode } from './support/claudeCodeSession';
import { CodexSetup, codexExec, setUpCodex } from './support/codexSession';
import { applyPatch, reply } from './support/openaiResponsesMock';
import { capturedEvents } from './support/agentSandbox';
import {
  chatReply,
  chatToolCalls,
  isAgentLoopRequest,
  OpenAiChatMock,
  startOpenAiChatMock,
} from './support/openaiChatMock';
import { opencodeUserConfig, seedPluginDependencies } from './support/opencodeWorld';
import { eventually } from '../support/eventually';
import { assertNothingLost, cleanupTempDirs } from '../support/gitFixtures';
import { DurableStore } from '../../src/core/store/durableStore';
import { getTurn } from '../../src/core/turns/turnRecords';

const setups: (ClaudeCodeSetup | CodexSetup)[] = [];

interface ForkJson {
  turnId: string;
  agent: string;
  chatId: string;
  forkId: string;
  anchorId: string | null;
  resume: { argv: string[]; cwd: string; command: string };
}

/** Every message of a model request, as one text to search (prompts and answers are distinct words). */
function conversationText(body: unknown): string {
  return JSON.stringify((body as { messages?: unknown }).messages ?? []);
}

/** The session files Claude Code keeps for the sandbox's projects (what a refusal must leave as it was). */
function sessionFiles(setup: ClaudeCodeSetup): string[] {
  const projects = path.join(setup.sandbox.home, '.claude', 'projects');
  if (!fs.existsSync(projects)) return [];
  return fs
    .readdirSync(projects)
    .flatMap((p) => fs.readdirSync(path.join(projects, p)).map((f) => `${p}/${f}`))
    .sort();
}

describe('Claude Code 2.1.197 (real binary, mock model: Anthropic API on 127.0.0.1): continue the chat from before an undone turn', function () {
  this.timeout(240_000);
  before(() => assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first'));
  afterEach(async () => {
    await stopAllAgents();
    for (const s of setups) {
      await s.mock.close();
      killProcessesUnder(s.sandbox.root);
    }
    for (const s of setups.splice(0)) await removeSandbox(s.sandbox);
    cleanupTempDirs();
  });

  it('three turns, Undo the third, fork: the fork resumes with turns one and two only; the original keeps all three', async () => {
    const sandbox = makeSandbox('claude-fork');
    const setup = await setUpClaudeCode(sandbox, { script: [] });
    setups.push(setup);
    const repo = sandbox.repo;
    const session = '3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
    setup.mock.script([
      say('ANSWER-ONE'),
      say('ANSWER-TWO'),
      useTools({ name: 'Write', input: { file_path: path.join(repo, 'third.txt'), content: 'third turn\n' } }),
      say('ANSWER-THREE'),
    ]);
    for (const [prompt, args] of [
      ['PROMPT-ONE', ['--session-id', session]],
      ['PROMPT-TWO', ['--resume', session]],
      ['PROMPT-THREE writes third.txt', ['--resume', session]],
    ] as const) {
      const run = await claudePrint(setup, prompt, [...args]).exited;
      assert.equal(run.code, 0, run.stderr);
    }
    assert.equal(setup.mock.remaining(), 0, 'the model script was used up');
    assert.equal(fs.readFileSync(path.join(repo, 'third.txt'), 'utf8'), 'third turn\n');
    const turns = await turnsOf(repo);
    assert.deepEqual(
      turns.map((t) => [t.chatId, t.seq, t.outcome]),
      [
        [session, 1, 'completed'],
        [session, 2, 'completed'],
        [session, 3, 'completed'],
      ],
    );
    const content = inventory(repo);

    const undo = avhJson<{ result: string; turnId: string }>(sandbox, ['undo']);
    assert.deepEqual([undo.result, undo.turnId], ['restored', turns[2].id]);
    assert.equal(fs.existsSync(path.join(repo, 'third.txt')), false, 'Undo took the third turn’s file back');

    const onPath = { PATH: `${path.dirname(setup.bin.path)}${path.delimiter}${process.env.PATH ?? ''}` };
    const doctor = avhJson<{ checks: { id: string; status: string; facts: Record<string, unknown> }[] }>(
      sandbox,
      ['doctor'],
      onPath,
    ).checks.find((c) => c.id === 'chat:claude-code')!;
    // The Agent SDK is the user's, found beside the `claude` on PATH (setup.sh installs it there), not bundled.
    assert.deepEqual(
      [doctor.status, doctor.facts],
      [
        'ok',
        {
          verifiedVersion: '2.1.197',
          available: true,
          version: '2.1.197',
          sdkVerifiedVersion: '0.3.197',
          sdkVersion: '0.3.197',
          sdkDir: fs.realpathSync(claudeAgentSdkDir()),
        },
      ],
    );
    const before = sessionFiles(setup);
    const forkRun = avh(sandbox, ['chat', 'fork', turns[2].id, '--json'], onPath);
    assert.equal(forkRun.code, 0, `${forkRun.stderr}${forkRun.stdout}`);
    assert.equal(forkRun.stderr, '', 'loading the SDK prints nothing (no warning of Node’s)');
    const fork = JSON.parse(forkRun.stdout) as ForkJson;
    assert.deepEqual(
      { ...fork, forkId: '', anchorId: '' },
      {
        turnId: turns[2].id,
        agent: 'claude-code',
        chatId: session,
        forkId: '',
        anchorId: '',
        resume: { argv: ['claude', '--resume', fork.forkId], cwd: repo, command: `claude --resume ${fork.forkId}` },
      },
    );
    assert.notEqual(fork.forkId, session);
    const made = sessionFiles(setup).filter((f) => !before.includes(f));
    assert.deepEqual(
      made.map((f) => path.basename(f)),
      [`${fork.forkId}.jsonl`],
      'the fork is one new session file',
    );

    // The fork, resumed with a fourth prompt: the model hears turns one and two, and nothing of the third.
    setup.mock.script([say('ANSWER-FOUR')]);
    const fourth = await claudePrint(setup, 'PROMPT-FOUR', ['--resume', fork.forkId]).exited;
    assert.equal(fourth.code, 0, fourth.stderr);
    const forked = conversationText(setup.mock.loopRequests().at(-1)!.body);
    for (const heard of ['PROMPT-ONE', 'ANSWER-ONE', 'PROMPT-TWO', 'ANSWER-TWO', 'PROMPT-FOUR'])
      assert.ok(forked.includes(heard), `the fork's request carries ${heard}`);
    for (const gone of ['PROMPT-THREE', 'third.txt', 'ANSWER-THREE'])
      assert.ok(!forked.includes(gone), `the fork's request carries nothing of the undone turn (${gone})`);

    // The original session is untouched: resumed, it still has all three turns.
    setup.mock.script([say('ANSWER-FIVE')]);
    const fifth = await claudePrint(setup, 'PROMPT-FIVE', ['--resume', session]).exited;
    assert.equal(fifth.code, 0, fifth.stderr);
    const original = conversationText(setup.mock.loopRequests().at(-1)!.body);
    for (const heard of ['PROMPT-ONE', 'PROMPT-TWO', 'PROMPT-THREE', 'third.txt', 'ANSWER-THREE', 'PROMPT-FIVE'])
      assert.ok(original.includes(heard), `the original's request carries ${heard}`);
    assert.ok(!original.includes('PROMPT-FOUR'), 'the fork’s prompt never reached the original');

    // The fork's own turn is recorded as a chat of its own, with its own anchor: it can be forked in turn.
    const after = await turnsOf(repo);
    assert.deepEqual(
      after.slice(3).map((t) => [t.chatId, t.seq]),
      [
        [fork.forkId, 1],
        [session, 4],
      ],
    );
    assertNothingLost(repo, content);
  });

  it('refusals create nothing: the first turn, the agent not on PATH, the Agent SDK missing or of another line, the session file gone', async () => {
    const sandbox = makeSandbox('claude-fork-refusals');
    const setup = await setUpClaudeCode(sandbox, { script: [say('ANSWER-ONE'), say('ANSWER-TWO')] });
    setups.push(setup);
    const session = '4d2e3f50-6b7c-4d8e-9fa0-1b2c3d4e5f60';
    assert.equal((await claudePrint(setup, 'PROMPT-ONE', ['--session-id', session]).exited).code, 0);
    assert.equal((await claudePrint(setup, 'PROMPT-TWO', ['--resume', session]).exited).code, 0);
    const turns = await turnsOf(sandbox.repo);
    assert.equal(turns.length, 2);
    const content = inventory(sandbox.repo);
    const onPath = { PATH: `${path.dirname(setup.bin.path)}${path.delimiter}${process.env.PATH ?? ''}` };
    const files = sessionFiles(setup);
    const refused = (turnId: string, env: NodeJS.ProcessEnv, code: number, message: RegExp) => {
      const r = avh(sandbox, ['chat', 'fork', turnId], env);
      assert.equal(r.code, code, `${r.stderr}${r.stdout}`);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /Nothing was created\./);
      assert.ok(!r.stderr.includes('PROMPT-') && !r.stderr.includes('ANSWER-'), 'no conversation text in the message');
      assert.deepEqual(sessionFiles(setup), files, 'no session file was made or removed');
    };

    refused(turns[0].id, onPath, 2, /began its Claude Code conversation: there is no conversation before it/);
    refused(turns[1].id, { PATH: '/usr/bin:/bin' }, 1, /`claude` is not on PATH/);

    // The Claude Agent SDK not installed (we may not ship it; chat fork loads the user's): the real `claude` through
    // a launcher in a node_modules folder without the SDK, and an npm whose global root has none either.
    const noSdk = path.join(fs.realpathSync(sandbox.root), 'no-sdk');
    const launchers = path.join(noSdk, 'node_modules', '.bin');
    fs.mkdirSync(launchers, { recursive: true });
    fs.writeFileSync(path.join(launchers, 'claude'), `#!/bin/sh\nexec '${setup.bin.path}' "$@"\n`, { mode: 0o755 });
    const withoutSdk = {
      PATH: `${launchers}${path.delimiter}${process.env.PATH ?? ''}`,
      npm_config_prefix: path.join(noSdk, 'npm-global'),
    };
    const install = '`npm install -g @anthropic-ai/claude-agent-sdk@0.3.197`';
    const needs =
      'Claude Code chat fork needs the Claude Agent SDK 0.3.197 installed beside Claude Code (looked in ' +
      `${path.join(noSdk, 'node_modules')} and ${path.join(noSdk, 'npm-global', 'lib', 'node_modules')}): ` +
      `${install}; not bundled because its license does not allow redistribution. Nothing was created.`;
    const escaped = new RegExp(needs.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    refused(turns[1].id, withoutSdk, 1, escaped);
    const sdkCheck = avhJson<{ checks: { id: string; status: string; summary: string; fix?: string }[] }>(
      sandbox,
      ['doctor'],
      withoutSdk,
    ).checks.find((c) => c.id === 'chat:claude-code')!;
    assert.equal(sdkCheck.status, 'warning');
    assert.match(sdkCheck.summary, /needs the Claude Agent SDK 0\.3\.197 installed beside Claude Code/);
    assert.equal(
      sdkCheck.fix,
      'npm install -g @anthropic-ai/claude-agent-sdk@0.3.197 (not bundled because its license does not allow ' +
        'redistribution).',
    );
    // Another line of the SDK beside it: refused by its version, before anything loads it.
    const otherSdk = path.join(noSdk, 'node_modules', '@anthropic-ai', 'claude-agent-sdk');
    fs.mkdirSync(otherSdk, { recursive: true });
    fs.writeFileSync(
      path.join(otherSdk, 'package.json'),
      JSON.stringify({ name: '@anthropic-ai/claude-agent-sdk', version: '0.4.0', type: 'module', main: 'sdk.mjs' }),
    );
    refused(
      turns[1].id,
      withoutSdk,
      1,
      new RegExp(
        `needs the Claude Agent SDK 0\\.3\\.197 \\(the 0\\.3\\.x line\\), but the one at ${otherSdk} is 0\\.4\\.0`,
      ),
    );
    assert.deepEqual(await turnsOf(sandbox.repo), turns, 'the store is as it was');

    const transcript = path.join(sandbox.home, '.claude', 'projects', path.dirname(files[0]), `${session}.jsonl`);
    const kept = `${transcript}.kept`;
    fs.renameSync(transcript, kept);
    try {
      const r = avh(sandbox, ['chat', 'fork', turns[1].id], onPath);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /The Claude Code session of this turn is gone: its file .* no longer exists/);
      assert.match(r.stderr, /Nothing was created\./);
    } finally {
      fs.renameSync(kept, transcript);
    }
    assert.deepEqual(sessionFiles(setup), files);
    assertNothingLost(sandbox.repo, content);
  });
});

describe('Codex 0.171.0 (real binary, mock model: Responses API on 127.0.0.1): continue the chat from before an undone turn', function () {
  this.timeout(240_000);
  before(() => assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first'));
  afterEach(async () => {
    await stopAllAgents();
    for (const s of setups) {
      await s.mock.close();
      killProcessesUnder(s.sandbox.root);
    }
    for (const s of setups.splice(0)) await removeSandbox(s.sandbox);
    cleanupTempDirs();
  });

  it('three turns, Undo the third, fork through the app-server: the fork resumes with turns one and two only; the original keeps all three', async () => {
    const sandbox = makeSandbox('codex-fork');
    const patch = applyPatch('*** Begin Patch\n*** Add File: third.txt\n+third turn\n*** End Patch\n');
    const setup = await setUpCodex(sandbox, {
      script: [reply('ANSWER-ONE'), reply('ANSWER-TWO'), patch, reply('ANSWER-THREE')],
    });
    setups.push(setup);
    const repo = sandbox.repo;
    assert.equal((await codexExec(setup, 'PROMPT-ONE').exited).code, 0);
    const thread = String(capturedEvents(sandbox)[0].payload.session_id);
    assert.equal((await codexExec(setup, 'PROMPT-TWO', { resume: thread }).exited).code, 0);
    assert.equal((await codexExec(setup, 'PROMPT-THREE writes third.txt', { resume: thread }).exited).code, 0);
    assert.equal(setup.mock.remaining(), 0, 'the model script was used up');
    assert.equal(fs.readFileSync(path.join(repo, 'third.txt'), 'utf8'), 'third turn\n');
    const turns = await turnsOf(repo);
    assert.deepEqual(
      turns.map((t) => [t.chatId, t.seq, t.outcome]),
      [1, 2, 3].map((seq) => [`codex:${thread}`, seq, 'completed']),
    );
    const content = inventory(repo);
    const undo = avhJson<{ result: string; turnId: string }>(sandbox, ['undo']);
    assert.deepEqual([undo.result, undo.turnId], ['restored', turns[2].id]);
    assert.equal(fs.existsSync(path.join(repo, 'third.txt')), false);

    const env = {
      CODEX_HOME: setup.codexHome,
      PATH: `${path.dirname(setup.bin.path)}${path.delimiter}${process.env.PATH ?? ''}`,
    };
    const refusedFirst = avh(sandbox, ['chat', 'fork', turns[0].id], env);
    assert.equal(refusedFirst.code, 2, refusedFirst.stderr);
    assert.match(refusedFirst.stderr, /This turn began its Codex thread.*Nothing was created\./);
    const fork = avhJson<ForkJson>(sandbox, ['chat', 'fork', turns[2].id], env);
    assert.equal(fork.agent, 'codex');
    assert.notEqual(fork.forkId, thread);
    assert.deepEqual(fork.resume, {
      argv: ['codex', 'resume', fork.forkId],
      cwd: repo,
      command: `codex resume ${fork.forkId}`,
    });

    // The fork, resumed with a fourth prompt: the model hears turns one and two, and nothing of the third.
    setup.mock.script([reply('ANSWER-FOUR')]);
    assert.equal((await codexExec(setup, 'PROMPT-FOUR', { resume: fork.forkId }).exited).code, 0);
    const forked = JSON.stringify((setup.mock.turnRequests().at(-1)!.body as { input?: unknown }).input);
    for (const heard of ['PROMPT-ONE', 'ANSWER-ONE', 'PROMPT-TWO', 'ANSWER-TWO', 'PROMPT-FOUR'])
      assert.ok(forked.includes(heard), `the fork's request carries ${heard}`);
    for (const gone of ['PROMPT-THREE', 'third.txt', 'ANSWER-THREE'])
      assert.ok(!forked.includes(gone), `the fork's request carries nothing of the undone turn (${gone})`);

    setup.mock.script([reply('ANSWER-FIVE')]);
    assert.equal((await codexExec(setup, 'PROMPT-FIVE', { resume: thread }).exited).code, 0);
    const original = JSON.stringify((setup.mock.turnRequests().at(-1)!.body as { input?: unknown }).input);
    for (const heard of ['PROMPT-ONE', 'PROMPT-TWO', 'PROMPT-THREE', 'third.txt', 'ANSWER-THREE', 'PROMPT-FIVE'])
      assert.ok(original.includes(heard), `the original's request carries ${heard}`);
    assert.ok(!original.includes('PROMPT-FOUR'), 'the fork’s prompt never reached the original');

    // The history archive moves turns one and two out (as a long history would at the default keep, 1,500): turn
    // two's anchor stays, so its fork still works, and holds turn one only.
    const stateDir = path.join(repo, '.git', 'agent-versions');
    const { store } = await DurableStore.open(stateDir, { compactEvery: 1, archiveKeep: 0, archiveMargin: 1 });
    try {
      await store.transaction((tx) => tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('test_rotation', '1')"));
      await store.read(() => undefined);
      assert.equal(await store.read((r) => getTurn(r, turns[1].id)), undefined, 'turn two is archived');
    } finally {
      await store.close();
    }
    const codexTurnIds = capturedEvents(sandbox)
      .filter((e) => e.event === 'UserPromptSubmit')
      .map((e) => String(e.payload.turn_id));
    const archivedFork = avhJson<ForkJson>(sandbox, ['chat', 'fork', turns[1].id], env);
    assert.equal(archivedFork.anchorId, codexTurnIds[0], 'the fork ends with turn one');
    setup.mock.script([reply('ANSWER-SIX')]);
    assert.equal((await codexExec(setup, 'PROMPT-SIX', { resume: archivedFork.forkId }).exited).code, 0);
    const fromArchived = JSON.stringify((setup.mock.turnRequests().at(-1)!.body as { input?: unknown }).input);
    for (const heard of ['PROMPT-ONE', 'ANSWER-ONE', 'PROMPT-SIX'])
      assert.ok(fromArchived.includes(heard), `the archived turn's fork carries ${heard}`);
    for (const gone of ['PROMPT-TWO', 'ANSWER-TWO', 'PROMPT-THREE'])
      assert.ok(!fromArchived.includes(gone), `the archived turn's fork carries nothing from turn two on (${gone})`);

    // The thread's session file deleted: refused, nothing created.
    const rollouts = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? rollouts(path.join(dir, e.name)) : [path.join(dir, e.name)]))
        .filter((f) => f.endsWith('.jsonl'))
        .sort();
    const sessions = path.join(setup.codexHome, 'sessions');
    const own = rollouts(sessions).filter((f) => path.basename(f).includes(thread));
    assert.equal(own.length, 1, `one session file for the thread: ${own.join(', ')}`);
    fs.rmSync(own[0]);
    const left = rollouts(sessions);
    const gone = avh(sandbox, ['chat', 'fork', turns[2].id], env);
    assert.equal(gone.code, 1, gone.stderr);
    assert.match(
      gone.stderr,
      /Codex has no thread with this turn’s id any more \(deleted or archived\)\. Nothing was created\./,
    );
    assert.deepEqual(rollouts(sessions), left, 'no session file was created');
    assertNothingLost(repo, content);
  });
});

describe('opencode 1.18.33 (real binary, mock model: Chat Completions on 127.0.0.1): continue the chat from before an undone turn', function () {
  this.timeout(240_000);
  let mock: OpenAiChatMock | undefined;
  let sandbox: Sandbox | undefined;
  before(() => assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first'));
  afterEach(async () => {
    await stopAllAgents();
    await mock?.close();
    if (sandbox) {
      await sweepProcesses(sandbox.root);
      await removeSandbox(sandbox);
    }
    cleanupTempDirs();
  });

  it('three turns, Undo the third, fork through `opencode serve`: the fork resumes with turns one and two only; the original keeps all three; refusals create nothing', async () => {
    const bin = opencodeBinary();
    mock = await startOpenAiChatMock();
    const box = (sandbox = makeSandbox('opencode-fork'));
    const repo = box.repo;
    const connected = avh(box, ['connect', 'opencode', '--project']);
    assert.equal(connected.code, 0, connected.stderr);
    seedPluginDependencies(path.join(repo, '.opencode'));
    commitSettings(box, '.opencode');
    addUserWork(box);
    const userDir = path.join(box.home, '.config', 'opencode');
    fs.mkdirSync(userDir, { recursive: true });
    fs.writeFileSync(path.join(userDir, 'opencode.json'), opencodeUserConfig(mock.url));
    seedPluginDependencies(userDir);
    // The user's opencode environment, which `chat fork` runs in too: the same database, the binary on PATH.
    const opencodeEnv = {
      XDG_CONFIG_HOME: path.join(box.home, '.config'),
      XDG_DATA_HOME: path.join(box.home, '.local/share'),
      XDG_STATE_HOME: path.join(box.home, '.local/state'),
      XDG_CACHE_HOME: path.join(agentsDir(), 'cache'),
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      PATH: `${path.dirname(bin.path)}${path.delimiter}${process.env.PATH ?? ''}`,
    };
    const env = agentEnv(box, { ...opencodeEnv, PWD: repo });
    /** One `opencode run`, then its turn's end (the plugin's session.idle hook finishes after opencode exits). */
    const turn = async (prompt: string, args: string[] = []) => {
      const count = (await turnsOf(repo)).length;
      const exit = await startAgent(bin.path, ['run', ...args, prompt], { cwd: repo, env, timeoutMs: 120_000 }).exited;
      assert.equal(exit.code, 0, exit.stderr);
      await eventually(
        'the session.idle hook to end the turn',
        () => turnsOf(repo),
        // Ended, and its version made (or refused): 'pending' while the commit is being made.
        (turns) =>
          turns.length === count + 1 &&
          turns[count].outcome != null &&
          (turns[count].version !== null || turns[count].noVersionReason !== 'pending'),
        { timeoutMs: 30_000 },
      );
    };
    /** The last agent-loop request's conversation, as one text to search. */
    const lastConversation = () =>
      JSON.stringify((mock!.requests.filter(isAgentLoopRequest).at(-1)!.body as { messages?: unknown }).messages);
    const sessions = () => {
      const r = spawnSync(bin.path, ['session', 'list', '--format', 'json'], { cwd: repo, env, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return (JSON.parse(r.stdout || '[]') as { id: string }[]).map((x) => x.id).sort();
    };

    mock.script([
      chatReply('ANSWER-ONE'),
      chatReply('ANSWER-TWO'),
      chatToolCalls({ name: 'write', arguments: { filePath: path.join(repo, 'third.txt'), content: 'third turn\n' } }),
      chatReply('ANSWER-THREE'),
    ]);
    await turn('PROMPT-ONE');
    const chatId = (await turnsOf(repo))[0].chatId;
    const session = chatId.replace(/^opencode:/, '');
    await turn('PROMPT-TWO', ['--session', session]);
    await turn('PROMPT-THREE writes third.txt', ['--session', session]);
    assert.equal(mock.remaining(), 0, 'the model script was used up');
    assert.equal(fs.readFileSync(path.join(repo, 'third.txt'), 'utf8'), 'third turn\n');
    const turns = await turnsOf(repo);
    assert.deepEqual(
      turns.map((t) => [t.chatId, t.seq, t.outcome]),
      [1, 2, 3].map((seq) => [chatId, seq, 'completed']),
    );
    const content = inventory(repo);
    const undo = avhJson<{ result: string; turnId: string }>(box, ['undo']);
    assert.deepEqual([undo.result, undo.turnId], ['restored', turns[2].id]);
    assert.equal(fs.existsSync(path.join(repo, 'third.txt')), false, 'Undo took the third turn’s file back');

    const doctor = avhJson<{ checks: { id: string; status: string; facts: Record<string, unknown> }[] }>(
      box,
      ['doctor'],
      opencodeEnv,
    ).checks.filter((c) => c.id === 'chat:opencode' || c.id === 'hooks:opencode');
    assert.deepEqual(
      doctor.map((c) => [c.id, c.status]),
      [
        ['hooks:opencode', 'ok'],
        ['chat:opencode', 'ok'],
      ],
    );
    assert.deepEqual(doctor[1].facts, { verifiedVersion: '1.18.33', available: true, version: '1.18.33' });

    const before = sessions();
    assert.deepEqual(before, [session]);
    const forkRun = avh(box, ['chat', 'fork', turns[2].id, '--json'], opencodeEnv);
    assert.equal(forkRun.code, 0, `${forkRun.stderr}${forkRun.stdout}`);
    const fork = JSON.parse(forkRun.stdout) as ForkJson;
    assert.deepEqual(
      { ...fork, forkId: '' },
      {
        turnId: turns[2].id,
        agent: 'opencode',
        chatId,
        forkId: '',
        anchorId: fork.anchorId,
        resume: {
          argv: ['opencode', '--session', fork.forkId],
          cwd: repo,
          command: `opencode --session ${fork.forkId}`,
        },
      },
    );
    assert.match(fork.anchorId ?? '', /^msg_/, 'the anchor is the message before the turn’s prompt');
    assert.deepEqual(sessions(), [...before, fork.forkId].sort(), 'the fork is one new session');
    assert.deepEqual(
      processesUnder(box.root).filter((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('\0serve\0')),
      [],
      'the server chat fork started has stopped',
    );

    // The fork, resumed with a fourth prompt: the model hears turns one and two, and nothing of the third.
    mock.script([chatReply('ANSWER-FOUR')]);
    await turn('PROMPT-FOUR', ['--session', fork.forkId]);
    const forked = lastConversation();
    for (const heard of ['PROMPT-ONE', 'ANSWER-ONE', 'PROMPT-TWO', 'ANSWER-TWO', 'PROMPT-FOUR'])
      assert.ok(forked.includes(heard), `the fork's request carries ${heard}`);
    for (const gone of ['PROMPT-THREE', 'third.txt', 'ANSWER-THREE'])
      assert.ok(!forked.includes(gone), `the fork's request carries nothing of the undone turn (${gone})`);

    // The original session is untouched: resumed, it still has all three turns.
    mock.script([chatReply('ANSWER-FIVE')]);
    await turn('PROMPT-FIVE', ['--session', session]);
    const original = lastConversation();
    for (const heard of ['PROMPT-ONE', 'PROMPT-TWO', 'PROMPT-THREE', 'third.txt', 'ANSWER-THREE', 'PROMPT-FIVE'])
      assert.ok(original.includes(heard), `the original's request carries ${heard}`);
    assert.ok(!original.includes('PROMPT-FOUR'), 'the fork’s prompt never reached the original');
    const after = await turnsOf(repo);
    assert.deepEqual(
      after.slice(3).map((t) => [t.chatId, t.seq]),
      [
        [`opencode:${fork.forkId}`, 1],
        [chatId, 4],
      ],
    );

    // Refusals leave opencode's sessions and our store as they were.
    const kept = sessions();
    const refused = (turnId: string, extra: NodeJS.ProcessEnv, code: number, message: RegExp) => {
      const r = avh(box, ['chat', 'fork', turnId], { ...opencodeEnv, ...extra });
      assert.equal(r.code, code, `${r.stderr}${r.stdout}`);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /Nothing was created\./);
      assert.ok(!r.stderr.includes('PROMPT-') && !r.stderr.includes('ANSWER-'), 'no conversation text in the message');
    };
    refused(turns[0].id, {}, 2, /This turn began its opencode session: there is no conversation before it/);
    refused(turns[2].id, { PATH: '/usr/bin:/bin' }, 1, /`opencode` is not on PATH/);
    assert.deepEqual(sessions(), kept);
    // The fork's session deleted in opencode: its turn (the fourth prompt) can no longer be continued.
    const deleted = spawnSync(bin.path, ['session', 'delete', fork.forkId], { cwd: repo, env, encoding: 'utf8' });
    assert.equal(deleted.status, 0, deleted.stderr);
    const gone = kept.filter((id) => id !== fork.forkId);
    assert.deepEqual(sessions(), gone);
    refused(after[3].id, {}, 1, /opencode has no session with this turn’s id any more \(deleted\)/);
    assert.deepEqual(sessions(), gone);
    assert.deepEqual(await turnsOf(repo), after, 'the store is as it was');
    assertNothingLost(repo, content);
  });
});
