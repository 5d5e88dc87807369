import * as assert from 'node:assert/strict';
import { parseHostMessage, parseVersionRow, parseWebviewMessage } from '../../src/vscode/historyView/protocol';
import { historyViewHtml } from '../../src/vscode/historyView/html';

const OID = 'a'.repeat(40);
const assets = {
  cspSource: 'https://file+.vscode-resource.vscode-cdn.net',
  scriptUri: 'https://x/dist/webview/index.js',
  styleUri: 'https://x/dist/webview/index.css',
};

describe('Version History protocol and page (plain Node)', () => {
  it('accepts each webview message of the protocol exactly as declared', () => {
    for (const message of [
      { type: 'ready', protocol: 1 },
      { type: 'openReadme', section: 'extension-api' },
      { type: 'connectAgent', agent: 'claude-code' },
      { type: 'connectAgent' },
      { type: 'checkAgentConnections' },
      { type: 'showChanges', id: 1, oid: OID },
      { type: 'undo', id: 2, turnId: 'turn-1' },
      { type: 'redo', id: 3 },
      { type: 'restore', id: 4, oid: 'b'.repeat(64) },
      { type: 'loadMore', id: 5 },
      { type: 'showTurnChanges', id: 6, turnId: 'turn-1' },
      { type: 'restoreBeforeCommand', id: 7, checkpointId: '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b' },
    ])
      assert.deepEqual(parseWebviewMessage(message), message);
  });

  it('rejects unknown types, extra keys, wrong shapes and non-objects', () => {
    for (const raw of [
      undefined,
      null,
      7,
      'ready',
      [],
      {},
      { type: 'ready' },
      { type: 'ready', protocol: 2 },
      { type: 'ready', protocol: 1, extra: true },
      { type: 'restore', id: 1, oid: 'HEAD' },
      { type: 'restore', id: 1, oid: `${OID}\n--hard` },
      { type: 'restore', id: -1, oid: OID },
      { type: 'restore', id: 1.5, oid: OID },
      { type: 'undo', id: 1, turnId: '' },
      { type: 'undo', id: 1, turnId: 'x'.repeat(201) },
      { type: 'showChanges', oid: OID },
      { type: 'showTurnChanges', id: 1, turnId: '' },
      { type: 'showTurnChanges', id: 1, oid: OID },
      // Restore to Before This Command names a checkpoint by its UUID, nothing else.
      { type: 'restoreBeforeCommand', id: 1 },
      { type: 'restoreBeforeCommand', id: 1, checkpointId: '' },
      { type: 'restoreBeforeCommand', id: 1, checkpointId: 'HEAD' },
      { type: 'restoreBeforeCommand', id: 1, checkpointId: '../../etc/passwd-aaaaaaaaaaaaaaaaaaaaaaaaa' },
      { type: 'restoreBeforeCommand', id: 1, checkpointId: '6F1C2A8E-3B4D-4E5F-8A9B-0C1D2E3F4A5B' },
      { type: 'restoreBeforeCommand', id: 1, checkpointId: '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b\n' },
      { type: 'restoreBeforeCommand', id: 1, checkpointId: '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b', oid: OID },
      { type: 'restoreBeforeCommand', checkpointId: '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b' },
      { type: 'openReadme', section: 'https://example.com' },
      { type: 'openReadme', section: 'claude-code-hooks' },
      { type: 'connectAgent', agent: 'Claude Code' },
      { type: 'connectAgent', agent: '--user' },
      { type: 'connectAgent', agent: 'a'.repeat(41) },
      { type: 'connectAgent', agent: 'codex', scope: 'user' },
      { type: 'checkAgentConnections', folder: '/etc' },
      { type: 'exec', id: 1 },
      { type: '__proto__', id: 1 },
      { type: 'redo', id: '1' },
      Object.create({ type: 'redo', id: 1 }) as unknown,
    ])
      assert.equal(parseWebviewMessage(raw), undefined, JSON.stringify(raw) ?? String(raw));
  });

  it('the webview side accepts host notifications and rejects malformed ones; rows validate one by one', () => {
    assert.ok(
      parseHostMessage({
        type: 'didChangeVersions',
        view: { kind: 'versions', branch: 'main', rows: [{}], hasMore: false, canRedo: false, hasTurns: true },
      }),
    );
    assert.ok(parseHostMessage({ type: 'didChangeBusy', busy: null }));
    assert.equal(parseHostMessage({ type: 'didChangeVersions', view: { kind: 'versions' } }), undefined);
    const view = { kind: 'versions', branch: 'main', rows: [], hasMore: false, canRedo: false, hasTurns: true };
    const open = {
      id: 't',
      chatId: 'c',
      chatTitle: null,
      agent: null,
      label: 'x',
      state: 'stopped',
      startedAt: 1,
      endedAt: 2,
      filesChanged: 3,
      canUndo: true,
    };
    assert.ok(parseHostMessage({ type: 'didChangeVersions', view: { ...view, openTurns: [open] } }));
    for (const bad of [
      { ...open, state: 'exploded' },
      { ...open, filesChanged: '3' },
      { ...open, id: undefined },
    ])
      assert.equal(parseHostMessage({ type: 'didChangeVersions', view: { ...view, openTurns: [bad] } }), undefined);
    // Checkpoint steps (issue 34), under an open turn and under a version's turn.
    const step = {
      id: '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b',
      label: 'git reset --hard',
      command: 'git reset --hard',
      createdAt: 1,
      savedFiles: 0,
      deleted: 1,
      modified: 0,
      files: [{ path: 'a.txt', status: 'deleted' }],
    };
    const checkpointed = { turnId: 't', oid: OID, label: 'x', time: 1, agent: null, chatTitle: null, steps: [step] };
    assert.ok(
      parseHostMessage({ type: 'didChangeVersions', view: { ...view, openTurns: [{ ...open, steps: [step] }] } }),
    );
    assert.ok(parseHostMessage({ type: 'didChangeVersions', view: { ...view, checkpoints: [checkpointed] } }));
    for (const bad of [
      { ...step, id: 'x' },
      { ...step, files: [{ path: 'a.txt', status: 'added' }] },
      { ...step, deleted: '1' },
      { ...step, command: undefined },
    ]) {
      assert.equal(
        parseHostMessage({ type: 'didChangeVersions', view: { ...view, openTurns: [{ ...open, steps: [bad] }] } }),
        undefined,
      );
      assert.equal(
        parseHostMessage({
          type: 'didChangeVersions',
          view: { ...view, checkpoints: [{ ...checkpointed, steps: [bad] }] },
        }),
        undefined,
      );
    }
    assert.equal(parseHostMessage({ type: 'reply' }), undefined);
    assert.equal(parseVersionRow({ oid: OID }), undefined);
    const row = {
      oid: OID,
      label: 'x',
      kind: 'agent',
      time: 1,
      filesChanged: 1,
      insertions: 1,
      deletions: 0,
      isHead: true,
      turn: null,
    };
    assert.deepEqual(parseVersionRow(row), row);
  });

  it("the page's CSP is default-src 'none', scripts only by a nonce that is fresh on every load", () => {
    const a = historyViewHtml(assets);
    const b = historyViewHtml(assets);
    const csp = (html: string) => /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? '';
    const nonce = (html: string) => /script-src 'nonce-([^']+)'/.exec(html)?.[1] ?? '';
    assert.match(csp(a), /^default-src 'none'; /);
    assert.doesNotMatch(csp(a), /unsafe-inline|unsafe-eval|\*/);
    assert.match(nonce(a), /^[0-9a-f-]{36}$/);
    assert.notEqual(nonce(a), nonce(b));
    assert.match(a, new RegExp(`<script type="module" nonce="${nonce(a)}" src="https://x/dist/webview/index.js">`));
    assert.doesNotMatch(a, /\son\w+=/, 'no inline handlers');
    assert.equal((a.match(/<script/g) ?? []).length, 1);
  });
});
