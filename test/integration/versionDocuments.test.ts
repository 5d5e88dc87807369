import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentVersionHistoryApi } from '../../src/vscode/extensionApi';
import { eventually } from '../support/eventually';
import { assertNothingLost, contentInventory, git } from '../support/gitFixtures';
import { createGitWorkspace } from './workspace';

const EXTENSION_ID = 'agent-version-history.agent-version-history';

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

let opened = 0;
/** An `agent-version:` document of `file` at `oid` in `root`; a fragment of its own, so VS Code asks the provider anew. */
function versionDocument(root: string, oid: string, file: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: 'agent-version',
    path: `/${file}`,
    query: JSON.stringify({ root, oid }),
    fragment: `n${opened++}`,
  });
}

/**
 * `git.path` (the user's setting the extension runs) pointed at a wrapper that logs the folder each git runs in, then
 * runs the real git. Returns the log reader and the restore.
 */
async function loggingGit(): Promise<{ ranIn: () => string[]; restore: () => Promise<void> }> {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'avh-gitlog-')));
  const log = path.join(dir, 'runs.log');
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const wrapper = path.join(dir, 'git');
  fs.writeFileSync(wrapper, `#!/bin/sh\npwd -P >> '${log}'\nexec '${realGit}' "$@"\n`, { mode: 0o755 });
  const config = vscode.workspace.getConfiguration('git');
  const before = config.inspect<unknown>('path')?.globalValue;
  await config.update('path', wrapper, vscode.ConfigurationTarget.Global);
  return {
    ranIn: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []),
    restore: async () => {
      await vscode.workspace.getConfiguration('git').update('path', before, vscode.ConfigurationTarget.Global);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('agent-version: documents open only repositories of this workspace (real VS Code)', function () {
  this.timeout(60_000);

  it('a document or Undo This File naming a repository outside the workspace is refused, and git never runs there', async () => {
    await api();
    const repo = folder();
    const outside = createGitWorkspace({ files: { 'README.md': 'outside the workspace\n' } });
    // A link inside the workspace (in .git/, so the tree stays clean) that leads out of it.
    const link = path.join(repo, '.git', 'avh-test-link-out');
    fs.symlinkSync(outside.folder, link);
    const logged = await loggingGit();
    try {
      const inventory = contentInventory(outside.folder);
      const outsideHead = git(outside.folder, 'rev-parse', 'HEAD').trim();
      // The control: a document of the workspace's repository is served, by a git that ran through the wrapper.
      const head = git(repo, 'rev-parse', 'HEAD').trim();
      const file = git(repo, 'ls-tree', '--name-only', head).split('\n')[0];
      const expected = git(repo, 'show', `${head}:${file}`);
      await eventually(
        'a workspace document served by the logging git',
        async () => {
          const doc = await vscode.workspace.openTextDocument(versionDocument(repo, head, file));
          return { text: doc.getText(), ranHere: logged.ranIn().includes(repo) };
        },
        (r) => r.text === expected && r.ranHere,
        { timeoutMs: 20_000, intervalMs: 200 },
      );

      for (const root of [outside.folder, link, path.join(outside.folder, '.')]) {
        await assert.rejects(
          Promise.resolve(vscode.workspace.openTextDocument(versionDocument(root, outsideHead, 'README.md'))),
          /outside this workspace/,
          root,
        );
        await vscode.commands.executeCommand('agentVersions.undoFile', versionDocument(root, outsideHead, 'README.md'));
      }

      const strays = logged.ranIn().filter((cwd) => cwd === outside.folder || cwd.startsWith(`${outside.folder}/`));
      assert.deepEqual(strays, [], 'no git ran in the repository outside the workspace');
      assert.equal(fs.existsSync(path.join(outside.folder, '.git', 'agent-versions')), false, 'no state opened there');
      assert.equal(git(outside.folder, 'rev-parse', 'HEAD').trim(), outsideHead);
      assert.equal(git(outside.folder, 'status', '--porcelain'), '');
      assertNothingLost(outside.folder, inventory);
    } finally {
      await logged.restore();
      fs.rmSync(link, { force: true });
      outside.dispose();
    }
  });
});
