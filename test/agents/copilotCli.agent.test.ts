/**
 * The real GitHub Copilot CLI 1.0.102 (npm @github/copilot) against a mock model: BYOK mode
 * (COPILOT_PROVIDER_BASE_URL + COPILOT_OFFLINE=true, no GitHub sign-in) pointed at a Chat Completions mock on
 * 127.0.0.1, prompt mode (`-p`). The hooks are the ones the shipped `node dist/cli.js connect copilot --project`
 * writes (.github/hooks/agent-versions.json, run through the timer), beside a capture hook of the test's own in
 * .github/hooks/capture.json; Claude Code's project hooks are connected too, because Copilot CLI runs those as well.
 * The folder is trusted the way Copilot's trust dialog stores it (repository hooks run only in a trusted folder).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { agentsDir, AgentBinary, copilotCliBinary } from './support/agentBinaries';
import { startAgent, stopAllAgents, sweepProcesses, waitUntil } from './support/agentProcess';
import {
  addUserWork,
  agentEnv,
  avh,
  avhJson,
  CAPTURE_HOOK,
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
  chatHang,
  chatHttpError,
  chatReply,
  chatToolCalls,
  isAgentLoopRequest,
  OpenAiChatMock,
  startOpenAiChatMock,
} from './support/openaiChatMock';
import { assertEachCheckpointRestores, assertGuardDenied, prepareCheckpointTurn } from './support/commandCheckpoints';
import { assertNothingLost, cleanupTempDirs } from '../support/gitFixtures';

const CAPTURED = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'Stop',
  'ErrorOccurred',
  'SessionEnd',
];

describe('GitHub Copilot CLI 1.0.102 (real binary, mock model: Chat Completions on 127.0.0.1): turns, Undo and Redo', function () {
  this.timeout(180_000);
  let bin: AgentBinary;
  let mock: OpenAiChatMock;
  let sandbox: Sandbox;

  before(() => {
    assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first');
    bin = copilotCliBinary();
  });

  beforeEach(async () => {
    mock = await startOpenAiChatMock();
    sandbox = makeSandbox('copilot-cli');
    for (const agent of ['copilot', 'claude-code']) {
      const r = avh(sandbox, ['connect', agent, '--project', '--json']);
      assert.equal(r.code, 0, r.stderr);
      timeOurHooks(sandbox, (JSON.parse(r.stdout) as { file: string }).file);
    }
    const capture = Object.fromEntries(
      CAPTURED.map((e) => [e, [{ hooks: [{ type: 'command', command: CAPTURE_HOOK }] }]]),
    );
    fs.writeFileSync(path.join(sandbox.repo, '.github/hooks/capture.json'), JSON.stringify({ hooks: capture }));
    commitSettings(sandbox, '.github', '.claude');
    addUserWork(sandbox);
    // What Copilot's "trust this folder?" dialog stores (the user's step, as `connect copilot` says).
    fs.mkdirSync(copilotHome(), { recursive: true });
    fs.writeFileSync(path.join(copilotHome(), 'config.json'), JSON.stringify({ trustedFolders: [sandbox.repo] }));
  });

  afterEach(async () => {
    await stopAllAgents();
    await mock.close();
    await sweepProcesses(sandbox.root);
    await removeSandbox(sandbox);
    cleanupTempDirs();
  });

  function copilotHome(): string {
    return path.join(sandbox.home, '.copilot');
  }

  function prompt(text: string, args: string[] = [], extraEnv: NodeJS.ProcessEnv = {}) {
    const env = agentEnv(sandbox, {
      COPILOT_HOME: copilotHome(),
      XDG_CONFIG_HOME: path.join(sandbox.home, '.config'),
      XDG_STATE_HOME: path.join(sandbox.home, '.local/state'),
      // Where the binary unpacks its JavaScript (235 MB): shared by every test, as a user's cache is.
      XDG_CACHE_HOME: path.join(agentsDir(), 'cache'),
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_BASE_URL: `${mock.url}/v1`,
      COPILOT_MODEL: 'gpt-4.1',
      COPILOT_AUTO_UPDATE: 'false',
      AVH_CAPTURE_DIR: sandbox.captureDir,
      ...extraEnv,
    });
    return startAgent(bin.path, ['-p', text, '--allow-all-tools', ...args], {
      cwd: sandbox.repo,
      env,
      timeoutMs: 90_000,
    });
  }

  const events = () => capturedEvents(sandbox).map((e) => e.event);

  /**
   * Our hooks never print on stdout (it would reach the model) and never fail. `cutShortAtMost`: runs that Copilot
   * started but exited before it wrote their event (after SIGINT it does not wait for its SessionEnd hooks) read
   * nothing on stdin and exit 1 saying the event is empty; up to that many are allowed.
   */
  function assertQuietHooks(cutShortAtMost = 0): void {
    const all = hookTimings(sandbox);
    assert.ok(all.length > 0, 'our hooks ran');
    const cutShort = all.filter((t) => t.stdinBytes === 0 && t.code === 1);
    assert.ok(cutShort.length <= cutShortAtMost, `${cutShort.length} runs of our hook had no event on stdin`);
    const timings = all.filter((t) => !cutShort.includes(t));
    for (const t of timings) {
      assert.equal(t.stdoutBytes, 0, `${t.event}: our hook printed on stdout`);
      assert.equal(t.code, 0, `${t.event}: our hook exited ${t.code}`);
    }
  }

  it('a completed turn (create, edit, a shell edit): one copilot-cli version, recorded once though Claude Code’s hooks run too; Undo and Redo give the exact trees', async () => {
    const before = treeOf(sandbox.repo);
    const content = inventory(sandbox.repo);
    mock.script([
      chatToolCalls(
        { name: 'create', arguments: { path: path.join(sandbox.repo, 'greet.txt'), file_text: 'hi from copilot\n' } },
        {
          name: 'edit',
          arguments: { path: path.join(sandbox.repo, 'src.txt'), old_str: 'one', new_str: 'one, edited' },
        },
      ),
      chatToolCalls({ name: 'bash', arguments: { command: 'echo shell >> shell.txt', description: 'append' } }),
      chatReply('Done.'),
    ]);
    const exit = await prompt('Make a greeting').exited;
    assert.equal(exit.code, 0, exit.stderr);
    const captured = capturedEvents(sandbox);
    saveSamples(sandbox, 'copilot-cli', 'completed-turn', captured);
    assert.deepEqual(
      events().filter((e) => !['PreToolUse', 'PostToolUse'].includes(e)),
      ['SessionStart', 'UserPromptSubmit', 'Stop', 'SessionEnd'],
    );
    const submit = captured.find((e) => e.event === 'UserPromptSubmit')!;
    assert.equal(submit.env.COPILOT_CLI, '1', 'what tells a Copilot CLI hook from a VS Code one');
    // Copilot CLI ran both files' hooks: ours in .github/hooks and Claude Code's in .claude/settings.json.
    assert.deepEqual(
      hookTimings(sandbox).filter((t) => t.event === 'UserPromptSubmit').length,
      2,
      'both hooks ran for the prompt',
    );
    const after = treeOf(sandbox.repo);
    assert.equal(after['greet.txt'], 'hi from copilot\n');
    assert.equal(after['src.txt'], 'one, edited\n');
    assert.equal(after['shell.txt'], 'shell\n');

    const turns = await turnsOf(sandbox.repo);
    assert.deepEqual(
      turns.map((t) => [t.agent, t.chatId, t.outcome, t.version !== null]),
      [['copilot-cli', `copilot-cli:${String(submit.payload.session_id)}`, 'completed', true]],
      'one turn: hook claude-code left Copilot CLI’s events to hook copilot',
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
      ...world.commands.map((command) => chatToolCalls({ name: 'bash', arguments: { command, description: 'run' } })),
      chatReply('Done.'),
    ]);
    const exit = await prompt('tidy up the repository').exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(mock.remaining(), 0, 'the model script was used up');
    const tools = capturedEvents(sandbox).filter((e) => e.event === 'PreToolUse');
    saveSamples(sandbox, 'copilot-cli', 'pre-tool', tools);
    // Copilot CLI 1.0.102's PreToolUse (PascalCase event, snake_case payload): its shell tool arrives as `Bash`.
    assert.deepEqual(new Set(tools.map((e) => e.payload.tool_name)), new Set(['Bash']));
    const turns = await turnsOf(sandbox.repo);
    assert.deepEqual(
      turns.map((t) => t.agent),
      ['copilot-cli'],
    );
    // One checkpoint per command: hook claude-code, which Copilot CLI runs too, leaves the event to hook copilot.
    assertEachCheckpointRestores(
      sandbox,
      world,
      turns[0].id,
      tools.map((e) => (e.payload.tool_input as { command?: unknown }).command),
    );
    assertQuietHooks();
  });

  it('connect --guard-destructive: PreToolUse denies git reset --hard (the command never runs, the model reads why), after its checkpoint (issue 34)', async () => {
    const { repo } = sandbox;
    // Connected again with the guard (the timed entries of beforeEach are not connect's own form any more).
    fs.rmSync(path.join(repo, '.github/hooks/agent-versions.json'));
    const r = avh(sandbox, ['connect', 'copilot', '--project', '--guard-destructive', '--json']);
    assert.equal(r.code, 0, r.stderr);
    timeOurHooks(sandbox, (JSON.parse(r.stdout) as { file: string }).file);
    commitSettings(sandbox, '.github');
    const start = treeOf(repo);
    const content = inventory(repo);
    mock.script([
      chatToolCalls({ name: 'bash', arguments: { command: "printf 'agent\\n' >> src.txt", description: 'edit' } }),
      chatToolCalls({ name: 'bash', arguments: { command: 'git reset --hard', description: 'reset' } }),
      chatReply('I will ask the user.'),
    ]);
    const exit = await prompt('tidy up the repository').exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(mock.remaining(), 0, 'the model script was used up');
    // The command never ran: the user's edit, the untracked file and the agent's edit are all still there.
    assert.deepEqual(treeOf(repo), { ...start, 'src.txt': 'one\nagent\n' });
    const turns = await turnsOf(repo);
    assertGuardDenied(sandbox, {
      request: mock.turnRequests().at(-1)!.body,
      label: 'git reset --hard',
      turnId: turns[0].id,
      event: 'PreToolUse',
    });
    assertNothingLost(repo, content);
  });

  it('Undo that the agent hears about: after `agent-versions undo`, the resumed session’s next prompt carries one note as a <system_reminder>', async () => {
    const content = inventory(sandbox.repo);
    const before = treeOf(sandbox.repo);
    mock.script([
      chatToolCalls({ name: 'create', arguments: { path: path.join(sandbox.repo, 'greet.txt'), file_text: 'hi\n' } }),
      chatReply('Done.'),
      chatReply('Noted.'),
      chatReply('Fine.'),
    ]);
    assert.equal((await prompt('Make a greeting').exited).code, 0);
    const session = String(capturedEvents(sandbox).find((e) => e.event === 'UserPromptSubmit')!.payload.session_id);
    assert.equal(avhJson<{ result: string }>(sandbox, ['undo']).result, 'restored');
    assert.deepEqual(treeOf(sandbox.repo), before);
    /** The text of the last user message of the first loop request from `n` on. */
    const lastUser = (n: number) => {
      const messages = (mock.turnRequests()[n].body as { messages: { role: string; content: unknown }[] }).messages;
      return JSON.stringify(messages.filter((m) => m.role === 'user').at(-1)?.content);
    };
    let n = mock.turnRequests().length;
    assert.equal((await prompt('and now?', [`--resume=${session}`]).exited).code, 0);
    const noted = lastUser(n);
    assert.match(
      noted,
      /<system_reminder>\\nAgent Version History: since you last saw this repository, the user took the files back to before your turn 1 \(the turn of \d\d:\d\d\)\. These files changed on disk: greet\.txt\./,
    );
    assert.equal(noted.split('Agent Version History').length - 1, 1, 'the note reached the model once');
    n = mock.turnRequests().length;
    assert.equal((await prompt('again', [`--resume=${session}`]).exited).code, 0);
    assert.doesNotMatch(lastUser(n), /Agent Version History/);
    // Only hook copilot printed, once: Claude Code's hooks (which Copilot CLI runs too) leave its events alone.
    const printed = hookTimings(sandbox).filter((t) => t.stdoutBytes > 0);
    assert.deepEqual(
      printed.map((t) => t.event),
      ['UserPromptSubmit'],
    );
    assertNothingLost(sandbox.repo, content);
  });

  it('a question ends completed with no version; an API error ends errored (SessionEnd "error"); SIGINT ends cancelled; undo --turn takes the partial work away', async () => {
    const start = treeOf(sandbox.repo);
    mock.script([chatReply('It says one.')]);
    const first = await prompt('What does src.txt say?').exited;
    assert.equal(first.code, 0, first.stderr);
    const session = String(capturedEvents(sandbox).find((e) => e.event === 'UserPromptSubmit')!.payload.session_id);

    clearCapture(sandbox);
    mock.script([chatHttpError(400)]);
    const failed = await prompt('Break please', [`--resume=${session}`]).exited;
    assert.notEqual(failed.code, 0);
    assert.deepEqual(events(), ['SessionStart', 'UserPromptSubmit', 'ErrorOccurred', 'SessionEnd']);
    assert.equal(capturedEvents(sandbox).at(-1)!.payload.reason, 'error');

    clearCapture(sandbox);
    mock.script([
      chatToolCalls({ name: 'bash', arguments: { command: 'echo partial >> partial.txt', description: 'p' } }),
      chatHang(),
    ]);
    const run = prompt('Do partial work', [`--resume=${session}`]);
    await waitUntil(() => fs.existsSync(path.join(sandbox.repo, 'partial.txt')), 'the partial edit', 60_000);
    await mock.waitFor((r) => isAgentLoopRequest(r) && r.answeredWith === 'hang', 1, 30_000);
    run.signal('SIGINT');
    await run.exited;
    assert.equal(events().at(-1), 'SessionEnd', 'no Stop after SIGINT, only SessionEnd');
    assert.equal(capturedEvents(sandbox).at(-1)!.payload.reason, 'complete');
    // Copilot exits on SIGINT without waiting for its SessionEnd hooks, so ours may be cut short: then the chat's
    // next prompt ends the interrupted turn cancelled.
    mock.script([chatReply('Never mind.')]);
    const next = await prompt('Never mind', [`--resume=${session}`]).exited;
    assert.equal(next.code, 0, next.stderr);

    const turns = await turnsOf(sandbox.repo);
    assert.deepEqual(
      turns.map((t) => [t.agent, t.outcome, t.version === null]),
      [
        ['copilot-cli', 'completed', true],
        ['copilot-cli', 'errored', true],
        ['copilot-cli', 'cancelled', true],
        ['copilot-cli', 'completed', true],
      ],
    );
    assert.ok(
      turns.every((t) => t.chatId === `copilot-cli:${session}`),
      'one chat across --resume',
    );
    assert.equal(treeOf(sandbox.repo)['partial.txt'], 'partial\n', 'the cancelled turn’s partial work stays for Undo');
    const undo = avh(sandbox, ['undo', '--turn', turns[2].id, '--json']);
    assert.equal(undo.code, 0, undo.stdout + undo.stderr);
    assert.deepEqual(treeOf(sandbox.repo), start);
    // SIGINT: both SessionEnd hooks (ours as copilot, and as claude-code, which Copilot runs too) may be cut short.
    assertQuietHooks(2);
  });
});
