/**
 * Two chats in one working tree (issue 25) with two real Claude Code 2.1.197 sessions, each against its own mock
 * model (a scripted Anthropic Messages API on 127.0.0.1: the only part that cannot be real here), in one
 * repository with exactly the hooks `connect claude-code --project` writes. Chat B writes a file and then waits in
 * a shell command while chat A runs a whole turn: A's turn ends while B's is mid-edit. A's version must not hold
 * B's half-done file; Undo Only This Turn of A must give back the exact tree with B's work in it.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { killProcessesUnder, stopAllAgents, waitUntil } from './support/agentProcess';
import { avh, DIST_CLI, inventory, makeSandbox, removeSandbox, treeOf, turnsOf } from './support/agentSandbox';
import { AnthropicMock, say, startAnthropicMock, useTools } from './support/anthropicMock';
import { ClaudeCodeSetup, claudePrint, setUpClaudeCode } from './support/claudeCodeSession';
import { assertNothingLost, cleanupTempDirs } from '../support/gitFixtures';

/** A commit's files and their content. */
function commitTree(repo: string, rev: string): Record<string, string> {
  const run = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' });
  const files: Record<string, string> = {};
  for (const name of run('ls-tree', '-r', '-z', '--name-only', rev).split('\0').filter(Boolean))
    files[name] = run('show', `${rev}:${name}`);
  return files;
}

describe('two real Claude Code sessions in one repository (mock models on 127.0.0.1): A ends while B is mid-edit', function () {
  this.timeout(240_000);
  let setup: ClaudeCodeSetup | null = null;
  let mockB: AnthropicMock | null = null;
  before(() => assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first'));
  afterEach(async () => {
    await stopAllAgents();
    if (setup) {
      killProcessesUnder(setup.sandbox.root);
      await setup.mock.close();
      await removeSandbox(setup.sandbox);
    }
    await mockB?.close();
    setup = null;
    mockB = null;
    cleanupTempDirs();
  });

  it('A’s version holds only A’s file; B’s half-done file stays in the tree; B’s version takes it; Undo Only This Turn of A keeps B’s work exactly', async () => {
    const sandbox = makeSandbox('two-chats');
    setup = await setUpClaudeCode(sandbox, { capture: false });
    const repo = sandbox.repo;
    const abs = (rel: string) => path.join(repo, rel);
    const waiting = path.join(sandbox.root, 'b-waiting');
    const go = path.join(sandbox.root, 'b-go');
    const start = treeOf(repo);
    const content = inventory(repo);
    // Chat B: writes b.txt, then waits in a shell command (mid-turn) until the test lets it go, then writes c.txt.
    mockB = await startAnthropicMock([
      useTools({ name: 'Write', input: { file_path: abs('b.txt'), content: 'b, half done\n' } }),
      useTools({
        name: 'Bash',
        input: {
          command: `touch '${waiting}'; while [ ! -f '${go}' ]; do sleep 0.1; done`,
          description: 'wait for the go file',
        },
      }),
      useTools({ name: 'Write', input: { file_path: abs('c.txt'), content: 'c by B\n' } }),
      say('B is done.'),
    ]);
    const b = claudePrint(
      { ...setup, env: { ...setup.env, ANTHROPIC_BASE_URL: mockB.url } },
      'chat B edits',
      [],
      180_000,
    );
    await waitUntil(() => fs.existsSync(waiting), 'chat B to wait in its shell command', 90_000);
    assert.equal(fs.readFileSync(abs('b.txt'), 'utf8'), 'b, half done\n');

    // Chat A: a whole turn while B waits.
    setup.mock.script([
      useTools({ name: 'Write', input: { file_path: abs('a.txt'), content: 'a by A\n' } }),
      say('A is done.'),
    ]);
    const a = await claudePrint(setup, 'chat A edits').exited;
    assert.equal(a.code, 0, a.stderr);
    const afterA = await turnsOf(repo);
    assert.equal(afterA.length, 2);
    const [turnB, turnA] = afterA; // B began first
    assert.deepEqual([turnA.outcome, turnB.recovery === 'terminal'], ['completed', false]);
    assert.ok(turnA.version, 'A made a version');
    // A's version: the tree as it was (the user's edit and untracked file included, as ever) plus a.txt, not b.txt.
    assert.deepEqual(commitTree(repo, turnA.version), { ...start, 'a.txt': 'a by A\n' });
    assert.equal(fs.readFileSync(abs('b.txt'), 'utf8'), 'b, half done\n', 'the working tree was not touched');

    fs.writeFileSync(go, '');
    const bRun = await b.exited;
    assert.equal(bRun.code, 0, bRun.stderr);
    const [endedB] = (await turnsOf(repo)).filter((t) => t.id === turnB.id);
    assert.equal(endedB.outcome, 'completed');
    assert.ok(endedB.version);
    assert.deepEqual(commitTree(repo, endedB.version), {
      ...start,
      'a.txt': 'a by A\n',
      'b.txt': 'b, half done\n',
      'c.txt': 'c by B\n',
    });

    const undo = avh(sandbox, ['undo', '--turn', turnA.id, '--only', 'turn']);
    assert.equal(undo.code, 0, undo.stderr);
    assert.match(undo.stdout, /later work kept\)/);
    const expected = { ...start, 'b.txt': 'b, half done\n', 'c.txt': 'c by B\n' };
    assert.deepEqual(treeOf(repo), expected);
    assert.deepEqual(commitTree(repo, 'HEAD'), expected);
    assertNothingLost(repo, content);
  });
});
