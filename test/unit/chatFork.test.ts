/**
 * Issue 32 through the shipped CLI (dist/cli.js): the hooks record where each Claude Code and opencode turn sits in
 * its conversation (ids only, on the full and the fast path; unknown when the payload names none), and `chat fork`
 * refuses, creating nothing, what it cannot continue: an unknown turn, an agent without a way to continue from an
 * earlier turn, a turn whose anchor is unknown, an agent missing from PATH. A turn the history archive moved out is
 * still found, with its anchor. The fork itself (of an archived turn too) is proven with the real binary in
 * test/agents/chatFork.agent.test.ts.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { contextOf } from '../../src/core/repoContextOf';
import { DurableStore } from '../../src/core/store/durableStore';
import { getTurn } from '../../src/core/turns/turnRecords';
import { VersionHistory } from '../../src/core/versionHistory';
import { runCliProcess, TEST_BUILD_CLI } from '../support/cliProcess';
import { assertNothingLost, cleanupTempDirs, contentInventory, makeRepo, tempDir, write } from '../support/gitFixtures';

const ROOT = path.resolve(__dirname, '../../..');
const FIXTURES = path.join(ROOT, 'test/fixtures/hooks');
const SESSION = 'd9b49c66-b1f1-4edb-b5e7-f35f493e58ea';
const PROMPT = 'CANARY-32-a prompt that must never be stored beside the anchor';

function payload(name: string, repo: string, home: string, overrides: Record<string, unknown> = {}): string {
  const p = JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as Record<string, unknown>;
  p.cwd = repo;
  if ('transcript_path' in p)
    p.transcript_path = path.join(home, '.claude', 'projects', 'repo', `${String(p.session_id)}.jsonl`);
  if ('prompt' in p) p.prompt = PROMPT;
  return JSON.stringify({ ...p, ...overrides });
}

interface AnchorRow {
  turn_id: string;
  agent: string;
  chat_ref: string;
  turn_ref: string;
  transcript: string | null;
}

async function anchorsOf(repo: string): Promise<{ turns: string[]; anchors: AnchorRow[] }> {
  const history = await VersionHistory.open(repo);
  try {
    return await contextOf(history).store.read((r) => ({
      turns: r.all<{ id: string }>('SELECT id FROM turns ORDER BY created_at, rowid').map((t) => t.id),
      anchors: r.all<AnchorRow>(
        'SELECT turn_id, agent, chat_ref, turn_ref, transcript FROM turn_anchors ORDER BY created_at, rowid',
      ),
    }));
  } finally {
    await history.close();
  }
}

describe('Continue the chat from before a turn (issue 32): anchors and refusals, shipped CLI', function () {
  this.timeout(60_000);
  after(cleanupTempDirs);

  it('each Claude Code turn records its prompt_id and session file (full path, then fast path); an odd prompt_id records none', async () => {
    const repo = makeRepo();
    const home = tempDir('avh-fork-home-');
    const pathLog = path.join(tempDir('avh-fork-log-'), 'paths.log');
    const env = { HOME: home, AVH_HOOK_PATH_LOG: pathLog };
    const hook = (input: string) => {
      const r = runCliProcess(['hook', 'claude-code'], { cwd: repo, input, env, cli: TEST_BUILD_CLI });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!r.stdout.includes(PROMPT) && !r.stderr.includes(PROMPT), 'the prompt is never printed');
    };
    const first = '3ecf7708-62df-4d29-99a7-9490232c962b';
    const second = '5a0c1e2d-3b4f-4a6b-8c7d-9e0f1a2b3c4d';
    hook(payload('claude-code/UserPromptSubmit.json', repo, home, { prompt_id: first }));
    write(repo, 'a.txt', 'one\n');
    hook(payload('claude-code/Stop.json', repo, home, { prompt_id: first }));
    hook(payload('claude-code/UserPromptSubmit.json', repo, home, { prompt_id: second }));
    hook(payload('claude-code/Stop.json', repo, home, { prompt_id: second }));
    hook(payload('claude-code/UserPromptSubmit.json', repo, home, { prompt_id: 'not an id' }));
    const paths = fs.readFileSync(pathLog, 'utf8').trim().split('\n');
    assert.match(paths[2], /^fast /, 'the second prompt took the fast path');
    assert.match(paths[0], /^declined:/, 'the first prompt (a new chat) took the full path');

    const { turns, anchors } = await anchorsOf(repo);
    assert.equal(turns.length, 3);
    const transcript = path.join(home, '.claude', 'projects', 'repo', `${SESSION}.jsonl`);
    assert.deepEqual(anchors, [
      { turn_id: turns[0], agent: 'claude-code', chat_ref: SESSION, turn_ref: first, transcript },
      { turn_id: turns[1], agent: 'claude-code', chat_ref: SESSION, turn_ref: second, transcript },
    ]);
    // Ids only: nothing of the prompt is kept beside them.
    assert.ok(!JSON.stringify(anchors).includes('CANARY'));

    // The third turn's anchor is unknown: fork refuses it, as it refuses the first turn's without the agent on PATH.
    const refused = (turnId: string, code: number, message: RegExp, extra: NodeJS.ProcessEnv = {}) => {
      const r = runCliProcess(['chat', 'fork', turnId], { cwd: repo, env: { HOME: home, ...extra } });
      assert.equal(r.code, code, `${r.stderr}${r.stdout}`);
      assert.match(r.stderr, message);
      assert.ok(!r.stderr.includes('CANARY'));
    };
    refused(turns[2], 2, /Where this turn sits in its Claude Code conversation is unknown.*Nothing was created\./);
    refused(turns[1], 1, /`claude` is not on PATH.*Nothing was created\./, { PATH: path.dirname(process.execPath) });
    assert.equal(fs.existsSync(path.join(home, '.claude')), false, 'nothing was created');
  });

  it('each opencode turn records its session and prompt message ids (full path, then fast path); a plugin written before that records none, and its turn is refused with what to do', async () => {
    const repo = makeRepo();
    const home = tempDir('avh-fork-home-');
    const pathLog = path.join(tempDir('avh-fork-log-'), 'paths.log');
    const env = { HOME: home, AVH_HOOK_PATH_LOG: pathLog };
    const session = 'ses_dcd4a6507ffewJiQgBjckaSYt9';
    const hook = (fixture: string, overrides: Record<string, unknown> = {}) => {
      const input = payload(`opencode/${fixture}`, repo, home, overrides);
      const r = runCliProcess(['hook', 'opencode'], { cwd: repo, input, env, cli: TEST_BUILD_CLI });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!r.stdout.includes(PROMPT) && !r.stderr.includes(PROMPT), 'the prompt is never printed');
    };
    const first = 'msg_2481e7ff4001u52NBPEJPjXMtR';
    const second = 'msg_2481e8a06001MwxZtbkVfgnyat';
    hook('chat.message.json', { message_id: first });
    write(repo, 'a.txt', 'one\n');
    hook('session.idle.json');
    hook('chat.message.json', { message_id: second });
    hook('session.idle.json');
    // The plugin an older agent-versions wrote: no message_id (nor reads_context).
    hook('chat.message.json', { message_id: undefined });
    hook('session.idle.json');
    hook('chat.message.json', { message_id: 'not an id' });
    const paths = fs.readFileSync(pathLog, 'utf8').trim().split('\n');
    assert.match(paths[0], /^declined:/, 'the first prompt (a new chat) took the full path');
    assert.match(paths[2], /^fast /, 'the second prompt took the fast path');

    const { turns, anchors } = await anchorsOf(repo);
    assert.equal(turns.length, 4);
    assert.deepEqual(anchors, [
      { turn_id: turns[0], agent: 'opencode', chat_ref: session, turn_ref: first, transcript: null },
      { turn_id: turns[1], agent: 'opencode', chat_ref: session, turn_ref: second, transcript: null },
    ]);
    assert.ok(!JSON.stringify(anchors).includes('CANARY'));

    const old = runCliProcess(['chat', 'fork', turns[2]], { cwd: repo, env: { HOME: home } });
    assert.equal(old.code, 2, old.stderr);
    assert.match(
      old.stderr,
      /Where this turn sits in its opencode conversation is unknown: .* A plugin written by an older agent-versions does not name it: run `agent-versions connect opencode` again .*Nothing was created\./,
    );
    const noOpencode = runCliProcess(['chat', 'fork', turns[1]], {
      cwd: repo,
      env: { HOME: home, PATH: path.dirname(process.execPath) },
    });
    assert.equal(noOpencode.code, 1, noOpencode.stderr);
    assert.match(noOpencode.stderr, /`opencode` is not on PATH.*Nothing was created\./);
  });

  it('an opencode plugin written before it named the prompt’s message: doctor says it is out of date, connect rewrites it', () => {
    const repo = makeRepo();
    const home = tempDir('avh-fork-home-');
    const run = (args: string[]) => runCliProcess(args, { cwd: repo, env: { HOME: home } });
    assert.equal(run(['connect', 'opencode', '--project']).code, 0);
    const file = path.join(repo, '.opencode/plugins/agent-versions.js');
    const current = fs.readFileSync(file, 'utf8');
    const line = '        message_id: output.message?.id,\n';
    assert.ok(current.includes(line));
    fs.writeFileSync(file, current.replace(line, ''));
    const hooksCheck = () =>
      (
        JSON.parse(run(['doctor', '--json']).stdout) as {
          checks: { id: string; status: string; summary: string; fix?: string }[];
        }
      ).checks.find((c) => c.id === 'hooks:opencode')!;
    const old = hooksCheck();
    assert.equal(old.status, 'warning');
    assert.equal(
      old.summary,
      `opencode: connected in ${file}, but the plugin there is out of date (written by an older agent-versions): it ` +
        'may not send what this version uses, such as the prompt’s message id that `chat fork` needs to continue a ' +
        'chat from before a turn.',
    );
    assert.equal(old.fix, 'To write the current one: agent-versions connect opencode --project');
    const again = run(['connect', 'opencode', '--project']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /updated {2}chat\.message hook/);
    assert.equal(fs.readFileSync(file, 'utf8'), current);
    assert.equal(hooksCheck().status, 'ok');
  });

  it('an unknown turn, a malformed id and an agent without the mechanism are refused with their own messages', async () => {
    const repo = makeRepo();
    const home = tempDir('avh-fork-home-');
    const gemini = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'gemini/BeforeAgent.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const begun = runCliProcess(['hook', 'gemini', '--json'], {
      cwd: repo,
      input: JSON.stringify({ ...gemini, cwd: repo, prompt: PROMPT }),
      env: { HOME: home },
    });
    assert.equal(begun.code, 0, begun.stderr);
    const geminiTurn = (JSON.parse(begun.stdout) as { turnId: string }).turnId;
    const fork = (turn: string) => runCliProcess(['chat', 'fork', turn], { cwd: repo, env: { HOME: home } });

    const unknown = fork('0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11');
    assert.equal(unknown.code, 1, unknown.stderr);
    assert.match(unknown.stderr, /No turn with this id exists in this repository\./);
    const malformed = fork('HEAD~1');
    assert.equal(malformed.code, 2, malformed.stderr);
    assert.match(malformed.stderr, /turnId must be the id returned by beginTurn\./);
    const noMechanism = fork(geminiTurn);
    assert.equal(noMechanism.code, 2, noMechanism.stderr);
    assert.match(
      noMechanism.stderr,
      /This agent cannot continue from an earlier turn; it will be told about the Undo instead .*Nothing was created\./,
    );
    const { anchors } = await anchorsOf(repo);
    assert.deepEqual(anchors, [], 'a Gemini CLI turn records no anchor');
  });

  it('a turn the history archive moved out keeps its anchor: chat fork finds it (not "no turn with this id"), reads nothing back into the hot store', async () => {
    const repo = makeRepo();
    const home = tempDir('avh-fork-home-');
    const env = { HOME: home };
    const hook = (input: string) => {
      const r = runCliProcess(['hook', 'claude-code'], { cwd: repo, input, env });
      assert.equal(r.code, 0, r.stderr);
    };
    const promptIds = [
      '3ecf7708-62df-4d29-99a7-9490232c962b',
      'not an id', // its anchor is unknown
      '5a0c1e2d-3b4f-4a6b-8c7d-9e0f1a2b3c4d',
      '7b1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f',
    ];
    for (const [i, prompt_id] of promptIds.entries()) {
      hook(payload('claude-code/UserPromptSubmit.json', repo, home, { prompt_id }));
      write(repo, `f${i}.txt`, `turn ${i}\n`);
      hook(payload('claude-code/Stop.json', repo, home, { prompt_id }));
    }
    const { turns } = await anchorsOf(repo);
    assert.equal(turns.length, 4);
    // The history archive moves the old turns out, as a long history would at the default keep (1,500): all but the
    // chat's latest.
    const stateDir = path.join(repo, '.git', 'agent-versions');
    const { store } = await DurableStore.open(stateDir, { compactEvery: 1, archiveKeep: 0, archiveMargin: 1 });
    await store.transaction((tx) => tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('test_rotation', '1')"));
    await store.read(() => undefined);
    const hot = () => store.read((r) => turns.map((id) => getTurn(r, id) !== undefined));
    assert.deepEqual(await hot(), [false, false, false, true], 'the first three turns are archived');
    const before = contentInventory(repo);

    const fork = (turn: string) =>
      runCliProcess(['chat', 'fork', turn], { cwd: repo, env: { HOME: home, PATH: path.dirname(process.execPath) } });
    const archived = fork(turns[0]);
    assert.equal(archived.code, 1, archived.stderr);
    assert.match(archived.stderr, /`claude` is not on PATH, so a fork could not be resumed\. Nothing was created\./);
    const archivedUnknown = fork(turns[1]);
    assert.equal(archivedUnknown.code, 2, archivedUnknown.stderr);
    assert.match(
      archivedUnknown.stderr,
      /Where this turn sits in its Claude Code conversation is unknown.*Nothing was created\./,
    );
    const unknown = fork('0b6e2c1f-5a4d-4c1e-9f3a-2d7e8b9c0a11');
    assert.equal(unknown.code, 1, unknown.stderr);
    assert.match(unknown.stderr, /No turn with this id exists in this repository\./);

    await store.read(() => undefined);
    assert.deepEqual(await hot(), [false, false, false, true], 'the fork only read: the archived turns stay archived');
    await store.close();
    assert.equal(fs.existsSync(path.join(home, '.claude')), false, 'nothing was created');
    assertNothingLost(repo, before);
  });
});
