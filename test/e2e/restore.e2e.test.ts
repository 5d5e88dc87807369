// Undo / Redo Agent Turn from the command palette of a real workbench (code-server + Chromium, extension from
// the packaged .vsix) on a repository built beforehand through the product's real CLI, which drives the same
// core and state as the extension API: one completed agent turn, then one commit the user made by hand. Undoing
// past that commit must ask first with a modal naming the count; Escape / Cancel change nothing.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { cliJson } from '../support/cliProcess';
import { eventually } from '../support/eventually';
import { cleanupTempDirs, git, gitStatus, head, makeRepo, subjectOf, write } from '../support/gitFixtures';
import { runCommand, startWorkbench, waitForNotification, type Workbench } from './harness';

const UNDO = 'Agent Versions: Undo Agent Turn';
const REDO = 'Agent Versions: Redo Agent Turn';
// Work landed after the turn (the user's commit): Undo offers the choice (issue 12).
const CONFIRM = 'Work landed after this turn: 1 of your commits.';
const AGENT_FILE = 'src/feature.ts';
const USER_FILE = 'notes.md';

/** The modal confirm dialog: a `.monaco-dialog-box` in the web workbench. */
function dialog(page: Page) {
  return page.locator('.monaco-dialog-box');
}

async function waitForConfirm(page: Page): Promise<void> {
  const box = dialog(page);
  await box.waitFor({ state: 'visible', timeout: 20_000 });
  await box.filter({ hasText: CONFIRM }).waitFor({ state: 'visible', timeout: 5_000 });
}

/** Runs Undo from the palette (the harness retries while extension commands are not listed yet) and waits for the modal. */
async function undoUntilConfirm(page: Page): Promise<void> {
  await runCommand(page, UNDO);
  await waitForConfirm(page);
}

async function statusBarShows(page: Page, text: string | RegExp): Promise<void> {
  await page
    .locator('.part.statusbar .statusbar-item', { hasText: text })
    .first()
    .waitFor({ state: 'visible', timeout: 30_000 });
}

function tree(folder: string, rev = 'HEAD'): string {
  return git(folder, 'rev-parse', `${rev}^{tree}`).trim();
}

function porcelain(folder: string): string {
  return git(folder, 'status', '--porcelain', '--untracked-files=all').trim();
}

describe('undo / redo agent turn from the palette (code-server + Chromium, extension from the .vsix)', function () {
  this.timeout(180_000);
  let folder = '';
  let workbench: Workbench | undefined;
  let agentCommit = '';
  let userCommit = '';
  let preUndoTree = '';
  let baseTree = '';

  before(async () => {
    folder = makeRepo();
    baseTree = tree(folder);
    // 1. One completed agent turn through the real CLI process (same core and store as the extension API).
    const { turnId } = cliJson<{ turnId: string }>(
      ['turn', 'begin', '--chat', 'e2e-chat', '--prompt', 'Add the feature module'],
      { cwd: folder },
    );
    write(folder, AGENT_FILE, 'export const feature = true;\n');
    const ended = cliJson<{ outcome: string; version: string }>(['turn', 'end', turnId, '--outcome', 'completed'], {
      cwd: folder,
    });
    assert.equal(ended.outcome, 'completed');
    agentCommit = ended.version;
    assert.equal(head(folder), agentCommit, 'the completed turn is HEAD');
    // 2. Then a commit the user makes by hand.
    write(folder, USER_FILE, 'my own notes\n');
    git(folder, 'add', USER_FILE);
    git(folder, 'commit', '-q', '-m', 'user: my notes');
    userCommit = head(folder);
    preUndoTree = tree(folder);
    assert.equal(porcelain(folder), '');
    workbench = await startWorkbench({ folder });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench)
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-${test.fullTitle()}`)}`);
  });

  after(async () => {
    await workbench?.stop();
    cleanupTempDirs();
  });

  it('the extension sees the CLI-driven turn: status bar undo:1 redo:0', async () => {
    await statusBarShows(workbench!.page, 'undo:1 redo:0');
  });

  it('Undo → the choice modal naming 1 user commit; Escape and Cancel change nothing', async () => {
    const { page } = workbench!;
    await undoUntilConfirm(page);
    const box = dialog(page);
    assert.match(await box.innerText(), /stays reachable in Version History/);
    const buttons = (await box.locator('.dialog-buttons .monaco-button').allInnerTexts()).map((t) => t.trim());
    assert.ok(
      buttons.includes('Restore Everything to Before This Turn') &&
        buttons.includes('Undo Only This Turn') &&
        buttons.includes('Cancel'),
      `dialog buttons: ${JSON.stringify(buttons)}`,
    );
    await workbench!.screenshot('restore-1-confirm-modal');

    await page.keyboard.press('Escape');
    await box.waitFor({ state: 'hidden', timeout: 10_000 });
    await undoUntilConfirm(page);
    await box.getByRole('button', { name: 'Cancel' }).click();
    await box.waitFor({ state: 'hidden', timeout: 10_000 });

    // Nothing was started: the command logged that both confirmations were declined and returned; then git and the UI.
    await eventually(
      'both declined confirmations in the extension log',
      () => workbench!.extensionLog().match(/restore\.not-confirmed kind=undo/g)?.length ?? 0,
      (n) => n >= 2,
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    assert.equal(head(folder), userCommit, 'HEAD unchanged after Escape / Cancel');
    assert.equal(porcelain(folder), '', 'working tree untouched');
    assert.equal(
      await page.locator('.notification-toast', { hasText: /Agent turn undone|Undo Agent Turn…/ }).count(),
      0,
    );
    await statusBarShows(page, 'undo:1 redo:0');
  });

  it('Restore Everything → "Agent turn undone — restored version …"; git: [Restore] commit, agent file gone, user commit reachable, clean', async () => {
    const { page } = workbench!;
    await undoUntilConfirm(page);
    await dialog(page).getByRole('button', { name: 'Restore Everything to Before This Turn' }).click();
    await dialog(page).waitFor({ state: 'hidden', timeout: 10_000 });
    const base = git(folder, 'rev-parse', `${agentCommit}^`).trim();
    const undone = `Agent turn undone — restored version ${base.slice(0, 7)} as a new [Restore] version.`;
    await waitForNotification(page, undone);
    await page
      .locator('.notification-toast', { hasText: 'Undo Agent Turn…' })
      .first()
      .waitFor({ state: 'hidden', timeout: 30_000 });
    await waitForNotification(page, undone); // still shown: its toast may have hidden meanwhile, the center keeps it
    await workbench!.screenshot('restore-2-undone-toast');

    assert.match(subjectOf(folder), /^\[Restore\] Restored version/);
    assert.equal(
      git(folder, 'rev-parse', 'HEAD^').trim(),
      userCommit,
      'the [Restore] commit sits on top of the user commit',
    );
    assert.equal(git(folder, 'symbolic-ref', 'HEAD').trim(), 'refs/heads/main');
    assert.equal(fs.existsSync(path.join(folder, AGENT_FILE)), false, "the agent's file is gone from the worktree");
    assert.notEqual(
      gitStatus(folder, 'cat-file', '-e', `HEAD:${AGENT_FILE}`).code,
      0,
      "the agent's file is gone from HEAD",
    );
    assert.equal(
      gitStatus(folder, 'merge-base', '--is-ancestor', userCommit, 'HEAD').code,
      0,
      'the user commit is still reachable from HEAD',
    );
    assert.equal(tree(folder), baseTree, 'the tree is the turn base exactly');
    assert.equal(porcelain(folder), '', 'working tree clean');
    await statusBarShows(page, /redo:1/);
  });

  it('Redo → "Agent turn redone"; git: the tree equals the pre-undo tree', async () => {
    const { page } = workbench!;
    const undoCommit = head(folder);
    await runCommand(page, 'Notifications: Clear All Notifications');
    await runCommand(page, REDO);
    // No user commit lies between the pre-undo version and now: Redo must not ask.
    await waitForNotification(page, /Agent turn redone — restored version [0-9a-f]{7} as a new \[Restore\] version\./);
    assert.equal(await dialog(page).count(), 0, 'no confirm for redo');
    await page
      .locator('.notification-toast', { hasText: 'Redo Agent Turn…' })
      .first()
      .waitFor({ state: 'hidden', timeout: 30_000 });
    await workbench!.screenshot('restore-3-redone-toast');

    assert.equal(git(folder, 'rev-parse', 'HEAD^').trim(), undoCommit, 'redo adds a version on top of the undo');
    assert.match(subjectOf(folder), /^\[Restore\] Restored version/);
    assert.equal(tree(folder), preUndoTree, 'the tree equals the pre-undo tree exactly');
    assert.equal(fs.readFileSync(path.join(folder, AGENT_FILE), 'utf8'), 'export const feature = true;\n');
    assert.equal(fs.readFileSync(path.join(folder, USER_FILE), 'utf8'), 'my own notes\n');
    assert.equal(porcelain(folder), '', 'working tree clean');
    await statusBarShows(page, 'undo:1 redo:0');
  });
});
