// Guided recovery clicked through the real UI: code-server + Chromium with the packaged .vsix. The latch is
// written with the real state store from this (separate) process, as a crashed restore would leave it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RECOVERY_SUBJECT } from '../../src/core/domain/promptSummary';
import { createGitWorkspace, type TestWorkspace } from '../integration/workspace';
import { recoveryLatchPresent, seedRecoveryLatch } from '../support/assertions';
import { git, gitStatus } from '../support/gitFixtures';
import { clickNotificationButton, runCommand, startWorkbench, waitForNotification, type Workbench } from './harness';

const seedLatch = (folder: string) => seedRecoveryLatch(folder, 'op-e2e');

const REQUIRED = 'Version restore needs attention';

/** The labels of the action buttons (not the close/expand toolbar) on the notification containing `text`. */
async function buttonsOf(workbench: Workbench, text: string | RegExp): Promise<string[]> {
  const notification = await waitForNotification(workbench.page, text);
  return (await notification.locator('.notification-list-item-buttons-container .monaco-button').allInnerTexts()).map(
    (t) => t.trim(),
  );
}

/** Screenshot once the progress toast of the finished action has gone (it fades out over the result). */
async function capture(workbench: Workbench, name: string): Promise<void> {
  const progress = workbench.page
    .locator('.notification-toast', { hasText: /Checking the current repository…|Saving the current version…/ })
    .first();
  await progress.waitFor({ state: 'hidden', timeout: 30_000 });
  await workbench.page.waitForTimeout(500);
  await workbench.screenshot(name);
}

async function statusBarShows(workbench: Workbench, text: string): Promise<void> {
  await workbench.page
    .locator('.part.statusbar .statusbar-item', { hasText: text })
    .first()
    .waitFor({ state: 'visible', timeout: 30_000 });
}

describe('guided recovery (code-server + Chromium, extension from the .vsix)', function () {
  this.timeout(180_000);
  let workspace: TestWorkspace | undefined;
  let workbench: Workbench | undefined;

  before(async () => {
    workspace = createGitWorkspace();
    await seedLatch(workspace.folder); // seeded before the window opens: activation must find it
    workbench = await startWorkbench({ folder: workspace.folder });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench)
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-${test.fullTitle()}`)}`);
    // Older notices must not answer the next test's waits (clearing them changes nothing: recovery is in the store).
    if (workbench) await runCommand(workbench.page, 'Notifications: Clear All Notifications');
  });

  after(async () => {
    await workbench?.stop();
    workspace?.dispose();
  });

  it('a clean repository: Use current version → "Version History is ready", git untouched', async () => {
    const wb = workbench!;
    const folder = workspace!.folder;
    const headBefore = git(folder, 'rev-parse', 'HEAD').trim();
    const indexBefore = fs.readFileSync(path.join(folder, '.git', 'index'));
    assert.deepEqual(await buttonsOf(wb, REQUIRED), ['Use current version']);
    await statusBarShows(wb, 'Version recovery needed');
    await capture(wb, 'recovery-1-required-toast');
    await clickNotificationButton(wb.page, REQUIRED, 'Use current version');
    await waitForNotification(wb.page, 'Version History is ready');
    await capture(wb, 'recovery-2-ready-toast');
    assert.deepEqual(await buttonsOf(wb, 'Version History is ready'), [], 'the success notice is passive');
    await statusBarShows(wb, 'undo:0 redo:0');
    assert.equal(await recoveryLatchPresent(folder), false);
    assert.equal(git(folder, 'rev-parse', 'HEAD').trim(), headBefore);
    assert.deepEqual(
      fs.readFileSync(path.join(folder, '.git', 'index')),
      indexBefore,
      'the index file is byte-identical',
    );
  });

  it('a dirty repository: Save changes & use current version → a [Recovery] commit and "Current changes saved"', async () => {
    const wb = workbench!;
    const folder = workspace!.folder;
    fs.writeFileSync(path.join(folder, 'src', 'unsaved.ts'), 'export const unsaved = true;\n');
    fs.writeFileSync(path.join(folder, 'README.md'), '# demo workspace\nedited\n');
    await seedLatch(folder); // a new recovery appears while the window is open
    await clickNotificationButton(wb.page, REQUIRED, 'Use current version');
    const dirty = 'Your current changes need to be saved';
    assert.deepEqual(await buttonsOf(wb, dirty), ['Save changes & use current version']);
    await capture(wb, 'recovery-3-dirty-toast');
    assert.equal(await recoveryLatchPresent(folder), true, 'finding changes keeps recovery');
    await clickNotificationButton(wb.page, dirty, 'Save changes & use current version');
    await waitForNotification(
      wb.page,
      `Current changes saved — Your changes were saved as ${RECOVERY_SUBJECT}. Version History is ready.`,
    );
    await capture(wb, 'recovery-4-saved-toast');
    assert.equal(git(folder, 'log', '-1', '--format=%s').trim(), RECOVERY_SUBJECT);
    assert.equal(git(folder, 'show', 'HEAD:src/unsaved.ts'), 'export const unsaved = true;\n');
    assert.equal(git(folder, 'symbolic-ref', 'HEAD').trim(), 'refs/heads/main');
    assert.equal(git(folder, 'status', '--porcelain', '--untracked-files=all').trim(), '');
    assert.equal(await recoveryLatchPresent(folder), false);
  });

  it('a rebase in progress: only "Check again"; still there after a reload; accepted once the rebase is aborted outside', async () => {
    const wb = workbench!;
    const folder = workspace!.folder;
    git(folder, 'checkout', '-q', '-b', 'other');
    fs.writeFileSync(path.join(folder, 'src', 'app.ts'), 'export const answer = 1;\n');
    git(folder, 'commit', '-q', '-am', 'theirs');
    git(folder, 'checkout', '-q', 'main');
    fs.writeFileSync(path.join(folder, 'src', 'app.ts'), 'export const answer = 2;\n');
    git(folder, 'commit', '-q', '-am', 'ours');
    assert.notEqual(gitStatus(folder, 'rebase', 'other').code, 0, 'the rebase stops on a conflict');
    await seedLatch(folder);
    await clickNotificationButton(wb.page, REQUIRED, 'Use current version');
    const rebase = 'A Git rebase is still in progress. Finish or cancel it outside VS Code, then check again.';
    assert.deepEqual(await buttonsOf(wb, rebase), ['Check again'], 'no save, no repair: only Check again');
    await capture(wb, 'recovery-5-rebase-toast');
    await clickNotificationButton(wb.page, rebase, 'Check again');
    await waitForNotification(wb.page, rebase); // still blocked: the same copy again
    assert.ok(fs.existsSync(path.join(folder, '.git', 'rebase-merge')), 'the rebase was neither continued nor aborted');
    assert.equal(await recoveryLatchPresent(folder), true);

    await wb.page.reload({ waitUntil: 'domcontentloaded' });
    await wb.page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 60_000 });
    assert.deepEqual(await buttonsOf(wb, REQUIRED), ['Use current version'], 'recovery survives a reload');
    await statusBarShows(wb, 'Version recovery needed');

    git(folder, 'rebase', '--abort');
    await clickNotificationButton(wb.page, REQUIRED, 'Use current version');
    await waitForNotification(wb.page, 'Version History is ready');
    assert.equal(await recoveryLatchPresent(folder), false);
  });
});
