/**
 * The real Codex binary (0.171.0, scripts/agents/setup.sh) against a mock model: a scripted OpenAI Responses API on
 * 127.0.0.1. The hooks are the ones the shipped `node dist/cli.js connect codex --project` writes (run through the
 * timer), beside a capture hook on every Codex event in `$CODEX_HOME/hooks.json`; our state is read back through
 * the shipped CLI. Scenario runs pass `--dangerously-bypass-hook-trust` (Codex's own switch for automation); the
 * trust tests drive the real review in Codex's TUI and check what doctor reads of it.
 *
 * The question turn needs the turn-semantics fix of issue 23 (#1: a turn that changed nothing is never Undo's
 * target) and fails without it.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { killProcessesUnder, stopAllAgents, waitUntil } from './support/agentProcess';
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
  saveModelRequest,
  saveSamples,
  saveTimings,
  treeOf,
  turnsOf,
  UNTRACKED,
  USER_EDIT,
} from './support/agentSandbox';
import {
  CODEX_EVENTS,
  codexExec,
  codexHookKey,
  codexInteractive,
  CodexSetup,
  setUpCodex,
  submitCodexPrompt,
} from './support/codexSession';
import { codexEventLabel, codexTrustHash } from '../../src/cli/agents/codex';
import {
  applyPatch,
  callFunctions,
  reply,
  responsesHang,
  responsesHttpError,
  ResponsesStep,
} from './support/openaiResponsesMock';
import { assertEachCheckpointRestores, assertGuardDenied, prepareCheckpointTurn } from './support/commandCheckpoints';
import { TmuxSession } from './support/tmuxSession';
import { assertNothingLost, cleanupTempDirs } from '../support/gitFixtures';

const setups: CodexSetup[] = [];
const sessions: TmuxSession[] = [];

async function removeSandboxes(): Promise<void> {
  for (const s of setups) {
    const left = killProcessesUnder(s.sandbox.root);
    if (left > 0) console.log(`killed ${left} process(es) the agent left running under ${s.sandbox.root}`);
  }
  for (const s of setups.splice(0)) await removeSandbox(s.sandbox);
  cleanupTempDirs();
}

async function codex(name: string, script: ResponsesStep[], options: Parameters<typeof setUpCodex>[1] = {}) {
  const setup = await setUpCodex(makeSandbox(`codex-${name}`), { timeHooks: true, script, ...options });
  setups.push(setup);
  return setup;
}

const names = (events: CapturedEvent[]) => events.map((e) => e.event);
const ofEvent = (events: CapturedEvent[], event: string) => events.filter((e) => e.event === event);
const lifecycle = (events: CapturedEvent[]) =>
  names(events).filter((e) => !['PreModelRequest', 'PostModelRequest', 'PreToolUse', 'PostToolUse'].includes(e));

function startTree(setup: CodexSetup): Record<string, string> {
  return {
    '.codex/hooks.json': fs.readFileSync(path.join(setup.sandbox.repo, '.codex/hooks.json'), 'utf8'),
    '.gitignore': 'ignored/\n',
    'README.md': USER_EDIT,
    'notes.txt': UNTRACKED,
    'src.txt': 'one\n',
  };
}

const EDIT_PATCH =
  '*** Begin Patch\n*** Add File: added.txt\n+written by apply_patch\n*** Update File: src.txt\n@@\n-one\n+two\n*** End Patch\n';

function editingTurn(): ResponsesStep[] {
  return [
    applyPatch(EDIT_PATCH),
    callFunctions({
      name: 'exec_command',
      arguments: { cmd: "printf 'shell\\n' > shell.txt && echo more >> src.txt" },
    }),
    reply('Done.'),
  ];
}

function afterEditingTurn(setup: CodexSetup): Record<string, string> {
  return {
    ...startTree(setup),
    'added.txt': 'written by apply_patch\n',
    'shell.txt': 'shell\n',
    'src.txt': 'two\nmore\n',
  };
}

function assertQuietHooks(setup: CodexSetup, scenario: string): void {
  const timings = saveTimings(setup.sandbox, 'codex', scenario);
  assert.ok(timings.length > 0, 'our hooks ran');
  for (const t of timings) {
    assert.equal(t.stdoutBytes, 0, `${t.event}: our hook printed on stdout`);
    assert.equal(t.code, 0, `${t.event}: our hook exited ${t.code}`);
  }
}

/** Ctrl+C on an idle composer, again if Codex asks for a second one, until it exits. */
async function quit(session: TmuxSession): Promise<void> {
  for (let i = 0; i < 3 && session.alive(); i++) {
    try {
      session.keys('C-c');
    } catch (error) {
      if (session.alive()) throw error; // it exited between the check and the keys: what we wanted
    }
    await new Promise((r) => setTimeout(r, 800));
  }
  await session.waitForExit('Codex to exit');
}

describe('Codex 0.171.0 (real binary, mock model: Responses API on 127.0.0.1): hook trust, turns, Undo and Redo', function () {
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

  it('connect codex --project: an unreviewed hook never runs, codex exec says nothing, and doctor must say so (#4)', async () => {
    // Not timed: doctor must see the command exactly as connect wrote it.
    const setup = await codex('fresh', editingTurn(), { timeHooks: false });
    const run = await codexExec(setup, 'make the edits', { bypassHookTrust: false }).exited;
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(capturedEvents(setup.sandbox), [], 'no hook ran, not even the user-level capture hook');
    assert.deepEqual(hookTimings(setup.sandbox), []);
    const said = run.stderr.split(setup.sandbox.root).join('<sandbox>');
    assert.doesNotMatch(said, /hook|trust|review/i, `codex exec says nothing about the skipped hooks:\n${said}`);
    assert.deepEqual(await turnsOf(setup.sandbox.repo), [], 'nothing was recorded');
    const report = avh(setup.sandbox, ['doctor', '--json'], { CODEX_HOME: setup.codexHome });
    assert.equal(report.code, 1, 'a problem: Codex will not run the hooks');
    const doctor = JSON.parse(report.stdout) as {
      checks: { id: string; status: string; summary: string; fix?: string }[];
    };
    const check = doctor.checks.find((c) => c.id === 'hooks:codex')!;
    assert.equal(check.status, 'problem', `doctor: ${check.summary}`);
    assert.match(check.summary, /Codex skips these hooks, silently \(not reviewed yet: UserPromptSubmit, Stop/);
    assert.match(check.fix!, /Trust all and continue/);
    // connect said what to do, in Codex's own words.
    const advice = avh(setup.sandbox, ['connect', 'codex', '--project'], { CODEX_HOME: setup.codexHome }).stdout;
    assert.match(advice, /Then, in Codex:\n.*trusted project.*\n.*“Trust all and continue” on “Hooks need review”/);
  });

  it('the review in Codex ("Trust all and continue") stores a trusted_hash per hook; exec then runs them; a changed command is skipped again', async () => {
    const setup = await codex('review', editingTurn(), { capture: false, timeHooks: false });
    const hooksFile = setup.hooksFile!;
    const config = () => fs.readFileSync(path.join(setup.codexHome, 'config.toml'), 'utf8');
    const session = await codexInteractive(setup, { bypassHookTrust: false });
    sessions.push(session);
    const screen = await session.waitForScreen(/Trust all and continue/, 'the startup hook review');
    const ours = Object.keys((JSON.parse(fs.readFileSync(hooksFile, 'utf8')) as { hooks: object }).hooks);
    const known = ours.filter((e) => (CODEX_EVENTS as readonly string[]).includes(e));
    assert.match(screen, new RegExp(`${known.length} hooks? (is|are) new or changed`));
    // 1. Review hooks  2. Trust all and continue  3. Continue without trusting (hooks won't run)
    await new Promise((r) => setTimeout(r, 500));
    session.keys('Down');
    await session.waitForScreen(/› 2\. Trust all and continue/, 'the second choice selected');
    session.keys('Enter');
    await session.waitForScreen(/Ask Codex to do anything/, 'the composer after trusting');
    // The TUI writes its review entries one by one, the last ones after the composer is back.
    assert.deepEqual(known, ours, 'connect writes only events Codex has');
    const keys = known.map((event) => codexHookKey(hooksFile, codexEventLabel(event)));
    await waitUntil(() => keys.every((key) => config().includes(key)), 'every hook reviewed in config.toml', 15_000);
    await quit(session);

    const written = JSON.parse(fs.readFileSync(hooksFile, 'utf8')) as {
      hooks: Record<string, { hooks: { command: string; timeout?: number }[] }[]>;
    };
    for (const event of known) {
      // What doctor computes (src/cli/agents/codex.ts) is what Codex itself stored when the user reviewed the hook:
      // for Interrupt and SessionEnd the timeout connect writes (3 s, the most Codex allows them) is part of it.
      const key = codexHookKey(hooksFile, codexEventLabel(event));
      const { command, timeout } = written.hooks[event][0].hooks[0];
      const hash = codexTrustHash(event, command, timeout);
      assert.ok(
        config().includes(`[hooks.state."${key}"]\ntrusted_hash = "${hash}"`),
        `${event}: ${key} = ${hash}\n${config()}`,
      );
    }
    const doctor = () =>
      (
        JSON.parse(avh(setup.sandbox, ['doctor', '--json'], { CODEX_HOME: setup.codexHome }).stdout) as {
          checks: { id: string; status: string; summary: string }[];
        }
      ).checks.find((c) => c.id === 'hooks:codex')!;
    assert.equal(doctor().status, 'ok', doctor().summary);
    assert.match(doctor().summary, /every hook is reviewed in Codex/);

    const trusted = await codexExec(setup, 'make the edits', { bypassHookTrust: false }).exited;
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.deepEqual(
      (await turnsOf(setup.sandbox.repo)).map((t) => t.outcome),
      ['completed'],
      'reviewed hooks run under plain codex exec',
    );

    // Any change to the command (here: connect --init) makes it "modified": skipped, silently, until reviewed again.
    const changed = avh(setup.sandbox, ['connect', 'codex', '--project', '--init']);
    assert.equal(changed.code, 0, changed.stderr);
    assert.equal(doctor().status, 'problem');
    assert.match(doctor().summary, /changed since you reviewed them: UserPromptSubmit, Stop, Interrupt, SessionEnd/);
    const before = (await turnsOf(setup.sandbox.repo)).length;
    const modified = await codexExec(setup, 'once more', { bypassHookTrust: false }).exited;
    assert.equal(modified.code, 0, modified.stderr);
    assert.equal((await turnsOf(setup.sandbox.repo)).length, before, 'the modified hook did not run');
    assert.doesNotMatch(modified.stderr.split(setup.sandbox.root).join('<sandbox>'), /hook|trust|review/i);
  });

  it('connect codex writes only events Codex 0.171 has: no StopFailure; Interrupt and SessionEnd connected (#3, #2)', async () => {
    const setup = await codex('events', []);
    const written = Object.keys((JSON.parse(fs.readFileSync(setup.hooksFile!, 'utf8')) as { hooks: object }).hooks);
    assert.deepEqual(
      written.filter((e) => !(CODEX_EVENTS as readonly string[]).includes(e)),
      [],
      `events Codex does not have: ${written.join(', ')}`,
    );
    for (const needed of ['UserPromptSubmit', 'Stop', 'Interrupt', 'SessionEnd'])
      assert.ok(written.includes(needed), needed);
  });

  it('connect codex --user writes $CODEX_HOME/hooks.json, where Codex reads it (#5)', async () => {
    const setup = await codex('user-scope', [], { connect: 'none' });
    const r = avhJson<{ file: string }>(setup.sandbox, ['connect', 'codex', '--user'], { CODEX_HOME: setup.codexHome });
    assert.equal(r.file, path.join(setup.codexHome, 'hooks.json'));
  });

  it('completed turn with apply_patch and exec_command: one [Agent] version; Undo and Redo give the exact trees', async () => {
    const setup = await codex('completed', editingTurn());
    const before = startTree(setup);
    assert.deepEqual(treeOf(setup.sandbox.repo), before);
    const content = inventory(setup.sandbox.repo);
    const run = await codexExec(setup, 'make the edits').exited;
    assert.equal(run.code, 0, run.stderr);
    const events = capturedEvents(setup.sandbox);
    saveSamples(setup.sandbox, 'codex', 'completed', events);
    saveModelRequest(setup.sandbox, 'codex', 'completed-after-tools', setup.mock.turnRequests().at(-1)!.body);
    assert.deepEqual(lifecycle(events), ['SessionStart', 'UserPromptSubmit', 'Stop', 'SessionEnd']);
    // apply_patch names its files only inside the patch text (relative to cwd); exec_command is reported as Bash.
    const tools = ofEvent(events, 'PostToolUse').map((e) => [
      e.payload.tool_name,
      (e.payload.tool_input as { command: string }).command,
    ]);
    assert.deepEqual(tools, [
      ['apply_patch', EDIT_PATCH],
      ['Bash', "printf 'shell\\n' > shell.txt && echo more >> src.txt"],
    ]);
    assert.deepEqual(treeOf(setup.sandbox.repo), afterEditingTurn(setup));
    const turns = await turnsOf(setup.sandbox.repo);
    assert.deepEqual(
      turns.map((t) => [t.chatId, t.outcome, t.version !== null]),
      [[`codex:${String(events[0].payload.session_id)}`, 'completed', true]],
    );
    assert.equal(avhJson<{ result: string }>(setup.sandbox, ['undo']).result, 'restored');
    assert.deepEqual(treeOf(setup.sandbox.repo), before);
    assert.equal(avhJson<{ result: string }>(setup.sandbox, ['redo']).result, 'restored');
    assert.deepEqual(treeOf(setup.sandbox.repo), afterEditingTurn(setup));
    assertNothingLost(setup.sandbox.repo, content);
    assertQuietHooks(setup, 'completed');
  });

  it('one turn runs git reset --hard, git stash, git clean -fdx and rm -r src between its edits: each checkpoint restores the exact tree before its command, then the turn’s Undo (issue 34)', async () => {
    const setup = await codex('checkpoints', []);
    // Codex itself refuses `rm -rf` without an approval (its own check): `rm -r` runs.
    const world = prepareCheckpointTurn(setup.sandbox, { rm: 'rm -r src' });
    setup.mock.script([
      ...world.commands.map((cmd) => callFunctions({ name: 'exec_command', arguments: { cmd } })),
      reply('Done.'),
    ]);
    const run = await codexExec(setup, 'tidy up').exited;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(setup.mock.remaining(), 0, 'the model script was used up');
    const seen = ofEvent(capturedEvents(setup.sandbox), 'PreToolUse').map(
      (e) => (e.payload.tool_input as { command: unknown }).command,
    );
    const turns = await turnsOf(setup.sandbox.repo);
    assert.equal(turns.length, 1);
    assertEachCheckpointRestores(setup.sandbox, world, turns[0].id, seen);
    assertQuietHooks(setup, 'checkpoints');
  });

  it('connect --guard-destructive: PreToolUse denies git reset --hard (the command never runs, the model reads why), after its checkpoint (issue 34)', async () => {
    const setup = await codex('guard', [], { connectArgs: ['--guard-destructive'] });
    setup.mock.script([
      callFunctions({ name: 'exec_command', arguments: { cmd: "printf 'agent\\n' >> src.txt" } }),
      callFunctions({ name: 'exec_command', arguments: { cmd: 'git reset --hard' } }),
      reply('I will ask the user.'),
    ]);
    const before = startTree(setup);
    const content = inventory(setup.sandbox.repo);
    const run = await codexExec(setup, 'tidy up').exited;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(setup.mock.remaining(), 0, 'the model script was used up');
    // The command never ran: the user's edit, the untracked file and the agent's edit are all still there.
    assert.deepEqual(treeOf(setup.sandbox.repo), { ...before, 'src.txt': 'one\nagent\n' });
    const turns = await turnsOf(setup.sandbox.repo);
    assertGuardDenied(setup.sandbox, {
      request: setup.mock.turnRequests().at(-1)!.body,
      label: 'git reset --hard',
      turnId: turns[0].id,
      event: 'PreToolUse',
    });
    saveModelRequest(setup.sandbox, 'codex', 'guard-denied', setup.mock.turnRequests().at(-1)!.body);
    assertNothingLost(setup.sandbox.repo, content);
  });

  it('a question turn after it (exec resume --last) changes nothing: plain Undo still undoes the turn before it (#1)', async () => {
    const setup = await codex('question', [...editingTurn(), reply('It added two files.')]);
    const before = startTree(setup);
    assert.equal((await codexExec(setup, 'make the edits').exited).code, 0);
    assert.equal((await codexExec(setup, 'what did you do?', { resume: 'last' }).exited).code, 0);
    const turns = await turnsOf(setup.sandbox.repo);
    assert.deepEqual(
      turns.map((t) => [t.outcome, t.version !== null]),
      [
        ['completed', true],
        ['completed', false],
      ],
    );
    assertQuietHooks(setup, 'question');
    const undo = avh(setup.sandbox, ['undo', '--json']);
    assert.equal(undo.code, 0, undo.stdout + undo.stderr);
    assert.equal(
      (JSON.parse(undo.stdout) as { turnId?: string }).turnId,
      turns[0].id,
      `Undo targets the turn that changed files, not the question: ${undo.stdout}`,
    );
    assert.deepEqual(treeOf(setup.sandbox.repo), before);
  });

  it('codex exec, SIGINT mid-turn: Interrupt then SessionEnd, no Stop; the turn must end cancelled (#2)', async () => {
    const setup = await codex('sigint', [
      applyPatch('*** Begin Patch\n*** Add File: partial.txt\n+half\n*** End Patch\n'),
      responsesHang(),
    ]);
    const before = startTree(setup);
    const run = codexExec(setup, 'start something long');
    await setup.mock.waitFor((r) => r.answeredWith === 'hang', 1, 60_000);
    await new Promise((r) => setTimeout(r, 300));
    run.signal('SIGINT');
    const exit = await run.exited;
    assert.equal(exit.code, 1);
    const events = capturedEvents(setup.sandbox);
    saveSamples(setup.sandbox, 'codex', 'exec-sigint', events);
    assert.deepEqual(lifecycle(events), ['SessionStart', 'UserPromptSubmit', 'Interrupt', 'SessionEnd']);
    assert.equal(
      ofEvent(events, 'Interrupt')[0].payload.turn_id,
      ofEvent(events, 'UserPromptSubmit')[0].payload.turn_id,
    );
    assertQuietHooks(setup, 'exec-sigint');
    assert.deepEqual(
      (await turnsOf(setup.sandbox.repo)).map((t) => t.outcome),
      ['cancelled'],
      'Interrupt / SessionEnd end the turn',
    );
    assert.equal(avhJson<{ result: string }>(setup.sandbox, ['undo']).result, 'restored');
    assert.deepEqual(treeOf(setup.sandbox.repo), before);
  });

  it('interactive (tmux): Escape and Ctrl+C send Interrupt (no Stop) and a cancelled PostModelRequest; the turn must end cancelled (#2)', async () => {
    const setup = await codex('tui-interrupt', [
      applyPatch('*** Begin Patch\n*** Add File: partial.txt\n+half\n*** End Patch\n'),
      responsesHang(),
      responsesHang(),
    ]);
    const session = await codexInteractive(setup);
    sessions.push(session);
    for (const [i, key] of (['Escape', 'C-c'] as const).entries()) {
      clearCapture(setup.sandbox);
      await submitCodexPrompt(session, i === 0 ? 'start something long' : 'and another');
      await setup.mock.waitFor((r) => r.answeredWith === 'hang', i + 1, 60_000);
      await session.waitForScreen(/esc to interrupt/, 'the turn to be running');
      session.keys(key);
      await waitUntil(
        () => names(capturedEvents(setup.sandbox)).includes('Interrupt'),
        `Interrupt after ${key}`,
        30_000,
      );
      await waitUntil(
        () => ofEvent(capturedEvents(setup.sandbox), 'PostModelRequest').some((e) => e.payload.status === 'cancelled'),
        'the cancelled PostModelRequest',
      );
      const events = capturedEvents(setup.sandbox);
      saveSamples(setup.sandbox, 'codex', `tui-${key === 'C-c' ? 'ctrl-c' : 'escape'}`, events);
      assert.ok(!names(events).includes('Stop'), names(events).join(' '));
      await session.waitForScreen(/Conversation interrupted/, 'the interruption notice');
    }
    // Our Interrupt hooks have finished (the timer logs each when its command exits).
    await waitUntil(
      () => hookTimings(setup.sandbox).filter((t) => t.event === 'Interrupt').length === 2,
      'both Interrupt hooks to finish',
      30_000,
    );
    assertQuietHooks(setup, 'tui-interrupt');
    const running = avhJson<{ runningTurns: unknown[] }>(setup.sandbox, ['status']).runningTurns;
    await quit(session);
    assert.deepEqual(running, [], 'no turn stays running after an interrupt');
    assert.deepEqual(
      (await turnsOf(setup.sandbox.repo)).map((t) => [t.outcome, t.version]),
      [
        ['cancelled', null],
        ['cancelled', null],
      ],
    );
  });

  it('API error (HTTP 500): PostModelRequest status failed, then SessionEnd, no Stop; the turn must end errored', async () => {
    const setup = await codex('api-error', [responsesHttpError(500)]);
    const run = await codexExec(setup, 'this will fail').exited;
    assert.equal(run.code, 1);
    const events = capturedEvents(setup.sandbox);
    saveSamples(setup.sandbox, 'codex', 'api-error-500', events);
    assert.deepEqual(names(events), [
      'SessionStart',
      'UserPromptSubmit',
      'PreModelRequest',
      'PostModelRequest',
      'SessionEnd',
    ]);
    const post = ofEvent(events, 'PostModelRequest')[0].payload;
    assert.deepEqual([post.status, post.attempt_number], ['failed', 1]);
    assertQuietHooks(setup, 'api-error');
    assert.deepEqual(
      (await turnsOf(setup.sandbox.repo)).map((t) => t.outcome),
      ['errored'],
    );
  });

  it('codex exec resume <id> keeps the session id: one chat, a version per turn, Undo walks back', async () => {
    const patch = (name: string) => applyPatch(`*** Begin Patch\n*** Add File: ${name}\n+${name}\n*** End Patch\n`);
    const setup = await codex('resume', [patch('first.txt'), reply('1'), patch('second.txt'), reply('2')]);
    const before = startTree(setup);
    assert.equal((await codexExec(setup, 'first').exited).code, 0);
    const sessionId = String(capturedEvents(setup.sandbox)[0].payload.session_id);
    clearCapture(setup.sandbox);
    // `exec resume --last` keeps it too (the question scenario resumes that way).
    assert.equal((await codexExec(setup, 'second', { resume: sessionId }).exited).code, 0);
    const events = capturedEvents(setup.sandbox);
    saveSamples(setup.sandbox, 'codex', 'resumed', events);
    assert.deepEqual(
      ofEvent(events, 'SessionStart').map((e) => [e.payload.source, e.payload.session_id]),
      [['resume', sessionId]],
    );
    const turns = await turnsOf(setup.sandbox.repo);
    assert.deepEqual(
      turns.map((t) => [t.chatId, t.seq, t.outcome, t.version !== null]),
      [1, 2].map((seq) => [`codex:${sessionId}`, seq, 'completed', true]),
    );
    for (let i = 0; i < 2; i++) assert.equal(avhJson<{ result: string }>(setup.sandbox, ['undo']).result, 'restored');
    assert.deepEqual(treeOf(setup.sandbox.repo), before);
    assertQuietHooks(setup, 'resumed');
  });
});
