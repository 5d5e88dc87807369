// The Version History pane in Source Control of a real workbench (code-server + Chromium, extension from the
// packaged .vsix): the status bar click focuses it; turns recorded through the real CLI and a commit made in
// a terminal appear live; Show changes opens the multi-file diff editor; Undo and Restore from the pane restore
// (checked with git) and the list follows; a recovery latch turns the pane into its one-line blocked state.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { BLOCKED_MESSAGE } from '../../src/views/versionHistory/copy';
import { seedRecoveryLatch } from '../support/assertions';
import { cliJson } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  subjectOf,
  write,
} from '../support/gitFixtures';
import { startWorkbench, waitForNotification, type Workbench } from './harness';

/** The pane's DOM: VS Code lays webviews over the workbench (not inside the pane), and ours is the only one open. */
function pane(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

/** Selects a row by clicking its badge, away from the action buttons hover shows on the right. */
const SELECT_SPOT = { x: 12, y: 10 };

function recordTurn(folder: string, prompt: string, file: string, content: string): string {
  const { turnId } = cliJson<{ turnId: string }>(
    ['turn', 'begin', '--chat', 'e2e-view', '--prompt', prompt, '--agent', 'e2e-agent'],
    { cwd: folder },
  );
  write(folder, file, content);
  return cliJson<{ version: string }>(['turn', 'end', turnId, '--outcome', 'completed'], { cwd: folder }).version;
}

describe('Version History pane in Source Control (code-server + Chromium, extension from the .vsix)', function () {
  this.timeout(180_000);
  let folder = '';
  let initial = '';
  let workbench: Workbench | undefined;

  before(async () => {
    folder = makeRepo();
    initial = head(folder);
    recordTurn(folder, 'Add the first module', 'src/first.ts', 'export const first = 1;\n');
    workbench = await startWorkbench({ folder });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench)
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-view-${test.fullTitle()}`)}`);
  });

  after(async () => {
    await workbench?.stop();
    cleanupTempDirs();
  });

  it('clicking the status bar item focuses the pane, which lists the versions', async () => {
    const page = workbench!.page;
    const item = page.locator('.part.statusbar .statusbar-item', { hasText: 'undo:1' }).first();
    await item.waitFor({ state: 'visible', timeout: 60_000 });
    await item.locator('a').first().click();
    const view = pane(page);
    await view
      .getByRole('option', { name: /^Agent: Add the first module, completed, by e2e-agent/ })
      .waitFor({ timeout: 30_000 });
    await view.getByRole('option', { name: /^Commit: initial,/ }).waitFor();
    await workbench!.screenshot('view-list');
  });

  it('a turn recorded through the CLI and a commit made in a terminal appear live', async () => {
    const view = pane(workbench!.page);
    recordTurn(folder, 'Add the second module', 'src/second.ts', 'export const second = 2;\nexport const more = 3;\n');
    await view.getByRole('option', { name: /^Agent: Add the second module, completed/ }).waitFor({ timeout: 15_000 });
    write(folder, 'notes.md', 'typed in a terminal\n');
    git(folder, 'add', 'notes.md');
    git(folder, 'commit', '-q', '-m', 'my terminal commit');
    await view
      .getByRole('option', { name: /^Commit: my terminal commit, .*1 file changed, \+1 −0/ })
      .waitFor({ timeout: 15_000 });
    await workbench!.screenshot('view-live');
  });

  it("Show changes opens the multi-file diff editor listing the version's files", async () => {
    const page = workbench!.page;
    const view = pane(page);
    const version = git(folder, 'log', '-1', '--format=%H', '--grep', 'Add the second module').trim();
    const row = view.getByRole('option', { name: /^Agent: Add the second module/ });
    await row.click({ position: SELECT_SPOT });
    await row.locator('button', { hasText: 'Show Changes' }).click();
    await page
      .locator('.tabs-container .tab', { hasText: `Add the second module (${version.slice(0, 7)})` })
      .waitFor({ timeout: 20_000 });
    await page.locator('.editor-instance').getByText('second.ts').first().waitFor({ timeout: 20_000 });
    await workbench!.screenshot('view-show-changes');
    await page.keyboard.press('Control+K');
    await page.keyboard.press('W');
  });

  it('Undo and Restore from the pane restore (checked with git) and the list updates', async () => {
    const page = workbench!.page;
    const view = pane(page);
    const before = contentInventory(folder);
    // The terminal commit sits above the turn: the same modal as the palette names it.
    const turnRow = view.getByRole('option', { name: /^Agent: Add the second module/ });
    await turnRow.click({ position: SELECT_SPOT });
    await turnRow.locator('button', { hasText: 'Undo' }).click();
    const box = page.locator('.monaco-dialog-box');
    // Work landed after the turn (the terminal commit): the choice modal; Restore Everything takes the commit away too.
    await box.filter({ hasText: 'Work landed after this turn: 1 of your commits.' }).waitFor({ timeout: 20_000 });
    await box.getByRole('button', { name: 'Restore Everything to Before This Turn' }).click();
    await waitForNotification(page, /Agent turn undone/);
    assert.match(subjectOf(folder), /^\[Restore\] /);
    assert.equal(fs.existsSync(path.join(folder, 'src/second.ts')), false);
    assert.equal(fs.existsSync(path.join(folder, 'src/first.ts')), true);
    await view.getByRole('option', { name: /^Agent: Add the second module, undone/ }).waitFor({ timeout: 15_000 });
    await view.getByRole('option', { name: /^Restore: .*current version$/ }).waitFor();
    await workbench!.screenshot('view-after-undo');

    const initialRow = view.getByRole('option', { name: /^Commit: initial,/ });
    await initialRow.click({ position: SELECT_SPOT });
    await initialRow.locator('button', { hasText: 'Restore to This Version' }).click();
    await box
      .filter({ hasText: /Restore Version will undo \d+ commits? you made yourself/ })
      .waitFor({ timeout: 20_000 });
    await box.getByRole('button', { name: 'Continue' }).click();
    await waitForNotification(page, /Version restored/);
    assert.equal(git(folder, 'rev-parse', 'HEAD^{tree}').trim(), git(folder, 'rev-parse', `${initial}^{tree}`).trim());
    assertNothingLost(folder, before);
    await view
      .getByRole('option', {
        name: new RegExp(`^Restore: Restored version ${initial.slice(0, 7)}, .*current version$`),
      })
      .waitFor({ timeout: 15_000 });
  });

  it('while recovery is required the pane shows only the blocked text and the recovery notice comes back', async () => {
    const page = workbench!.page;
    const view = pane(page);
    await seedRecoveryLatch(folder, 'e2e-op');
    await view.getByText(BLOCKED_MESSAGE).waitFor({ timeout: 15_000 });
    assert.equal(await view.getByRole('button').count(), 0);
    assert.equal(await view.getByRole('option').count(), 0);
    await waitForNotification(page, /Version restore needs attention|could not verify/);
    await workbench!.screenshot('view-blocked');
  });
});
