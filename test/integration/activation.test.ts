import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

const EXTENSION_ID = 'agent-version-history.agent-version-history';

describe('activation', () => {
  it('activates on the opened git repository', async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'the runner opens a workspace folder');
    assert.ok(fs.existsSync(path.join(folder.uri.fsPath, '.git')), `${folder.uri.fsPath} is a git repository`);

    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is loaded`);
    await ext.activate();
    assert.equal(ext.isActive, true);
  });
});
