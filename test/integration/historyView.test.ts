import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentVersionHistoryApi } from '../../src/vscode/extensionApi';
import {
  HISTORY_VIEW_TEST_DESCRIBE_COMMAND,
  HISTORY_VIEW_TEST_MESSAGE_COMMAND,
} from '../../src/vscode/historyView/host';
import { eventually } from '../support/eventually';
import { assertNothingLost, contentInventory, git } from '../support/gitFixtures';

const EXTENSION_ID = 'agent-version-history.agent-version-history';
const CANARY = 'CANARY-view-fuzz-7c1d';

interface ViewState {
  resolved: boolean;
  ready: boolean;
  view: string;
  rows: number;
  top: string | null;
  html: string;
}

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

const describeView = () => vscode.commands.executeCommand<ViewState>(HISTORY_VIEW_TEST_DESCRIBE_COMMAND);
const post = (raw: unknown) => vscode.commands.executeCommand<boolean>(HISTORY_VIEW_TEST_MESSAGE_COMMAND, raw);

const until = <T>(what: string, read: () => PromiseLike<T>, ok: (value: T) => boolean, timeoutMs = 20_000) =>
  eventually(what, () => read(), ok, { timeoutMs });

/** Everything a message could change: refs, HEAD, index and worktree status, and the bytes of our state files. */
function picture(repo: string): string {
  const gitDir = git(repo, 'rev-parse', '--absolute-git-dir').trim();
  const stateDir = path.join(gitDir, 'agent-versions');
  const state = fs
    .readdirSync(stateDir)
    .filter((f) => !f.endsWith('.lock') && fs.statSync(path.join(stateDir, f)).isFile())
    .sort()
    .map(
      (f) =>
        `${f}:${crypto
          .createHash('sha256')
          .update(fs.readFileSync(path.join(stateDir, f)))
          .digest('hex')}`,
    );
  return [
    git(repo, 'for-each-ref'),
    git(repo, 'symbolic-ref', 'HEAD'),
    git(repo, 'status', '--porcelain=v1', '--untracked-files=all'),
    ...state,
  ].join('\n');
}

/** A payload that is never a valid message: a valid template with at least one fatal mutation, or plain junk. */
function malformed(rand: () => number): unknown {
  const oid = crypto.randomBytes(20).toString('hex');
  const templates: Record<string, unknown>[] = [
    { type: 'ready', protocol: 1 },
    { type: 'openReadme', section: 'extension-api' },
    { type: 'showChanges', id: 1, oid },
    { type: 'undo', id: 2, turnId: 't' },
    { type: 'redo', id: 3 },
    { type: 'restore', id: 4, oid },
    { type: 'loadMore', id: 5 },
    { type: 'showTurnChanges', id: 6, turnId: 't' },
    { type: 'restoreBeforeCommand', id: 7, checkpointId: crypto.randomUUID() },
  ];
  const junk: unknown[] = [
    null,
    undefined,
    0,
    -1,
    NaN,
    true,
    '',
    CANARY,
    [],
    [CANARY],
    { type: CANARY },
    { type: 'restore' },
    { type: 'constructor', id: 1 },
    { type: 'RESTORE', id: 1, oid },
    { __proto__: { type: 'redo', id: 1 } },
  ];
  const bad = [CANARY, -1, 1.5, '1', null, {}, [], 'HEAD', `${oid} --hard`, 'x'.repeat(300), true, NaN];
  if (rand() < 0.2) return junk[Math.floor(rand() * junk.length)];
  const message: Record<string, unknown> = { ...templates[Math.floor(rand() * templates.length)] };
  const keys = Object.keys(message).filter((k) => k !== 'type');
  const mutation = Math.floor(rand() * 4);
  if (mutation === 0 || keys.length === 0)
    message[`${CANARY}${Math.floor(rand() * 9)}`] = bad[Math.floor(rand() * bad.length)];
  else if (mutation === 1) delete message[keys[Math.floor(rand() * keys.length)]];
  else if (mutation === 2) {
    const key = keys[Math.floor(rand() * keys.length)];
    // Any short string is a well-formed turn id (an unknown one is refused by the core): give turnId no string.
    const choices = key === 'turnId' ? bad.filter((b) => typeof b !== 'string' || b.length > 200) : bad;
    message[key] = choices[Math.floor(rand() * choices.length)];
  } else message.type = `${String(message.type)}${bad[Math.floor(rand() * 3)]}`;
  return message;
}

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('Version History view host in real VS Code', function () {
  this.timeout(120_000);

  before(async () => {
    await api();
    await vscode.commands.executeCommand('agentVersions.showVersionHistory');
    await until(
      'the view to resolve and its webview to say ready',
      describeView,
      (s) => s.resolved && s.ready && s.view === 'versions',
    );
  });

  it('serves a page with a strict CSP and a fresh nonce on every load', async () => {
    const { html } = await describeView();
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? '';
    assert.match(csp, /^default-src 'none'; /);
    assert.match(csp, /script-src 'nonce-[0-9a-f-]{36}'$/);
    assert.match(html, /<script type="module" nonce="[0-9a-f-]{36}" src="[^"]+\/dist\/webview\/index\.js"/);
  });

  it('rejects 3,000 malformed or unknown webview payloads with no effect on git or the store, logging nothing of their content', async () => {
    const repo = folder();
    const userFile = path.join(repo, 'untracked-user-file.txt');
    fs.writeFileSync(userFile, 'the user is editing this\n');
    try {
      const before = picture(repo);
      const inventory = contentInventory(repo);
      const rand = seeded(7);
      const accepted: unknown[] = [];
      for (let i = 0; i < 3000; i++) {
        const payload = malformed(rand);
        if (await post(payload)) accepted.push(payload);
      }
      assert.deepEqual(accepted, []);
      assert.equal(picture(repo), before);
      assertNothingLost(repo, inventory);
      const lines = await vscode.commands.executeCommand<string[]>('agentVersions._test.recentLog');
      assert.ok(lines.some((l) => l.startsWith('view.message-rejected')));
      for (const line of lines) assert.ok(!line.includes(CANARY), `a log line carries payload content: ${line}`);
    } finally {
      fs.rmSync(userFile, { force: true });
    }
  });

  it('Show changes opens the multi-file diff editor; Undo from the pane restores (checked with git) and the list updates', async () => {
    const avh = await api();
    const repo = folder();
    const base = git(repo, 'rev-parse', 'HEAD').trim();
    const { turnId } = await avh.beginTurn({ chatId: 'view-chat', prompt: 'Change two files' });
    fs.writeFileSync(path.join(repo, 'view-a.txt'), 'a\n');
    fs.writeFileSync(path.join(repo, 'README.md'), '# changed by the turn\n');
    const { version } = await avh.endTurn(turnId, 'completed');
    assert.ok(version);
    const rowsBefore = (await until('the new turn on top of the view', describeView, (s) => s.top === version)).rows;

    assert.equal(await post({ type: 'showChanges', id: 1, oid: version }), true);
    await until(
      'the multi-file diff tab',
      async () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).map((t) => t.label),
      (labels) => labels.some((l) => l.includes(`Change two files (${version.slice(0, 7)})`)),
    );
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');

    const inventory = contentInventory(repo);
    assert.equal(await post({ type: 'undo', id: 2, turnId }), true);
    assert.match(git(repo, 'log', '-1', '--format=%s'), /^\[Restore\] Restored version /);
    assert.equal(git(repo, 'diff', '--stat', base, 'HEAD', '--').trim(), '', "the tree is the turn's base again");
    assert.equal(fs.existsSync(path.join(repo, 'view-a.txt')), false);
    assertNothingLost(repo, inventory);
    const restored = git(repo, 'rev-parse', 'HEAD').trim();
    const after = await until('the [Restore] row on top', describeView, (s) => s.top === restored);
    assert.equal(after.rows, rowsBefore + 1);
    // A commit of one's own ends the Redo window, leaving undo:0 redo:0 for the suites that run after this one.
    fs.writeFileSync(path.join(repo, 'after-undo.txt'), 'mine\n');
    git(repo, 'add', 'after-undo.txt');
    git(repo, 'commit', '-q', '-m', 'after the undo');
    await until('the commit on top', describeView, (s) => s.top === git(repo, 'rev-parse', 'HEAD').trim());
    await until(
      'the status bar to follow',
      () => vscode.commands.executeCommand<{ statusText: string }>('agentVersions._test.recoveryState'),
      (s) => s.statusText === '$(history) undo:0 redo:0',
    );
  });
});
