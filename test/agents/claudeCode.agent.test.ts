/**
 * The real Claude Code binary (2.1.197, scripts/agents/setup.sh) against a mock model: a scripted Anthropic Messages
 * API on 127.0.0.1 (the only part that cannot be real here). The hooks are exactly the ones the shipped
 * `node dist/cli.js connect claude-code --project` writes (run through the timer, which runs the same command with
 * the same stdin), beside a capture hook on every event; our state is read back through the shipped CLI. Every
 * scenario starts from a user's uncommitted edit and an untracked file, and checks exact trees.
 *
 * Three scenarios need the turn-semantics fixes of issue 23 (#1: a turn that changed nothing is never Undo's
 * target; #6: errored is not overwritten by the SessionEnd of the same turn) and fail without them: the question
 * turn, "never mind" after an interrupt (print mode and interactive), and the API errors.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { killProcessesUnder, processesUnder, settled, stopAllAgents, waitUntil } from './support/agentProcess';
import {
  avh,
  avhJson,
  capturedEvents,
  CapturedEvent,
  clearCapture,
  DIST_CLI,
  hookTimings,
  inventory,
  makeSandbox,
  removeSandbox,
  report,
  saveModelRequest,
  saveSamples,
  saveTimings,
  treeOf,
  turnsOf,
  UNTRACKED,
  USER_EDIT,
} from './support/agentSandbox';
import { AnthropicStep, hang, httpError, say, useTools } from './support/anthropicMock';
import {
  claudeInteractive,
  ClaudeCodeSetup,
  claudePrint,
  setUpClaudeCode,
  submitPrompt,
} from './support/claudeCodeSession';
import { assertEachCheckpointRestores, assertGuardDenied, prepareCheckpointTurn } from './support/commandCheckpoints';
import { TmuxSession } from './support/tmuxSession';
import { assertNothingLost, cleanupTempDirs } from '../support/gitFixtures';

const setups: ClaudeCodeSetup[] = [];

/** Removes the sandboxes, retrying while a hook that a killed agent left running still writes its file. */
async function removeSandboxes(): Promise<void> {
  for (const s of setups) {
    const left = killProcessesUnder(s.sandbox.root);
    if (left > 0) console.log(`killed ${left} process(es) the agent left running under ${s.sandbox.root}`);
  }
  for (const s of setups.splice(0)) await removeSandbox(s.sandbox);
  cleanupTempDirs();
}
const sessions: TmuxSession[] = [];

async function claude(name: string, script: AnthropicStep[], options: Parameters<typeof setUpClaudeCode>[1] = {}) {
  const sandbox = makeSandbox(`claude-${name}`);
  const setup = await setUpClaudeCode(sandbox, { timeHooks: true, script, ...options });
  setups.push(setup);
  return setup;
}

const names = (events: CapturedEvent[]) => events.map((e) => e.event);

/** Ctrl+C twice, as a user leaves the interactive mode (the first one only asks for the second). */
async function quit(session: TmuxSession): Promise<void> {
  await new Promise((r) => setTimeout(r, 500));
  session.keys('C-c');
  await session.waitForScreen(/again to exit/, 'the exit hint');
  session.keys('C-c');
  await session.waitForExit('Claude Code to exit');
}
const ofEvent = (events: CapturedEvent[], event: string) => events.filter((e) => e.event === event);
const abs = (setup: ClaudeCodeSetup, rel: string) => path.join(setup.sandbox.repo, rel);

/** The tree every scenario starts from: committed files and settings, the user's edit, the untracked file. */
function startTree(setup: ClaudeCodeSetup): Record<string, string> {
  return {
    '.claude/settings.json': fs.readFileSync(abs(setup, '.claude/settings.json'), 'utf8'),
    '.gitignore': 'ignored/\n',
    'README.md': USER_EDIT,
    'notes.txt': UNTRACKED,
    'src.txt': 'one\n',
  };
}

/** Read, Write (new file), Edit (after the Read it requires), and a shell edit: a completed turn's model steps. */
function editingTurn(setup: ClaudeCodeSetup): AnthropicStep[] {
  return [
    useTools(
      { name: 'Read', input: { file_path: abs(setup, 'src.txt') } },
      { name: 'Write', input: { file_path: abs(setup, 'added.txt'), content: 'written by Write\n' } },
    ),
    useTools({ name: 'Edit', input: { file_path: abs(setup, 'src.txt'), old_string: 'one', new_string: 'two' } }),
    useTools({
      name: 'Bash',
      input: { command: "printf 'shell\\n' > shell.txt && echo more >> src.txt", description: 'Write shell.txt' },
    }),
    say('Done.'),
  ];
}

function afterEditingTurn(setup: ClaudeCodeSetup): Record<string, string> {
  return { ...startTree(setup), 'added.txt': 'written by Write\n', 'shell.txt': 'shell\n', 'src.txt': 'two\nmore\n' };
}

/** Our hook never prints on stdout (it would reach the model) and never fails in these scenarios. */
function assertQuietHooks(setup: ClaudeCodeSetup, scenario: string): void {
  const timings = saveTimings(setup.sandbox, 'claude-code', scenario);
  assert.ok(timings.length > 0, 'our hooks ran');
  for (const t of timings) {
    assert.equal(t.stdoutBytes, 0, `${t.event}: our hook printed on stdout`);
    assert.equal(t.code, 0, `${t.event}: our hook exited ${t.code}`);
  }
}

describe('Claude Code 2.1.197 (real binary, mock model: Anthropic API on 127.0.0.1): turns, Undo and Redo', function () {
  this.timeout(180_000);
  before(() => assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first'));
  afterEach(async function () {
    for (const s of sessions.splice(0)) {
      if (this.currentTest?.state === 'failed') console.log(`--- the agent's terminal at the failure:\n${s.screen()}`);
      s.kill();
    }
    await stopAllAgents();
    for (const s of setups) await s.mock.close();
    await removeSandboxes();
  });

  it('completed turn with Write, Edit and a shell edit: one [Agent] version; Undo and Redo give the exact trees', async () => {
    const setup = await claude('completed', []);
    setup.mock.script(editingTurn(setup));
    const before = startTree(setup);
    assert.deepEqual(treeOf(setup.sandbox.repo), before);
    const content = inventory(setup.sandbox.repo);
    // connect gives the SessionEnd hook more than Claude Code's 1.5 s default before it is killed.
    const written = JSON.parse(before['.claude/settings.json']) as {
      hooks: Record<string, { hooks: { timeout?: number }[] }[]>;
    };
    assert.deepEqual(Object.keys(written.hooks), [
      'UserPromptSubmit',
      'Stop',
      'StopFailure',
      'SessionEnd',
      'PostToolUse',
      'PreToolUse',
    ]);
    assert.equal(written.hooks.SessionEnd[0].hooks[0].timeout, 10);

    const run = await claudePrint(setup, 'make the edits').exited;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(setup.mock.remaining(), 0, 'the model script was used up');
    saveModelRequest(setup.sandbox, 'claude-code', 'completed-after-tools', setup.mock.loopRequests().at(-1)!.body);
    const events = capturedEvents(setup.sandbox);
    saveSamples(setup.sandbox, 'claude-code', 'completed', events);
    assert.deepEqual(
      names(events).filter((e) =>
        ['SessionStart', 'UserPromptSubmit', 'Stop', 'StopFailure', 'SessionEnd'].includes(e),
      ),
      ['SessionStart', 'UserPromptSubmit', 'Stop', 'SessionEnd'],
    );
    // The file tools name what they wrote (issue 25 wants them): tool_input.file_path and tool_response.filePath.
    const writes = ofEvent(events, 'PostToolUse').filter((e) =>
      ['Write', 'Edit'].includes(String(e.payload.tool_name)),
    );
    assert.deepEqual(
      writes.map((e) => [e.payload.tool_name, (e.payload.tool_response as { filePath?: string }).filePath]),
      [
        ['Write', abs(setup, 'added.txt')],
        ['Edit', abs(setup, 'src.txt')],
      ],
    );
    assert.deepEqual(treeOf(setup.sandbox.repo), afterEditingTurn(setup));

    const turns = await turnsOf(setup.sandbox.repo);
    assert.equal(turns.length, 1);
    assert.deepEqual([turns[0].outcome, turns[0].chatId], ['completed', events[0].payload.session_id]);
    assert.ok(turns[0].version, 'the turn made a version');
    const versions = avhJson<{ subject: string; turnId?: string }[]>(setup.sandbox, ['versions']);
    assert.deepEqual(versions[0], { ...versions[0], subject: '[Agent] make the edits', turnId: turns[0].id });
    assert.deepEqual(avhJson<{ runningTurns: unknown[] }>(setup.sandbox, ['status']).runningTurns, []);

    const undo = avhJson<{ result: string; turnId: string }>(setup.sandbox, ['undo']);
    assert.deepEqual([undo.result, undo.turnId], ['restored', turns[0].id]);
    assert.deepEqual(treeOf(setup.sandbox.repo), before, 'Undo gives back the exact pre-turn tree');
    const redo = avhJson<{ result: string }>(setup.sandbox, ['redo']);
    assert.equal(redo.result, 'restored');
    assert.deepEqual(treeOf(setup.sandbox.repo), afterEditingTurn(setup), 'Redo gives back the exact turn');
    assertNothingLost(setup.sandbox.repo, content);
    assertQuietHooks(setup, 'completed');
  });

  it('a question turn after it changes nothing: plain Undo still undoes the turn before it (issue 23 #1)', async () => {
    const setup = await claude('question', []);
    setup.mock.script([...editingTurn(setup), say('It adds two files and edits src.txt.')]);
    const before = startTree(setup);
    const content = inventory(setup.sandbox.repo);
    assert.equal((await claudePrint(setup, 'make the edits').exited).code, 0);
    const asked = await claudePrint(setup, 'explain what you did', ['--continue']).exited;
    assert.equal(asked.code, 0, asked.stderr);
    const turns = await turnsOf(setup.sandbox.repo);
    assert.deepEqual(
      turns.map((t) => [t.outcome, t.version !== null, t.noVersionReason]),
      [
        ['completed', true, null],
        ['completed', false, 'no-changes'],
      ],
    );
    assert.equal(turns[0].chatId, turns[1].chatId, '--continue keeps the session id');
    assertQuietHooks(setup, 'question');

    const undo = avh(setup.sandbox, ['undo', '--json']);
    assert.equal(undo.code, 0, undo.stdout + undo.stderr);
    assert.equal(
      (JSON.parse(undo.stdout) as { turnId?: string }).turnId,
      turns[0].id,
      `Undo targets the turn that changed files, not the question: ${undo.stdout}`,
    );
    assert.deepEqual(treeOf(setup.sandbox.repo), before);
    assertNothingLost(setup.sandbox.repo, content);
  });

  it('print mode, SIGINT mid-turn: SessionEnd (no Stop) ends the turn cancelled; Undo takes the partial work away', async () => {
    const setup = await claude('sigint', []);
    setup.mock.script([
      useTools({ name: 'Write', input: { file_path: abs(setup, 'partial.txt'), content: 'half\n' } }),
      hang(),
    ]);
    const before = startTree(setup);
    const content = inventory(setup.sandbox.repo);
    const run = claudePrint(setup, 'start something long');
    await setup.mock.waitFor((r) => r.answeredWith === 'hang', 1, 60_000);
    await new Promise((r) => setTimeout(r, 300));
    run.signal('SIGINT');
    const exit = await run.exited;
    const events = capturedEvents(setup.sandbox);
    saveSamples(setup.sandbox, 'claude-code', 'print-sigint', events);
    assert.ok(!names(events).includes('Stop') && !names(events).includes('StopFailure'), names(events).join(' '));
    assert.equal(ofEvent(events, 'SessionEnd')[0]?.payload.reason, 'other');
    assert.equal(exit.signal, null, 'claude handles SIGINT itself and exits');

    const turns = await turnsOf(setup.sandbox.repo);
    assert.deepEqual(
      turns.map((t) => [t.outcome, t.version]),
      [['cancelled', null]],
    );
    assert.equal(fs.readFileSync(abs(setup, 'partial.txt'), 'utf8'), 'half\n', 'the partial work stays in the tree');
    const undo = avhJson<{ result: string; turnId: string }>(setup.sandbox, ['undo']);
    assert.deepEqual([undo.result, undo.turnId], ['restored', turns[0].id]);
    assert.deepEqual(treeOf(setup.sandbox.repo), before);
    assertNothingLost(setup.sandbox.repo, content);
    assertQuietHooks(setup, 'print-sigint');
  });

  it('interrupted, then "never mind" (--continue): undo --turn <interrupted>, then plain Undo never brings the partial work back (#1)', async () => {
    const setup = await claude('undo-turn', []);
    setup.mock.script([
      useTools({ name: 'Write', input: { file_path: abs(setup, 'partial.txt'), content: 'half\n' } }),
      hang(),
      say('Okay, I will leave it.'),
    ]);
    const before = startTree(setup);
    const run = claudePrint(setup, 'start something long');
    await setup.mock.waitFor((r) => r.answeredWith === 'hang', 1, 60_000);
    await new Promise((r) => setTimeout(r, 300));
    run.signal('SIGINT');
    await run.exited;
    assert.equal((await claudePrint(setup, 'never mind', ['--continue']).exited).code, 0);
    const [interrupted, question] = await turnsOf(setup.sandbox.repo);
    assert.deepEqual(
      [interrupted.outcome, question.outcome, question.noVersionReason],
      ['cancelled', 'completed', 'no-changes'],
    );
    assertQuietHooks(setup, 'undo-turn');
    const byTurn = avh(setup.sandbox, ['undo', '--turn', interrupted.id, '--json']);
    assert.equal(byTurn.code, 0, byTurn.stdout + byTurn.stderr);
    assert.deepEqual(treeOf(setup.sandbox.repo), before, 'undo --turn <interrupted> takes the partial work away');
    const plain = avh(setup.sandbox, ['undo', '--json']);
    assert.ok(!fs.existsSync(abs(setup, 'partial.txt')), `plain Undo brought the partial work back: ${plain.stdout}`);
    assert.deepEqual(treeOf(setup.sandbox.repo), before);
  });

  it('interactive (tmux), Escape mid-turn: no hook at all; "never mind" ends it cancelled; plain Undo takes it away (#1)', async () => {
    const setup = await claude('escape', []);
    setup.mock.script([
      useTools({ name: 'Write', input: { file_path: abs(setup, 'partial.txt'), content: 'half\n' } }),
      hang(),
      say('Okay, I will leave it.'),
    ]);
    const before = startTree(setup);
    const content = inventory(setup.sandbox.repo);
    const session = await claudeInteractive(setup);
    sessions.push(session);
    submitPrompt(session, 'start something long');
    await setup.mock.waitFor((r) => r.answeredWith === 'hang', 1, 60_000);
    await session.waitForScreen(/esc to interrupt/, 'the turn to be running');
    const beforeEscape = capturedEvents(setup.sandbox).length;
    session.keys('Escape');
    await session.waitForScreen(/Interrupted/, 'Claude Code to show the interruption');
    assert.equal(avhJson<{ runningTurns: unknown[] }>(setup.sandbox, ['status']).runningTurns.length, 1);

    submitPrompt(session, 'never mind');
    await waitUntil(() => names(capturedEvents(setup.sandbox)).includes('Stop'), 'the Stop of "never mind"', 60_000);
    // Escape sends no hook event: the first one after it is the next prompt's (an order, not a wait).
    const afterEscape = names(capturedEvents(setup.sandbox).slice(beforeEscape));
    assert.equal(afterEscape[0], 'UserPromptSubmit', `Escape sends no hook event: ${afterEscape.join(' ')}`);
    await session.waitForScreen(/Okay, I will leave it/, 'the answer to "never mind"');
    // Our Stop hook has finished: a Ctrl+C while Claude Code still runs it interrupts the hook (the screen says
    // "Interrupted") instead of asking to exit.
    await waitUntil(
      () => hookTimings(setup.sandbox).some((t) => t.event === 'Stop'),
      'our Stop hook to finish',
      60_000,
    );
    await quit(session);
    await waitUntil(() => names(capturedEvents(setup.sandbox)).includes('SessionEnd'), 'SessionEnd', 30_000);
    const events = capturedEvents(setup.sandbox);
    saveSamples(setup.sandbox, 'claude-code', 'interactive-escape', events);
    assert.equal(ofEvent(events, 'SessionEnd')[0].payload.reason, 'prompt_input_exit');
    const turns = await turnsOf(setup.sandbox.repo);
    assert.deepEqual(
      turns.map((t) => [t.outcome, t.version, t.noVersionReason]),
      [
        ['cancelled', null, 'not-completed'],
        ['completed', null, 'no-changes'],
      ],
    );
    assertQuietHooks(setup, 'interactive-escape');

    const undo = avh(setup.sandbox, ['undo', '--json']);
    assert.equal(undo.code, 0, `plain Undo after "never mind": ${undo.stdout}${undo.stderr}`);
    assert.deepEqual(treeOf(setup.sandbox.repo), before);
    assertNothingLost(setup.sandbox.repo, content);
  });

  const status = 500;
  it(`API error 500 (print mode): StopFailure and SessionEnd race; the turn is stored errored either way (#6)`, async () => {
    const setup = await claude(`error-${status}`, [httpError(status)]);
    const run = await claudePrint(setup, 'this will fail').exited;
    assert.equal(run.code, 1);
    // claude -p waits for its SessionEnd hooks (at most 1.5 s, CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS), not for
    // StopFailure's, which may still run after it exited.
    const stillRunning = processesUnder(setup.sandbox.root).length;
    await settled(setup.sandbox.root);
    const events = capturedEvents(setup.sandbox);
    saveSamples(setup.sandbox, 'claude-code', `api-error-${status}`, events);
    const failure = ofEvent(events, 'StopFailure')[0];
    const end = ofEvent(events, 'SessionEnd')[0];
    assert.ok(failure && end, names(events).join(' '));
    assert.equal(failure.payload.error, 'server_error');
    const gapMs = Number(failure.startedNs - end.startedNs) / 1e6;
    report('claude-stopfailure-gap', { status, gapMs, run: run.ms, hooksRunningAtExit: stillRunning });
    assert.ok(Math.abs(gapMs) < 200, `StopFailure and SessionEnd ${gapMs} ms apart`);
    assertQuietHooks(setup, `api-error-${status}`);
    const turns = await turnsOf(setup.sandbox.repo);
    assert.deepEqual(
      turns.map((t) => t.outcome),
      ['errored'],
      `StopFailure started ${gapMs.toFixed(1)} ms after SessionEnd`,
    );
  });

  it('one turn runs git reset --hard, git stash, git clean -fdx and rm -rf src between its edits: each checkpoint restores the exact tree before its command, then the turn’s Undo (issue 34)', async () => {
    const setup = await claude('checkpoints', []);
    const world = prepareCheckpointTurn(setup.sandbox);
    setup.mock.script([
      ...world.commands.map((command) => useTools({ name: 'Bash', input: { command, description: 'Run' } })),
      say('Done.'),
    ]);
    const run = await claudePrint(setup, 'tidy up the repository').exited;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(setup.mock.remaining(), 0, 'the model script was used up');
    const seen = ofEvent(capturedEvents(setup.sandbox), 'PreToolUse').map(
      (e) => (e.payload.tool_input as { command: string }).command,
    );
    const turns = await turnsOf(setup.sandbox.repo);
    assert.equal(turns.length, 1);
    assertEachCheckpointRestores(setup.sandbox, world, turns[0].id, seen);
    assertQuietHooks(setup, 'checkpoints');
  });

  it('connect --guard-destructive: PreToolUse denies git reset --hard (the tool never runs, the model reads why), after its checkpoint (issue 34)', async () => {
    const setup = await claude('guard', [], { connectArgs: ['--guard-destructive'] });
    const { repo } = setup.sandbox;
    setup.mock.script([
      useTools({ name: 'Bash', input: { command: "printf 'agent\\n' >> src.txt", description: 'Edit src.txt' } }),
      useTools({ name: 'Bash', input: { command: 'git reset --hard', description: 'Reset' } }),
      say('I will ask the user.'),
    ]);
    const content = inventory(repo);
    const run = await claudePrint(setup, 'tidy up the repository').exited;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(setup.mock.remaining(), 0, 'the model script was used up');
    // The command never ran: the user's edit, the untracked file and the agent's edit are all still there.
    assert.deepEqual(treeOf(repo), { ...startTree(setup), 'src.txt': 'one\nagent\n' });
    const turns = await turnsOf(repo);
    assertGuardDenied(setup.sandbox, {
      request: setup.mock.loopRequests().at(-1)!.body,
      label: 'git reset --hard',
      turnId: turns[0].id,
      event: 'PreToolUse',
    });
    saveTimings(setup.sandbox, 'claude-code', 'guard');
    assertNothingLost(repo, content);
  });

  it('a resumed session (--resume <id>) keeps the session id: one chat, a version per turn, Undo walks back', async () => {
    const setup = await claude('resume', []);
    setup.mock.script([
      useTools({ name: 'Write', input: { file_path: abs(setup, 'first.txt'), content: '1\n' } }),
      say('first done'),
      useTools({ name: 'Write', input: { file_path: abs(setup, 'second.txt'), content: '2\n' } }),
      say('second done'),
    ]);
    const before = startTree(setup);
    assert.equal((await claudePrint(setup, 'first').exited).code, 0);
    const sessionId = String(capturedEvents(setup.sandbox)[0].payload.session_id);
    clearCapture(setup.sandbox);
    // `--continue` keeps it too (the question and "never mind" scenarios resume that way).
    assert.equal((await claudePrint(setup, 'second', ['--resume', sessionId]).exited).code, 0);
    const events = capturedEvents(setup.sandbox);
    saveSamples(setup.sandbox, 'claude-code', 'resumed', events);
    assert.deepEqual(
      ofEvent(events, 'SessionStart').map((e) => [e.payload.source, e.payload.session_id]),
      [['resume', sessionId]],
    );
    const turns = await turnsOf(setup.sandbox.repo);
    assert.deepEqual(
      turns.map((t) => [t.chatId, t.seq, t.outcome, t.version !== null]),
      [
        [sessionId, 1, 'completed', true],
        [sessionId, 2, 'completed', true],
      ],
    );
    for (let i = 0; i < 2; i++) assert.equal(avhJson<{ result: string }>(setup.sandbox, ['undo']).result, 'restored');
    assert.deepEqual(treeOf(setup.sandbox.repo), before);
    assertQuietHooks(setup, 'resumed');
  });
});
