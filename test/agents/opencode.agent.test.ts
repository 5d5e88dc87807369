/**
 * The real opencode 1.18.33 (npm opencode-ai, its Bun-compiled platform binary) against a mock model: a Chat
 * Completions mock on 127.0.0.1, configured as a custom `@ai-sdk/openai-compatible` provider in the user's
 * opencode.json. opencode has no shell hooks: the shipped `node dist/cli.js connect opencode --project` writes the
 * plugin .opencode/plugins/agent-versions.js, which pipes each event to `hook opencode`; a capture plugin of the
 * test's own logs every hook opencode calls.
 *
 * On its first start with a config folder (.opencode/, ~/.config/opencode/) opencode installs `@opencode-ai/plugin`
 * from the npm registry into it (20–35 s here) unless the folder's package-lock.json already lists it; our plugin
 * does not use that package, so each test seeds the lock (opencodeWorld.ts) and the layer stays within its time.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { agentsDir, AgentBinary, opencodeBinary } from './support/agentBinaries';
import { startAgent, stopAllAgents, sweepProcesses, waitUntil } from './support/agentProcess';
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
import {
  CAPTURE_PLUGIN,
  opencodeCalls,
  opencodeUserConfig,
  saveOpencodeSample,
  seedPluginDependencies,
  turnEvents,
} from './support/opencodeWorld';
import { assertEachCheckpointRestores, assertGuardDenied, prepareCheckpointTurn } from './support/commandCheckpoints';
import { TmuxSession } from './support/tmuxSession';
import { eventually } from '../support/eventually';
import { assertNothingLost, cleanupTempDirs } from '../support/gitFixtures';

describe('opencode 1.18.33 (real binary, mock model: Chat Completions on 127.0.0.1): the plugin connect writes, turns, Undo and Redo', function () {
  this.timeout(180_000);
  let bin: AgentBinary;
  let mock: OpenAiChatMock;
  let sandbox: Sandbox;
  let capture: string;
  const tmux: TmuxSession[] = [];

  before(() => {
    assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first');
    bin = opencodeBinary();
  });

  beforeEach(async () => {
    mock = await startOpenAiChatMock();
    sandbox = makeSandbox('opencode');
    capture = path.join(sandbox.root, 'opencode-calls.jsonl');
    const r = avh(sandbox, ['connect', 'opencode', '--project']);
    assert.equal(r.code, 0, r.stderr);
    const opencodeDir = path.join(sandbox.repo, '.opencode');
    fs.writeFileSync(path.join(opencodeDir, 'plugins', 'capture.js'), CAPTURE_PLUGIN);
    seedPluginDependencies(opencodeDir);
    commitSettings(sandbox, '.opencode');
    addUserWork(sandbox);
    const userDir = path.join(sandbox.home, '.config', 'opencode');
    fs.mkdirSync(userDir, { recursive: true });
    fs.writeFileSync(path.join(userDir, 'opencode.json'), opencodeUserConfig(mock.url));
    seedPluginDependencies(userDir);
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
      PWD: sandbox.repo, // opencode takes its project folder from $PWD before its working directory
      XDG_CONFIG_HOME: path.join(sandbox.home, '.config'),
      XDG_DATA_HOME: path.join(sandbox.home, '.local/share'),
      XDG_STATE_HOME: path.join(sandbox.home, '.local/state'),
      XDG_CACHE_HOME: path.join(agentsDir(), 'cache'),
      OPENCODE_DISABLE_MODELS_FETCH: '1', // no models.dev download: the provider is in opencode.json
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      AVH_OPENCODE_CAPTURE: capture,
      ...extra,
    });
  }

  function run(text: string, args: string[] = []) {
    return startAgent(bin.path, ['run', ...args, text], { cwd: sandbox.repo, env: env(), timeoutMs: 120_000 });
  }

  it('a completed turn (write, edit, bash): a version Undo and Redo take back exactly; resumed (--continue), an API error ends errored', async () => {
    const before = treeOf(sandbox.repo);
    const content = inventory(sandbox.repo);
    mock.script([
      chatToolCalls(
        { name: 'write', arguments: { filePath: path.join(sandbox.repo, 'greet.txt'), content: 'hi from opencode\n' } },
        {
          name: 'edit',
          arguments: { filePath: path.join(sandbox.repo, 'src.txt'), oldString: 'one', newString: 'one, edited' },
        },
      ),
      chatToolCalls({ name: 'bash', arguments: { command: 'echo shell >> shell.txt', description: 'append' } }),
      chatReply('Done.'),
    ]);
    const first = await run('Make a greeting').exited;
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(turnEvents(capture), ['chat.message', 'event:session.idle'], `${first.stdout}\n${first.stderr}`);
    saveOpencodeSample(sandbox.root, 'completed-turn', capture);
    const after = treeOf(sandbox.repo);
    assert.equal(after['greet.txt'], 'hi from opencode\n');
    assert.equal(after['src.txt'], 'one, edited\n');
    assert.equal(after['shell.txt'], 'shell\n');
    // `opencode run` exits without waiting for its plugin's session.idle handler: our hook, which that handler
    // started, may still be making the version (it finishes on its own).
    const [turn] = await eventually(
      'the session.idle hook to end the turn',
      () => turnsOf(sandbox.repo),
      // Ended, and its version made (or refused): 'pending' while the commit is being made.
      (turns) => turns[0]?.outcome != null && (turns[0].version !== null || turns[0].noVersionReason !== 'pending'),
      { timeoutMs: 30_000 },
    );
    assert.deepEqual([turn.agent, turn.outcome], ['opencode', 'completed']);
    assert.match(turn.chatId, /^opencode:ses_/);
    assert.ok(turn.version, `the turn made a version: ${JSON.stringify(turn)}`);
    // The plugin's tool.execute.after events: the files write and edit wrote, and a shell edit (issue 25).
    const writes = JSON.parse(
      fs.readFileSync(path.join(sandbox.repo, '.git/agent-versions/tool-writes/turns', `${turn.id}.json`), 'utf8'),
    ) as { paths: string[]; shell: boolean };
    assert.deepEqual([writes.paths, writes.shell], [['greet.txt', 'src.txt'], true]);
    assert.equal(avhJson<{ result: string }>(sandbox, ['undo']).result, 'restored');
    assert.deepEqual(
      treeOf(sandbox.repo),
      before,
      'Undo: the pre-turn tree, the user edit and untracked file included',
    );
    assert.equal(avhJson<{ result: string }>(sandbox, ['redo']).result, 'restored');
    assert.deepEqual(treeOf(sandbox.repo), after);

    fs.rmSync(capture, { force: true });
    mock.script([chatHttpError(400)]);
    const failed = await run('Break please', ['--continue']).exited;
    assert.notEqual(failed.code, 0);
    assert.deepEqual(turnEvents(capture).slice(0, 2), ['chat.message', 'event:session.error:APIError']);
    const turns = await turnsOf(sandbox.repo);
    assert.deepEqual(
      turns.map((t) => [t.outcome, t.version === null]),
      [
        ['completed', false],
        ['errored', true],
      ],
    );
    assert.ok(
      turns.every((t) => t.chatId === turn.chatId),
      'one chat across --continue',
    );
    assertNothingLost(sandbox.repo, content);
  });

  it('one turn runs git reset --hard, git stash, git clean -fdx and rm -rf src between its edits: the plugin awaits each checkpoint, which restores the exact tree before its command, then the turn’s Undo (issue 34)', async () => {
    const world = prepareCheckpointTurn(sandbox);
    mock.script([
      ...world.commands.map((command) => chatToolCalls({ name: 'bash', arguments: { command, description: 'run' } })),
      chatReply('Done.'),
    ]);
    const exit = await run('tidy up the repository').exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(mock.remaining(), 0, 'the model script was used up');
    saveOpencodeSample(sandbox.root, 'tool-execute-before', capture);
    // opencode 1.18.33's tool.execute.before: the tool's name in the input, its arguments in the output.
    const before = opencodeCalls(capture)
      .filter((c) => c.hook === 'tool.execute.before')
      .map((c) => c.data as { input: { tool: string }; output: { args: { command: string } } });
    assert.deepEqual(new Set(before.map((c) => c.input.tool)), new Set(['bash']));
    // `opencode run` exits without waiting for the session.idle handler: the turn ends on its own.
    const [turn] = await eventually(
      'the session.idle hook to end the turn',
      () => turnsOf(sandbox.repo),
      (turns) => turns[0]?.outcome != null && (turns[0].version !== null || turns[0].noVersionReason !== 'pending'),
      { timeoutMs: 30_000 },
    );
    assertEachCheckpointRestores(
      sandbox,
      world,
      turn.id,
      before.map((c) => c.output.args.command),
    );
  });

  it('connect --guard-destructive: the plugin throws in tool.execute.before for git reset --hard (the command never runs, the model reads why), after its checkpoint (issue 34)', async () => {
    const { repo } = sandbox;
    const r = avh(sandbox, ['connect', 'opencode', '--project', '--guard-destructive']);
    assert.equal(r.code, 0, r.stderr);
    commitSettings(sandbox, '.opencode');
    const start = treeOf(repo);
    const content = inventory(repo);
    mock.script([
      chatToolCalls({ name: 'bash', arguments: { command: "printf 'agent\\n' >> src.txt", description: 'edit' } }),
      chatToolCalls({ name: 'bash', arguments: { command: 'git reset --hard', description: 'reset' } }),
      chatReply('I will ask the user.'),
    ]);
    const exit = await run('tidy up the repository').exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(mock.remaining(), 0, 'the model script was used up');
    // The command never ran: the user's edit, the untracked file and the agent's edit are all still there.
    assert.deepEqual(treeOf(repo), { ...start, 'src.txt': 'one\nagent\n' });
    const [turn] = await eventually(
      'the session.idle hook to end the turn',
      () => turnsOf(repo),
      (turns) => turns[0]?.outcome != null && (turns[0].version !== null || turns[0].noVersionReason !== 'pending'),
      { timeoutMs: 30_000 },
    );
    assertGuardDenied(sandbox, {
      request: mock.turnRequests().at(-1)!.body,
      label: 'git reset --hard',
      turnId: turn.id,
      event: null,
    });
    assertNothingLost(repo, content);
  });

  it('Undo that the agent hears about: after `agent-versions undo`, the next prompt (--continue) carries one note as a synthetic text part the plugin adds', async () => {
    const before = treeOf(sandbox.repo);
    const content = inventory(sandbox.repo);
    mock.script([
      chatToolCalls({ name: 'write', arguments: { filePath: path.join(sandbox.repo, 'greet.txt'), content: 'hi\n' } }),
      chatReply('Done.'),
      chatReply('Noted.'),
      chatReply('Fine.'),
    ]);
    assert.equal((await run('Make a greeting').exited).code, 0);
    assert.equal(avhJson<{ result: string }>(sandbox, ['undo']).result, 'restored');
    assert.deepEqual(treeOf(sandbox.repo), before);
    /** The last user message of the first loop request from `n` on. */
    const lastUser = (n: number) => {
      const loop = mock.requests.filter(isAgentLoopRequest);
      const messages = (loop[n].body as { messages: { role: string; content: unknown }[] }).messages;
      return JSON.stringify(messages.filter((m) => m.role === 'user').at(-1)?.content);
    };
    let n = mock.requests.filter(isAgentLoopRequest).length;
    assert.equal((await run('and now?', ['--continue']).exited).code, 0);
    const noted = lastUser(n);
    assert.match(noted, /and now\?/);
    assert.match(
      noted,
      /Agent Version History: since you last saw this repository, the user took the files back to before your turn 1 \(the turn of \d\d:\d\d\)\. These files changed on disk: greet\.txt\./,
    );
    assert.equal(noted.split('Agent Version History').length - 1, 1, 'the note reached the model once');
    n = mock.requests.filter(isAgentLoopRequest).length;
    assert.equal((await run('again', ['--continue']).exited).code, 0);
    assert.doesNotMatch(lastUser(n), /Agent Version History/);
    assert.equal(new Set((await turnsOf(sandbox.repo)).map((t) => t.chatId)).size, 1, 'one chat across --continue');
    assertNothingLost(sandbox.repo, content);
  });

  it('TUI (tmux): Escape twice interrupts the turn (session.error MessageAbortedError), recorded cancelled; Undo takes the partial work away', async () => {
    const before = treeOf(sandbox.repo);
    mock.script([
      chatToolCalls({ name: 'bash', arguments: { command: 'echo partial >> partial.txt', description: 'p' } }),
      chatHang(),
    ]);
    const session = TmuxSession.start([bin.path], { cwd: sandbox.repo, env: env({ COLORTERM: 'truecolor' }) });
    tmux.push(session);
    await session.waitForScreen(/Ask anything/, 'the prompt box', 90_000);
    session.type('Do partial work');
    await session.waitForScreen(/Do partial work/, 'the typed prompt', 10_000);
    session.keys('Enter');
    await waitUntil(() => fs.existsSync(path.join(sandbox.repo, 'partial.txt')), 'the partial edit', 60_000);
    await mock.waitFor((r) => isAgentLoopRequest(r) && r.answeredWith === 'hang', 1, 30_000);
    // Two presses of Escape within opencode's double-press window interrupt; under load a pair can be missed.
    const aborted = () => turnEvents(capture).includes('event:session.error:MessageAbortedError');
    for (let attempt = 0; attempt < 4 && !aborted(); attempt++) {
      session.keys('Escape');
      await new Promise((r) => setTimeout(r, 200));
      session.keys('Escape');
      await waitUntil(aborted, 'the abort', 8_000).catch(() => undefined);
    }
    assert.ok(aborted(), `no MessageAbortedError; the screen was:\n${session.screen()}`);
    saveOpencodeSample(sandbox.root, 'tui-escape', capture);
    let turns = await turnsOf(sandbox.repo);
    for (const deadline = Date.now() + 20_000; turns[0]?.outcome == null && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 250));
      turns = await turnsOf(sandbox.repo);
    }
    assert.deepEqual(
      turns.map((t) => [t.agent, t.outcome]),
      [['opencode', 'cancelled']],
    );
    assert.equal(treeOf(sandbox.repo)['partial.txt'], 'partial\n', 'the partial work stays for Undo');
    session.kill();
    assert.equal(avhJson<{ result: string }>(sandbox, ['undo']).result, 'restored');
    assert.deepEqual(treeOf(sandbox.repo), before);
  });
});
