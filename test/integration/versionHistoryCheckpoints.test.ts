// Issue 34 in the real extension host: a turn begun through the API whose agent runs `rm -rf` — the checkpoint taken
// by the shipped CLI's PreToolUse hook (Claude Code's captured payload), the command really run — then the API's
// getCheckpoints / restoreBeforeCommand, the view host's refusal of a step it never listed, and the end-of-turn
// notice (seen in the extension's log: content-free). Checked with git; nothing lost.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentVersionHistoryApi } from '../../src/vscode/extensionApi';
import { HISTORY_VIEW_TEST_MESSAGE_COMMAND } from '../../src/vscode/historyView/host';
import { eventually } from '../support/eventually';
import { assertNothingLost, contentInventory, git } from '../support/gitFixtures';

const EXTENSION_ID = 'agent-version-history.agent-version-history';
const ROOT = path.resolve(__dirname, '../../..');
const CAPTURED_REPO = '/home/user/work/repo';
const COMMAND = 'rm -rf int-ckpt # CANARY-command-5e2a';

async function api(): Promise<AgentVersionHistoryApi> {
  const ext = vscode.extensions.getExtension<AgentVersionHistoryApi>(EXTENSION_ID);
  assert.ok(ext);
  return ext.activate();
}

/**
 * A repository of its own, nested in the workspace folder and excluded there: the turn this test leaves (restored
 * over, not undone) must not change the workspace repository's counts other test files check. Its controller stays
 * open in the shared extension host (one more recovery session), so this file runs after recovery.test.ts.
 */
function nestedRepository(): string {
  const f = vscode.workspace.workspaceFolders?.[0];
  assert.ok(f);
  const outer = f.uri.fsPath;
  const repo = path.join(outer, 'int-checkpoints-repo');
  fs.appendFileSync(path.join(outer, '.git/info/exclude'), '\n/int-checkpoints-repo/\n');
  fs.mkdirSync(repo);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.name', 'Test User');
  git(repo, 'config', 'user.email', 'test@example.com');
  git(repo, 'config', 'commit.gpgsign', 'false');
  fs.writeFileSync(path.join(repo, 'README.md'), '# nested\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  return repo;
}

/** Claude Code's PreToolUse for its Bash tool running `command`, through the shipped CLI, in chat `session`. */
function preToolUse(repo: string, session: string, command: string): { action: string; checkpointId?: string } {
  const text = fs
    .readFileSync(path.join(ROOT, 'test/fixtures/hooks/claude-code/PreToolUse.json'), 'utf8')
    .split(CAPTURED_REPO)
    .join(repo);
  const input = JSON.stringify({
    ...(JSON.parse(text) as object),
    cwd: repo,
    session_id: session,
    tool_name: 'Bash',
    tool_input: { command },
  });
  const r = spawnSync(process.execPath, [path.join(ROOT, 'dist/cli.js'), 'hook', 'claude-code', '--json'], {
    cwd: repo,
    input,
    encoding: 'utf8',
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', COPILOT_CLI: '' },
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { action: string; checkpointId?: string };
}

const read = (repo: string, file: string) => fs.readFileSync(path.join(repo, file), 'utf8');
const recentLog = () => vscode.commands.executeCommand<string[]>('agentVersions._test.recentLog');

describe('Restore to Before This Command (API, view host, end-of-turn notice) in real VS Code', function () {
  this.timeout(60_000);

  it('an `rm -rf` of a running turn: checkpointed by the hook, listed by the API, told once at the turn’s end, restored exactly', async () => {
    const avh = await api();
    const repo = nestedRepository();
    const before = contentInventory(repo);
    const session = crypto.randomUUID();
    const { turnId } = await avh.beginTurn({
      chatId: session,
      prompt: 'int tidy',
      agent: 'claude-code',
      repository: repo,
    });
    fs.mkdirSync(path.join(repo, 'int-ckpt'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'int-ckpt/a.txt'), 'a by the agent\n');
    fs.writeFileSync(path.join(repo, 'int-ckpt/b.txt'), 'b by the agent\n');
    for (const oid of contentInventory(repo)) before.add(oid);
    const taken = preToolUse(repo, session, COMMAND);
    assert.equal(taken.action, 'checkpoint');
    fs.rmSync(path.join(repo, 'int-ckpt'), { recursive: true }); // the agent's command
    fs.writeFileSync(path.join(repo, 'int-after.txt'), 'after the command\n');
    const { version } = await avh.endTurn(turnId, 'completed');
    assert.ok(version);

    const listed = await avh.getCheckpoints({ repository: repo, turnId });
    assert.deepEqual(
      listed.map((c) => [c.id, c.turnId, c.chatId]),
      [[taken.checkpointId, turnId, session]],
    );
    assert.equal(JSON.stringify(listed).includes('CANARY'), false, 'the API lists no command text');

    // Told once, content-free in the log.
    await eventually(
      'the end-of-turn notice',
      () => recentLog(),
      (lines) => lines.some((l) => l.startsWith('checkpoint.notice') && l.includes(taken.checkpointId!)),
      { timeoutMs: 20_000 },
    );

    // Bad input changes nothing.
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    await assert.rejects(avh.restoreBeforeCommand('nope'), /A checkpoint id is 36 characters/);
    await assert.rejects(avh.restoreBeforeCommand(crypto.randomUUID()), /No checkpoint with this id/);
    await assert.rejects(
      avh.restoreBeforeCommand(taken.checkpointId!, { confirmUserCommits: 'yes' as unknown as boolean }),
      /must be true or false/,
    );
    // The view acts only on a step it listed: a well-formed id it never showed is answered with an error.
    assert.equal(
      await vscode.commands.executeCommand<boolean>(HISTORY_VIEW_TEST_MESSAGE_COMMAND, {
        type: 'restoreBeforeCommand',
        id: 901,
        checkpointId: crypto.randomUUID(),
      }),
      true,
    );
    assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), head);

    const r = await avh.restoreBeforeCommand(taken.checkpointId!);
    assert.equal(r.result, 'restored');
    assert.equal(r.version, git(repo, 'rev-parse', 'HEAD').trim());
    assert.match(git(repo, 'log', '-1', '--format=%s').trim(), /^\[Restore\]/);
    assert.equal(read(repo, 'int-ckpt/a.txt'), 'a by the agent\n');
    assert.equal(read(repo, 'int-ckpt/b.txt'), 'b by the agent\n');
    assert.equal(fs.existsSync(path.join(repo, 'int-after.txt')), false);
    assert.equal(git(repo, 'status', '--porcelain').trim(), '');
    assertNothingLost(repo, before);
    const lines = await recentLog();
    assert.ok(
      lines.some((l) => l.startsWith('view.request-failed')),
      'the unlisted step was refused',
    );
    for (const line of lines) assert.ok(!line.includes('CANARY'), `a log line carries the command: ${line}`);
  });
});
