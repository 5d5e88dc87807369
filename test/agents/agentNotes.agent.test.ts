/**
 * Undo that the agent hears about (issue 23, docs/design/agent-notes.md) with the real binaries against mock models
 * on 127.0.0.1 (the only part that cannot be real here), the hooks exactly as the shipped `connect` writes them:
 * chat A's turn edits files, chat B asks a question, the shipped `agent-versions undo` takes A's turn back; then each
 * chat's next real prompt must carry one note in the place the agent puts hook context (read from the mock's request
 * log), the prompt after it none, and B never A's prompt text.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { killProcessesUnder, stopAllAgents } from './support/agentProcess';
import {
  avhJson,
  DIST_CLI,
  HookTiming,
  inventory,
  makeSandbox,
  report,
  removeSandbox,
  saveTimings,
  Sandbox,
  treeOf,
  turnsOf,
} from './support/agentSandbox';
import { say, useTools } from './support/anthropicMock';
import { ClaudeCodeSetup, claudePrint, setUpClaudeCode } from './support/claudeCodeSession';
import { codexExec, CodexSetup, setUpCodex } from './support/codexSession';
import type { LoggedRequest } from './support/mockServer';
import { applyPatch, reply } from './support/openaiResponsesMock';
import { assertNothingLost, cleanupTempDirs } from '../support/gitFixtures';

/** How every note begins (core/chats/noteText.ts). */
const NOTE = 'Agent Version History: since you last saw this repository';
/** Chat A's prompt: it must never reach chat B's model. */
const PROMPT_A = 'PROMPT-A-7f3e rewrite src.txt';

const sandboxes: Sandbox[] = [];
const mocks: { close(): Promise<void> }[] = [];

const occurrences = (value: unknown, text: string) => JSON.stringify(value).split(text).length - 1;
const since = (requests: LoggedRequest[], n: number) => requests.slice(n);

/** Our hooks exit 0; only the prompts that carried a note printed (a measurement for the report, per scenario). */
function checkTimings(sandbox: Sandbox, agent: string, notes: number): HookTiming[] {
  const timings = saveTimings(sandbox, agent, 'agent-notes');
  for (const t of timings) assert.equal(t.code, 0, `${t.event}: our hook exited ${t.code}`);
  const printed = timings.filter((t) => t.stdoutBytes > 0);
  assert.deepEqual(
    printed.map((t) => t.event),
    Array(notes).fill('UserPromptSubmit'),
  );
  const prompts = timings.filter((t) => t.event === 'UserPromptSubmit');
  for (const t of prompts) report('note-hook-cost', { agent, note: t.stdoutBytes > 0, ms: t.ms });
  return timings;
}

describe('Undo that the agent hears about: real Claude Code 2.1.197 and Codex 0.171.0, mock models', function () {
  this.timeout(240_000);
  before(() => assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first'));
  afterEach(async () => {
    await stopAllAgents();
    for (const m of mocks.splice(0)) await m.close();
    for (const s of sandboxes) killProcessesUnder(s.root);
    for (const s of sandboxes.splice(0)) await removeSandbox(s);
    cleanupTempDirs();
  });

  it('Claude Code: after `agent-versions undo`, each chat’s next prompt carries one note as hook context', async () => {
    const sandbox = makeSandbox('claude-notes');
    sandboxes.push(sandbox);
    const setup: ClaudeCodeSetup = await setUpClaudeCode(sandbox, { timeHooks: true });
    mocks.push(setup.mock);
    const src = path.join(sandbox.repo, 'src.txt');
    setup.mock.script([
      useTools({ name: 'Read', input: { file_path: src } }),
      useTools(
        { name: 'Edit', input: { file_path: src, old_string: 'one', new_string: 'two' } },
        { name: 'Write', input: { file_path: path.join(sandbox.repo, 'added.txt'), content: 'new\n' } },
      ),
      say('Done.'),
      say('It says one.'),
      say('Noted.'),
      say('Fine.'),
      say('Back.'),
    ]);
    const before = treeOf(sandbox.repo);
    const content = inventory(sandbox.repo);
    assert.equal((await claudePrint(setup, PROMPT_A).exited).code, 0);
    assert.equal((await claudePrint(setup, 'what does src.txt say?').exited).code, 0);
    const [turnA, turnB] = await turnsOf(sandbox.repo);
    assert.ok(turnA.version && turnB.chatId !== turnA.chatId, 'two chats; A made a version');

    const undo = avhJson<{ result: string }>(sandbox, ['undo', '--turn', turnA.id]);
    assert.equal(undo.result, 'restored');
    assert.deepEqual(treeOf(sandbox.repo), before);

    // Chat B's next prompt (`--continue`: the latest session): the note of A's turn, as additional context.
    const context = `UserPromptSubmit hook additional context: ${NOTE}`;
    let n = setup.mock.loopRequests().length;
    assert.equal((await claudePrint(setup, 'and now?', ['--continue']).exited).code, 0);
    const b = since(setup.mock.loopRequests(), n);
    assert.equal(occurrences(b[0].body, context), 1, 'the note reached the model once');
    const text = JSON.stringify(b[0].body);
    assert.match(text, /took the files back to before turn 1 of another chat \(\d\d:\d\d\)/);
    assert.match(text, /These files changed on disk: added\.txt, src\.txt\./);
    // The note itself never holds A's prompt (Claude Code's system prompt lists recent commit subjects, which do).
    const said = new RegExp(`${context}([^"]*)`).exec(text)?.[1] ?? '';
    assert.ok(said.length > 0);
    assert.equal(occurrences(said, 'PROMPT-A-7f3e'), 0, 'chat B’s note never holds chat A’s prompt');
    // The prompt after it: no new note (the one in the history, if Claude Code keeps it there, stays one).
    n = setup.mock.loopRequests().length;
    assert.equal((await claudePrint(setup, 'again', ['--continue']).exited).code, 0);
    assert.ok(occurrences(since(setup.mock.loopRequests(), n)[0].body, context) <= 1);
    // Chat A, resumed: its own turn.
    n = setup.mock.loopRequests().length;
    const sessionA = turnA.chatId;
    assert.equal((await claudePrint(setup, 'back to it', ['--resume', sessionA]).exited).code, 0);
    const a = since(setup.mock.loopRequests(), n);
    assert.equal(occurrences(a[0].body, context), 1);
    assert.match(JSON.stringify(a[0].body), /took the files back to before your turn 1 \(the turn of \d\d:\d\d\)/);
    checkTimings(sandbox, 'claude-code', 2);
    assertNothingLost(sandbox.repo, content);
  });

  it('Codex: after `agent-versions undo`, each chat’s next prompt carries one note as a developer message', async () => {
    const sandbox = makeSandbox('codex-notes');
    sandboxes.push(sandbox);
    const setup: CodexSetup = await setUpCodex(sandbox, { timeHooks: true });
    mocks.push(setup.mock);
    setup.mock.script([
      applyPatch(
        '*** Begin Patch\n*** Add File: added.txt\n+new\n*** Update File: src.txt\n@@\n-one\n+two\n*** End Patch\n',
      ),
      reply('Done.'),
      reply('It says one.'),
      reply('Noted.'),
      reply('Fine.'),
      reply('Back.'),
    ]);
    const before = treeOf(sandbox.repo);
    const content = inventory(sandbox.repo);
    assert.equal((await codexExec(setup, PROMPT_A).exited).code, 0);
    assert.equal((await codexExec(setup, 'what does src.txt say?').exited).code, 0);
    const [turnA, turnB] = await turnsOf(sandbox.repo);
    assert.ok(turnA.version && turnB.chatId !== turnA.chatId, 'two chats; A made a version');
    assert.equal(avhJson<{ result: string }>(sandbox, ['undo', '--turn', turnA.id]).result, 'restored');
    assert.deepEqual(treeOf(sandbox.repo), before);

    /** The input item right after the user's message `prompt`, in the first request of that prompt. */
    const afterPrompt = (requests: LoggedRequest[], prompt: string) => {
      const input = (requests[0].body as { input: { role?: string; content?: { text?: string }[] }[] }).input;
      const at = input.findIndex((i) => i.role === 'user' && i.content?.some((c) => c.text === prompt));
      assert.ok(at >= 0, `the request holds the prompt ${prompt}`);
      return { next: input[at + 1], all: input };
    };
    let n = setup.mock.turnRequests().length;
    assert.equal((await codexExec(setup, 'and now?', { resume: 'last' }).exited).code, 0);
    const b = afterPrompt(since(setup.mock.turnRequests(), n), 'and now?');
    assert.equal(b.next.role, 'developer');
    assert.match(JSON.stringify(b.next), /took the files back to before turn 1 of another chat \(\d\d:\d\d\)/);
    assert.match(JSON.stringify(b.next), /These files changed on disk: added\.txt, src\.txt\./);
    assert.equal(occurrences(b.all, NOTE), 1, 'the note reached the model once');
    assert.equal(occurrences(b.all, 'PROMPT-A-7f3e'), 0, 'chat B never sees chat A’s prompt');
    // The prompt after it: no developer message after it, and the note once (kept in the resumed history).
    n = setup.mock.turnRequests().length;
    assert.equal((await codexExec(setup, 'again', { resume: 'last' }).exited).code, 0);
    const again = afterPrompt(since(setup.mock.turnRequests(), n), 'again');
    assert.notEqual(again.next?.role, 'developer');
    assert.equal(occurrences(again.all, NOTE), 1);
    // Chat A, resumed by its id: its own turn.
    n = setup.mock.turnRequests().length;
    const sessionA = turnA.chatId.replace(/^codex:/, '');
    assert.equal((await codexExec(setup, 'back to it', { resume: sessionA }).exited).code, 0);
    const a = afterPrompt(since(setup.mock.turnRequests(), n), 'back to it');
    assert.equal(a.next.role, 'developer');
    assert.match(JSON.stringify(a.next), /took the files back to before your turn 1 \(the turn of \d\d:\d\d\)/);
    checkTimings(sandbox, 'codex', 2);
    assertNothingLost(sandbox.repo, content);
  });
});
