import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { eventually } from '../support/eventually';

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

  it('starts git from its launcher process, a child of the extension host (docs/design.md, "Starting git from a large process")', async () => {
    const children = (): string[] =>
      fs
        .readdirSync('/proc')
        .filter((pid) => /^\d+$/.test(pid))
        .flatMap((pid) => {
          try {
            const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
            const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
            return ppid === process.pid ? [fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')] : [];
          } catch {
            return []; // exited meanwhile
          }
        });
    const isLauncher = (cmd: string) => /dist[\\/]gitLauncher\.js/.test(cmd);
    const launchers = await eventually(
      "the git launcher among the extension host's children",
      () => children().filter(isLauncher),
      (found) => found.length > 0,
      { timeoutMs: 5_000 },
    );
    assert.equal(launchers.length, 1, `one launcher among the extension host's children: ${children().join(' | ')}`);
  });
});
