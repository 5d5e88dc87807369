import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentVersionHistoryApi } from '../../src/vscode/extensionApi';
import { eventually } from '../support/eventually';
import { git } from '../support/gitFixtures';

const EXTENSION_ID = 'agent-version-history.agent-version-history';
const CANARY = 'CANARY-ext-host-3b9f1-prompt';

async function api(): Promise<AgentVersionHistoryApi> {
  const ext = vscode.extensions.getExtension<AgentVersionHistoryApi>(EXTENSION_ID);
  assert.ok(ext);
  return ext.activate();
}

function folder(): string {
  const f = vscode.workspace.workspaceFolders?.[0];
  assert.ok(f);
  return f.uri.fsPath;
}

describe('extension API and palette commands in real VS Code', function () {
  this.timeout(60_000);

  it('the API records a turn and its [Agent] commit appears; the Output channel holds content-free events', async () => {
    const avh = await api();
    assert.equal(avh.apiVersion, 1);
    const repo = folder();
    const changes: string[] = [];
    const sub = avh.onDidChangeVersions((e) => changes.push(e.repository));
    try {
      const { turnId } = await avh.beginTurn({
        chatId: 'ext-chat',
        prompt: `${CANARY} add a file`,
        agent: 'ext-host-test',
      });
      fs.writeFileSync(path.join(repo, 'from-agent.txt'), 'written during the turn\n');
      const ended = await avh.endTurn(turnId, 'completed');
      assert.ok(ended.version);
      assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), ended.version);
      assert.match(git(repo, 'log', '-1', '--format=%s'), /^\[Agent\] CANARY-ext-host-3b9f1-prompt add a file/);
      const versions = await avh.getVersions({ limit: 5 });
      assert.equal(versions[0].oid, ended.version);
      assert.equal(versions[0].kind, 'agent');
      assert.equal(versions[0].outcome, 'completed');
      await eventually(
        'onDidChangeVersions to fire',
        () => changes.length,
        (n) => n > 0,
        { timeoutMs: 2_500, intervalMs: 50 },
      );
      const lines = await vscode.commands.executeCommand<string[]>('agentVersions._test.recentLog');
      assert.ok(
        lines.some((l) => l.startsWith('turn.begin')),
        'turn.begin logged',
      );
      assert.ok(
        lines.some((l) => l.startsWith('turn.version')),
        'turn.version logged',
      );
      for (const line of lines) {
        assert.ok(!line.includes(CANARY), `log line leaked the prompt: ${line}`);
        assert.ok(!line.includes('written during the turn'), 'log line leaked file content');
      }
    } finally {
      sub.dispose();
    }
  });

  it('bad API input gets a clear error and changes nothing', async () => {
    const avh = await api();
    const repo = folder();
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    await assert.rejects(avh.beginTurn({ chatId: '', prompt: 'x' }), /chatId/);
    await assert.rejects(avh.beginTurn(null as unknown as { chatId: string; prompt: string }), /expects an object/);
    await assert.rejects(avh.endTurn('nope', 'completed'), /turnId/);
    await assert.rejects(avh.endTurn('00000000-0000-4000-8000-000000000000', 'completed'), /No turn with this id/);
    await assert.rejects(avh.getVersions({ limit: -1 }), /limit/);
    assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), head);
  });

  it('Undo Agent Turn and Redo Agent Turn from the palette restore the repository the API drives', async () => {
    const avh = await api();
    const repo = folder();
    const { turnId } = await avh.beginTurn({ chatId: 'ext-chat', prompt: 'second change' });
    fs.writeFileSync(path.join(repo, 'second.txt'), 'second\n');
    const { version } = await avh.endTurn(turnId, 'completed');
    assert.ok(version);
    const before = git(repo, 'rev-parse', 'HEAD^{tree}').trim();
    await vscode.commands.executeCommand('agentVersions.undo');
    assert.equal(fs.existsSync(path.join(repo, 'second.txt')), false, 'the turn was undone');
    assert.match(git(repo, 'log', '-1', '--format=%s'), /^\[Restore\] Restored version /);
    await vscode.commands.executeCommand('agentVersions.redo');
    assert.equal(git(repo, 'rev-parse', 'HEAD^{tree}').trim(), before, 'redo restored the exact tree');
    assert.equal(git(repo, 'status', '--porcelain').trim(), '');
  });

  it('Undo of a running turn cancels it and tells the agent through onDidCancelTurn', async () => {
    const avh = await api();
    const repo = folder();
    const cancelled: string[] = [];
    const sub = avh.onDidCancelTurn((e) => cancelled.push(e.turnId));
    try {
      const { turnId } = await avh.beginTurn({ chatId: 'ext-chat', prompt: 'long running' });
      fs.writeFileSync(path.join(repo, 'partial.txt'), 'partial\n');
      await vscode.commands.executeCommand('agentVersions.undo');
      assert.deepEqual(cancelled, [turnId]);
      assert.equal(fs.existsSync(path.join(repo, 'partial.txt')), false);
      const subjects = git(repo, 'log', '-2', '--format=%s').trim().split('\n');
      assert.match(subjects[0], /^\[Restore\]/);
      assert.equal(subjects[1], '[Interrupted] Saved partial changes before restoring to an earlier version');
      assert.equal(git(repo, 'show', 'HEAD~1:partial.txt'), 'partial\n');
    } finally {
      sub.dispose();
    }
  });
});
