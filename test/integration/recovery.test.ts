import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { RECOVERY_SUBJECT } from '../../src/core/domain/promptSummary';
import { recoveryLatchPresent, seedRecoveryLatch } from '../support/assertions';
import { VersionHistory } from '../../src/core/versionHistory';
import { eventually } from '../support/eventually';
import { git } from '../support/gitFixtures';

const seedLatch = (folder: string) => seedRecoveryLatch(folder, 'op-ext-host');

const EXTENSION_ID = 'agent-version-history.agent-version-history';

interface RecoveryUiState {
  statusText: string;
  statusTooltip: string;
  statusCommand: string | undefined;
  statusWarning: boolean;
  contextKeys: Record<string, boolean>;
  sessions: { state: string; notices: string[] }[];
}

const uiState = () => vscode.commands.executeCommand<RecoveryUiState>('agentVersions._test.recoveryState');

const until = (what: string, predicate: (s: RecoveryUiState) => boolean, timeoutMs = 15_000) =>
  eventually(`${what} (UI state)`, uiState, predicate, { timeoutMs });

/** Evaluates a contributed `enablement` clause (`a && !b` form, all our commands use) against the context keys. */
function enabled(commandId: string, keys: Record<string, boolean>): boolean {
  const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
  const contributed = (ext.packageJSON as { contributes: { commands: { command: string; enablement?: string }[] } })
    .contributes.commands;
  const clause = contributed.find((c) => c.command === commandId)?.enablement;
  assert.ok(clause !== undefined, `${commandId} has an enablement clause`);
  return clause
    .split('&&')
    .map((t) => t.trim())
    .every((term) => (term.startsWith('!') ? !keys[term.slice(1)] : !!keys[term]));
}

/** Fails with `what` when `promise` has not settled in time (names the step that hangs). */
async function within<T>(what: string, promise: Thenable<T>, timeoutMs = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve(promise), late]);
  } finally {
    clearTimeout(timer);
  }
}

function enablement(keys: Record<string, boolean>): Record<string, boolean> {
  const ids = ['undo', 'redo', 'restore', 'useCurrentVersion', 'saveAndUseCurrentVersion', 'checkRepositoryAgain'];
  return Object.fromEntries(ids.map((id) => [id, enabled(`agentVersions.${id}`, keys)]));
}

describe('guided recovery in the extension host (status bar, context keys, commands)', function () {
  this.timeout(60_000);
  let folder: string;

  before(async () => {
    const ws = vscode.workspace.workspaceFolders?.[0];
    assert.ok(ws);
    folder = ws.uri.fsPath;
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
  });

  after(async () => {
    // Leave the shared workspace as other suites expect it: on main, clean, no latch.
    git(folder, 'checkout', '-q', 'main');
    if (await recoveryLatchPresent(folder)) await vscode.commands.executeCommand('agentVersions.useCurrentVersion');
  });

  it('shows undo:N redo:M history counts for the repository when no recovery is needed', async () => {
    const s = await until('the history status', (x) => x.statusText.startsWith('$(history)'));
    assert.equal(s.statusText, '$(history) undo:0 redo:0');
    assert.match(
      s.statusTooltip,
      new RegExp(
        `^Agent Version History — ${path.basename(folder)}: 0 agent turns can be undone, 0 undos can be redone\\.`,
      ),
    );
    assert.equal(s.statusCommand, 'agentVersions.showVersionHistory');
    assert.equal(s.statusWarning, false);
    assert.deepEqual(s.contextKeys, {
      'agentVersions.recoveryRequired': false,
      'agentVersions.recoveryDirty': false,
      'agentVersions.activeRecoveryRequired': false,
      'agentVersions.canRedo': false,
    });
    assert.deepEqual(enablement(s.contextKeys), {
      undo: true,
      redo: false,
      restore: true,
      useCurrentVersion: false,
      saveAndUseCurrentVersion: false,
      checkRepositoryAgain: false,
    });
  });

  it('turns into the recovery indicator when a latch appears (written by another process), with the notice shown', async () => {
    await seedLatch(folder);
    const s = await until('the recovery indicator', (x) => x.statusText === '$(warning) Version recovery needed');
    assert.equal(s.statusWarning, true);
    assert.match(
      s.statusTooltip,
      /could not be verified, so undo, redo and restore are paused\. Click to show the notice, then choose "Use current version"\.$/,
    );
    assert.equal(s.statusCommand, 'agentVersions._resurfaceRecoveryNotice');
    assert.deepEqual(s.contextKeys, {
      'agentVersions.recoveryRequired': true,
      'agentVersions.recoveryDirty': false,
      'agentVersions.activeRecoveryRequired': true,
      'agentVersions.canRedo': false,
    });
    assert.deepEqual(enablement(s.contextKeys), {
      undo: false,
      redo: false,
      restore: false,
      useCurrentVersion: true,
      saveAndUseCurrentVersion: false,
      checkRepositoryAgain: true,
    });
    assert.deepEqual(
      s.sessions.map((x) => x.state),
      ['required'],
    );
    assert.deepEqual(s.sessions[0].notices, ['required']);
    await vscode.commands.executeCommand('agentVersions._resurfaceRecoveryNotice');
  });

  it('a dirty tree: Use Current Version finds it, enables Save Changes & Use Current Version, which commits [Recovery] and unlocks', async () => {
    fs.writeFileSync(path.join(folder, 'unsaved.txt'), 'unsaved work\n');
    const result = await vscode.commands.executeCommand<string>('agentVersions.useCurrentVersion');
    assert.equal(result, 'dirty');
    let s = await until('the dirty state', (x) => x.contextKeys['agentVersions.recoveryDirty']);
    assert.equal(s.statusText, '$(warning) Version recovery needed');
    assert.match(s.statusTooltip, /your current changes need to be saved .*"Save changes & use current version"\.$/);
    assert.deepEqual(enablement(s.contextKeys), {
      undo: false,
      redo: false,
      restore: false,
      useCurrentVersion: true,
      saveAndUseCurrentVersion: true,
      checkRepositoryAgain: true,
    });
    assert.ok(await recoveryLatchPresent(folder), 'finding a dirty tree keeps recovery');

    assert.equal(await vscode.commands.executeCommand<string>('agentVersions.saveAndUseCurrentVersion'), 'accepted');
    assert.equal(git(folder, 'log', '-1', '--format=%s').trim(), RECOVERY_SUBJECT);
    assert.equal(git(folder, 'status', '--porcelain').trim(), '');
    assert.equal(await recoveryLatchPresent(folder), false);
    s = await until('the history status again', (x) => x.statusText.startsWith('$(history)'));
    assert.equal(s.statusWarning, false);
    assert.deepEqual(s.contextKeys, {
      'agentVersions.recoveryRequired': false,
      'agentVersions.recoveryDirty': false,
      'agentVersions.activeRecoveryRequired': false,
      'agentVersions.canRedo': false,
    });
    assert.deepEqual(s.sessions[0].notices, ['required', 'dirty', 'saved']);
  });

  it('a blocker (detached HEAD): Check Repository Again keeps recovery and never enables save; accepted once resolved', async () => {
    await seedLatch(folder);
    await until('the recovery indicator', (x) => x.contextKeys['agentVersions.recoveryRequired']);
    git(folder, 'checkout', '-q', '--detach');
    assert.equal(await vscode.commands.executeCommand<string>('agentVersions.checkRepositoryAgain'), 'blocked');
    let s = await until('the blocked tooltip', (x) => /not on a branch/.test(x.statusTooltip));
    assert.match(
      s.statusTooltip,
      /This project is not on a branch \(Git calls this a detached HEAD\)\. Switch to a branch outside VS Code, then check again\. Click to show the notice\.$/,
    );
    assert.deepEqual(enablement(s.contextKeys), {
      undo: false,
      redo: false,
      restore: false,
      useCurrentVersion: true,
      saveAndUseCurrentVersion: false,
      checkRepositoryAgain: true,
    });
    assert.equal(
      await vscode.commands.executeCommand<string>('agentVersions.saveAndUseCurrentVersion'),
      undefined,
      'save does not apply',
    );
    assert.ok(await recoveryLatchPresent(folder));

    git(folder, 'checkout', '-q', 'main');
    assert.equal(await vscode.commands.executeCommand<string>('agentVersions.checkRepositoryAgain'), 'accepted');
    s = await until('the history status again', (x) => x.statusText.startsWith('$(history)'));
    assert.equal(await recoveryLatchPresent(folder), false);
    assert.deepEqual(s.sessions[0].notices.slice(-3), ['required', 'blocked', 'ready']);
  });
  it("two repositories in one window: recovery in repository A; Undo in repository B still works from the palette, B's status bar keeps its counts", async () => {
    // B: a repository of its own inside A's workspace folder (as in a multi-root window, VS Code's Source Control
    // shows it as a second repository); A ignores it so that A's own tree stays clean.
    const repoB = path.join(folder, 'repo-b');
    fs.mkdirSync(repoB);
    fs.appendFileSync(path.join(folder, '.git', 'info', 'exclude'), '\n/repo-b/\n');
    for (const args of [
      ['init', '-q', '-b', 'main'],
      ['config', 'user.name', 'Test User'],
      ['config', 'user.email', 'test@example.com'],
      ['config', 'commit.gpgsign', 'false'],
    ])
      git(repoB, ...args);
    fs.writeFileSync(path.join(repoB, 'b.txt'), 'b v1\n');
    git(repoB, 'add', '-A');
    git(repoB, 'commit', '-q', '-m', 'initial commit of B');
    try {
      // An agent turn recorded in B by another process (the CLI / hook does the same).
      const b = await VersionHistory.open(repoB);
      try {
        const { turnId } = await within('beginTurn in B', b.beginTurn({ chatId: 'multi-root', prompt: 'change b' }));
        fs.writeFileSync(path.join(repoB, 'b.txt'), 'b v2 by the agent\n');
        await within('endTurn in B', b.endTurn(turnId, 'completed'));
      } finally {
        await b.close();
      }
      await within('the latch in A', seedLatch(folder));
      await within('an editor in B', vscode.window.showTextDocument(vscode.Uri.file(path.join(repoB, 'b.txt'))));
      let s = await until(
        'B active while A needs recovery',
        (x) =>
          x.contextKeys['agentVersions.recoveryRequired'] &&
          !x.contextKeys['agentVersions.activeRecoveryRequired'] &&
          x.statusText === '$(history) undo:1 redo:0',
      );
      assert.equal(s.statusWarning, false);
      assert.equal(s.statusCommand, 'agentVersions.showVersionHistory');
      assert.match(s.statusTooltip, /1 agent turn can be undone, 0 undos can be redone/);
      assert.deepEqual(enablement(s.contextKeys), {
        undo: true,
        redo: false,
        restore: true,
        useCurrentVersion: true,
        saveAndUseCurrentVersion: false,
        checkRepositoryAgain: true,
      });
      await within('Undo from the palette in B', vscode.commands.executeCommand('agentVersions.undo'), 30_000);
      assert.match(git(repoB, 'log', '-1', '--format=%s'), /^\[Restore\]/);
      assert.equal(fs.readFileSync(path.join(repoB, 'b.txt'), 'utf8'), 'b v1\n');
      s = await until("B's counts after the undo", (x) => x.statusText === '$(history) undo:0 redo:1');
      assert.equal(s.contextKeys['agentVersions.canRedo'], true);
      assert.ok(await recoveryLatchPresent(folder), 'A still needs recovery');
      // Back in A: its Undo is disabled and the status bar shows A's recovery indicator.
      await within('an editor in A', vscode.window.showTextDocument(vscode.Uri.file(path.join(folder, 'README.md'))));
      s = await until(
        'A active again',
        (x) => x.contextKeys['agentVersions.activeRecoveryRequired'] && x.statusWarning,
      );
      assert.equal(enablement(s.contextKeys).undo, false);
      assert.equal(await vscode.commands.executeCommand<string>('agentVersions.useCurrentVersion'), 'accepted');
    } finally {
      // B stays (ignored by A): the window keeps its controller open, as it would for a user's nested repository.
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
  });
});
