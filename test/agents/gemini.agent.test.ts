/**
 * The real Gemini CLI 0.61.0 (npm @google/gemini-cli) against a mock model: GEMINI_API_KEY (any value) and
 * GOOGLE_GEMINI_BASE_URL pointing at a Gemini API mock on 127.0.0.1, no Google sign-in
 * (`security.auth.selectedType: "gemini-api-key"` in the user settings: 0.61 refuses the "gateway" auth type the
 * base URL alone selects). The hooks are the ones the shipped `node dist/cli.js connect gemini --project` merges into
 * .gemini/settings.json (run through the timer), beside a capture hook on every lifecycle event; the folder is
 * trusted the way Gemini's trust dialog stores it (in an untrusted folder Gemini registers no hook at all).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AgentBinary, geminiBinary } from './support/agentBinaries';
import { startAgent, stopAllAgents, sweepProcesses, waitUntil } from './support/agentProcess';
import {
  addCaptureHooks,
  addUserWork,
  agentEnv,
  avh,
  avhJson,
  capturedEvents,
  clearCapture,
  commitSettings,
  DIST_CLI,
  hookTimings,
  inventory,
  makeSandbox,
  removeSandbox,
  Sandbox,
  saveSamples,
  timeOurHooks,
  treeOf,
  turnsOf,
} from './support/agentSandbox';
import {
  GeminiMock,
  geminiCalls,
  geminiHang,
  geminiHttpError,
  geminiReply,
  isAgentLoopRequest,
  lastUserText,
  startGeminiMock,
} from './support/geminiMock';
import { assertEachCheckpointRestores, assertGuardDenied, prepareCheckpointTurn } from './support/commandCheckpoints';
import { TmuxSession } from './support/tmuxSession';
import { assertNothingLost, cleanupTempDirs } from '../support/gitFixtures';

const CAPTURED = ['SessionStart', 'BeforeAgent', 'AfterAgent', 'SessionEnd', 'BeforeTool'];

describe('Gemini CLI 0.61.0 (real binary, mock model: Gemini API on 127.0.0.1): turns, Undo and Redo', function () {
  this.timeout(180_000);
  let bin: AgentBinary;
  let mock: GeminiMock;
  let sandbox: Sandbox;
  const tmux: TmuxSession[] = [];

  before(() => {
    assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first');
    bin = geminiBinary();
  });

  beforeEach(async () => {
    mock = await startGeminiMock();
    sandbox = makeSandbox('gemini');
    const r = avh(sandbox, ['connect', 'gemini', '--project', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const settings = (JSON.parse(r.stdout) as { file: string }).file;
    timeOurHooks(sandbox, settings);
    addCaptureHooks(settings, CAPTURED);
    commitSettings(sandbox, '.gemini');
    addUserWork(sandbox);
    const userDir = path.join(sandbox.home, '.gemini');
    fs.mkdirSync(userDir, { recursive: true });
    fs.writeFileSync(
      path.join(userDir, 'settings.json'),
      JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }),
    );
    // What Gemini's folder-trust dialog stores (the user's step, as `connect gemini` says).
    fs.writeFileSync(path.join(userDir, 'trustedFolders.json'), JSON.stringify({ [sandbox.repo]: 'TRUST_FOLDER' }));
  });

  afterEach(async () => {
    for (const t of tmux.splice(0)) t.kill();
    await stopAllAgents();
    await mock.close();
    await sweepProcesses(sandbox.root);
    await removeSandbox(sandbox);
    cleanupTempDirs();
  });

  function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return agentEnv(sandbox, {
      GEMINI_CLI_HOME: sandbox.home,
      GEMINI_API_KEY: 'mock-key',
      GOOGLE_GEMINI_BASE_URL: mock.url,
      // One process (no relaunch with a bigger heap), so a signal reaches the process that runs the turn.
      GEMINI_CLI_NO_RELAUNCH: 'true',
      AVH_CAPTURE_DIR: sandbox.captureDir,
      ...extra,
    });
  }

  function prompt(text: string, args: string[] = [], extraEnv: NodeJS.ProcessEnv = {}) {
    return startAgent(bin.path, [...bin.prefix, '-p', text, '-m', 'gemini-2.5-flash', '--yolo', ...args], {
      cwd: sandbox.repo,
      env: env(extraEnv),
      timeoutMs: 90_000,
    });
  }

  const lifecycle = () =>
    capturedEvents(sandbox)
      .map((e) => e.event)
      .filter((e) => e !== 'SessionStart' && e !== 'BeforeTool');

  function assertQuietHooks(): void {
    const timings = hookTimings(sandbox);
    assert.ok(timings.length > 0, 'our hooks ran');
    for (const t of timings) {
      assert.equal(t.stdoutBytes, 0, `${t.event}: our hook printed on stdout`);
      assert.equal(t.code, 0, `${t.event}: our hook exited ${t.code}`);
    }
  }

  it('a completed turn (write_file, replace, run_shell_command): one gemini version; Undo and Redo give the exact trees', async () => {
    const before = treeOf(sandbox.repo);
    const content = inventory(sandbox.repo);
    mock.script([
      geminiCalls(
        { name: 'write_file', args: { file_path: path.join(sandbox.repo, 'greet.txt'), content: 'hi from gemini\n' } },
        {
          name: 'replace',
          args: {
            file_path: path.join(sandbox.repo, 'src.txt'),
            old_string: 'one',
            new_string: 'one, edited',
            instruction: 'edit',
          },
        },
      ),
      geminiCalls({ name: 'run_shell_command', args: { command: 'echo shell >> shell.txt', description: 'append' } }),
      geminiReply('Done.'),
    ]);
    const exit = await prompt('Make a greeting').exited;
    assert.equal(exit.code, 0, exit.stderr);
    const captured = capturedEvents(sandbox);
    saveSamples(sandbox, 'gemini', 'completed-turn', captured);
    assert.deepEqual(lifecycle(), ['BeforeAgent', 'AfterAgent', 'SessionEnd']);
    const after = treeOf(sandbox.repo);
    assert.equal(after['greet.txt'], 'hi from gemini\n');
    assert.equal(after['src.txt'], 'one, edited\n');
    assert.equal(after['shell.txt'], 'shell\n');
    const session = String(captured.find((e) => e.event === 'BeforeAgent')!.payload.session_id);
    const turns = await turnsOf(sandbox.repo);
    assert.deepEqual(
      turns.map((t) => [t.agent, t.chatId, t.outcome, t.version !== null]),
      [['gemini', `gemini:${session}`, 'completed', true]],
    );
    assert.equal(avhJson<{ result: string }>(sandbox, ['undo']).result, 'restored');
    assert.deepEqual(
      treeOf(sandbox.repo),
      before,
      'Undo: the pre-turn tree, the user edit and untracked file included',
    );
    assert.equal(avhJson<{ result: string }>(sandbox, ['redo']).result, 'restored');
    assert.deepEqual(treeOf(sandbox.repo), after);
    assertNothingLost(sandbox.repo, content);
    assertQuietHooks();
  });

  it('one turn runs git reset --hard, git stash, git clean -fdx and rm -rf src between its edits: each checkpoint restores the exact tree before its command, then the turn’s Undo (issue 34)', async () => {
    const world = prepareCheckpointTurn(sandbox);
    mock.script([
      ...world.commands.map((command) =>
        geminiCalls({ name: 'run_shell_command', args: { command, description: 'run' } }),
      ),
      geminiReply('Done.'),
    ]);
    const exit = await prompt('tidy up the repository').exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(mock.remaining(), 0, 'the model script was used up');
    const tools = capturedEvents(sandbox).filter((e) => e.event === 'BeforeTool');
    saveSamples(sandbox, 'gemini', 'before-tool', tools);
    // Gemini 0.61's BeforeTool: the tool's name and its arguments as the model sent them.
    assert.deepEqual(new Set(tools.map((e) => e.payload.tool_name)), new Set(['run_shell_command']));
    const turns = await turnsOf(sandbox.repo);
    assert.equal(turns.length, 1);
    assertEachCheckpointRestores(
      sandbox,
      world,
      turns[0].id,
      tools.map((e) => (e.payload.tool_input as { command?: unknown }).command),
    );
    assertQuietHooks();
  });

  it('connect --guard-destructive: BeforeTool denies rm -rf (the tool never runs, the model reads why), after its checkpoint (issue 34)', async () => {
    const { repo } = sandbox;
    const file = path.join(repo, '.gemini', 'settings.json');
    fs.rmSync(file);
    const r = avh(sandbox, ['connect', 'gemini', '--project', '--guard-destructive', '--json']);
    assert.equal(r.code, 0, r.stderr);
    timeOurHooks(sandbox, file);
    addCaptureHooks(file, CAPTURED);
    commitSettings(sandbox, '.gemini');
    const start = treeOf(repo);
    const content = inventory(repo);
    mock.script([
      geminiCalls({
        name: 'run_shell_command',
        args: { command: "printf 'agent\\n' >> src.txt", description: 'edit' },
      }),
      geminiCalls({ name: 'run_shell_command', args: { command: 'rm -rf src.txt notes.txt', description: 'rm' } }),
      geminiReply('I will ask the user.'),
    ]);
    const exit = await prompt('tidy up the repository').exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(mock.remaining(), 0, 'the model script was used up');
    // The command never ran: the agent's edit and the untracked file are still there.
    assert.deepEqual(treeOf(repo), { ...start, 'src.txt': 'one\nagent\n' });
    const turns = await turnsOf(repo);
    assertGuardDenied(sandbox, {
      request: mock.turnRequests().at(-1)!.body,
      label: 'rm -r',
      turnId: turns[0].id,
      event: 'BeforeTool',
    });
    assertNothingLost(repo, content);
  });

  it('an API error and a SIGINT send no AfterAgent: SessionEnd ends each turn cancelled; Undo takes the partial work away', async () => {
    const start = treeOf(sandbox.repo);
    mock.script([geminiHttpError(400)]); // a 500 is retried with backoff for minutes
    const failed = await prompt('Break please').exited;
    assert.notEqual(failed.code, 0);
    assert.deepEqual(lifecycle(), ['BeforeAgent', 'SessionEnd']);

    clearCapture(sandbox);
    mock.script([
      geminiCalls({ name: 'run_shell_command', args: { command: 'echo partial >> partial.txt', description: 'p' } }),
      geminiHang(),
    ]);
    const run = prompt('Do partial work');
    await waitUntil(() => fs.existsSync(path.join(sandbox.repo, 'partial.txt')), 'the partial edit', 60_000);
    await mock.waitFor((r) => isAgentLoopRequest(r) && r.answeredWith === 'hang', 1, 30_000);
    run.signal('SIGINT');
    await run.exited;
    assert.deepEqual(lifecycle(), ['BeforeAgent', 'SessionEnd']);
    assert.equal(capturedEvents(sandbox).at(-1)!.payload.reason, 'exit');
    // Gemini has no error event: an API error is recorded as cancelled, like an interrupt.
    assert.deepEqual(
      (await turnsOf(sandbox.repo)).map((t) => [t.outcome, t.version]),
      [
        ['cancelled', null],
        ['cancelled', null],
      ],
    );
    assert.equal(avhJson<{ result: string }>(sandbox, ['undo']).result, 'restored');
    assert.deepEqual(treeOf(sandbox.repo), start);
    assertQuietHooks();
  });

  it('Undo that the agent hears about: after `agent-versions undo`, the resumed session’s next prompt carries one note as <hook_context>', async () => {
    const content = inventory(sandbox.repo);
    const before = treeOf(sandbox.repo);
    mock.script([
      geminiCalls({ name: 'write_file', args: { file_path: path.join(sandbox.repo, 'greet.txt'), content: 'hi\n' } }),
      geminiReply('Done.'),
      geminiReply('Noted.'),
      geminiReply('Fine.'),
    ]);
    assert.equal((await prompt('Make a greeting').exited).code, 0);
    assert.equal(avhJson<{ result: string }>(sandbox, ['undo']).result, 'restored');
    assert.deepEqual(treeOf(sandbox.repo), before);
    let n = mock.turnRequests().length;
    assert.equal((await prompt('and now?', ['--resume', 'latest']).exited).code, 0);
    const noted = lastUserText(mock.turnRequests()[n]);
    assert.match(
      noted,
      /<hook_context>Agent Version History: since you last saw this repository, the user took the files back to before your turn 1 \(the turn of \d\d:\d\d\)\. These files changed on disk: greet\.txt\./,
    );
    assert.equal(noted.split('Agent Version History').length - 1, 1, 'the note reached the model once');
    n = mock.turnRequests().length;
    assert.equal((await prompt('again', ['--resume', 'latest']).exited).code, 0);
    assert.doesNotMatch(lastUserText(mock.turnRequests()[n]), /hook_context|Agent Version History/);
    assert.equal(new Set((await turnsOf(sandbox.repo)).map((t) => t.chatId)).size, 1, 'one chat across --resume');
    const printed = hookTimings(sandbox).filter((t) => t.stdoutBytes > 0);
    assert.deepEqual(
      printed.map((t) => t.event),
      ['BeforeAgent'],
    );
    assertNothingLost(sandbox.repo, content);
  });

  it('interactive (tmux): Escape ends the turn with AfterAgent "[no response text]", recorded cancelled', async () => {
    mock.script([geminiHang()]);
    const session = TmuxSession.start([bin.path, ...bin.prefix, '-m', 'gemini-2.5-flash', '--yolo'], {
      cwd: sandbox.repo,
      env: env(),
    });
    tmux.push(session);
    await session.waitForScreen(/Type your message/, 'the prompt box', 60_000);
    session.type('Think forever');
    await session.waitForScreen(/Think forever/, 'the typed prompt', 10_000);
    session.keys('Enter');
    await mock
      .waitFor((r) => isAgentLoopRequest(r) && r.answeredWith === 'hang', 1, 30_000)
      .catch((error: Error) => {
        throw new Error(`${error.message}; the screen was:\n${session.screen()}`);
      });
    session.keys('Escape');
    await waitUntil(() => lifecycle().includes('AfterAgent'), 'AfterAgent after Escape', 30_000);
    const after = capturedEvents(sandbox).find((e) => e.event === 'AfterAgent')!;
    assert.equal(after.payload.prompt_response, '[no response text]', 'the only sign that the turn was cancelled');
    await waitUntil(() => hookTimings(sandbox).some((t) => t.event === 'AfterAgent'), 'our AfterAgent hook', 30_000);
    assert.deepEqual(
      (await turnsOf(sandbox.repo)).map((t) => t.outcome),
      ['cancelled'],
    );
    assertQuietHooks();
  });
});
