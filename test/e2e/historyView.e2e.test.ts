// The Version History view in its own activity bar container of a real workbench (code-server + Chromium,
// extension from the packaged .vsix, fresh profile, 1400×900): the status bar click focuses it and it shows at
// least six rows; no row's title is covered by its buttons, hovered or selected (measured in the view's frame);
// turns recorded through the real CLI and a commit made in a terminal appear live; Show changes opens the
// multi-file diff editor; Undo and Restore from the pane restore (checked with git) and the list follows; a recovery
// latch turns the pane into its one-line blocked state. In a two-folder workspace the title bar's picker chooses
// the repository shown, and the choice outlives a reload.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FrameLocator, Locator, Page } from 'playwright-core';
import { BLOCKED_MESSAGE } from '../../src/core/history/wording';
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
  tempDir,
  write,
} from '../support/gitFixtures';
import { rowsInView, titleReports, type TitleReport } from '../webview/rowGeometry';
import {
  moveMouseAway,
  openVersionHistory,
  startWorkbench,
  versionHistorySideBar,
  waitForNotification,
  type Workbench,
} from './harness';

/** The pane's DOM: VS Code lays webviews over the workbench (not inside the pane), and ours is the only one open. */
function pane(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

/** Selects a row by clicking its badge, away from the action buttons hover shows on the right. */
const SELECT_SPOT = { x: 12, y: 10 };

/** A row's action button by its accessible name (the buttons are for the mouse: hidden from the accessibility tree). */
function rowButton(row: Locator, name: string | RegExp): Locator {
  return row.getByRole('button', { name, includeHidden: true });
}

/** The geometry of the rows the view's frame shows now (test/webview/rowGeometry.ts). */
const reports = (view: FrameLocator): Promise<TitleReport[]> => view.locator('body').evaluate(titleReports);

function assertTitleReadable(report: TitleReport | undefined, what: string): void {
  assert.ok(report, `${what}: the row is in view`);
  assert.ok(report.buttons.length > 0, `${what}: "${report.label}" shows its buttons`);
  assert.equal(report.overlaps, 0, `${what}: no button overlaps the title of "${report.label}"`);
  assert.ok(report.hit, `${what}: the title of "${report.label}" is what its centre shows`);
  assert.ok(
    report.shownWidth >= Math.min(report.fullWidth, 60) - 1,
    `${what}: "${report.label}" keeps its space (${report.shownWidth} of ${report.fullWidth} px)`,
  );
}

function recordTurn(folder: string, prompt: string, file: string, content: string): string {
  const { turnId } = cliJson<{ turnId: string }>(
    ['turn', 'begin', '--chat', 'e2e-view', '--prompt', prompt, '--agent', 'e2e-agent'],
    { cwd: folder },
  );
  write(folder, file, content);
  return cliJson<{ version: string }>(['turn', 'end', turnId, '--outcome', 'completed'], { cwd: folder }).version;
}

describe('Version History view in its own container (code-server + Chromium, extension from the .vsix)', function () {
  this.timeout(180_000);
  let folder = '';
  let initial = '';
  let workbench: Workbench | undefined;

  before(async () => {
    folder = makeRepo();
    initial = head(folder);
    // Enough versions to fill more than the six rows the view must show when it first opens.
    for (let i = 1; i <= 5; i++) {
      write(folder, `docs/note-${i}.md`, `note ${i}\n`);
      git(folder, 'add', '-A');
      git(folder, 'commit', '-q', '-m', `Write note ${i} of the project's documentation`);
    }
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

  it('opens usable in a fresh profile at 1400×900: its own container, at least six rows in view', async () => {
    const page = workbench!.page;
    await versionHistorySideBar(page).waitFor({ state: 'visible' });
    const frame = await page.locator('iframe.webview.ready').boundingBox();
    assert.ok(frame && frame.y + frame.height <= 900, `the view lies inside the window (${JSON.stringify(frame)})`);
    const inView = await pane(page).locator('body').evaluate(rowsInView);
    assert.ok(inView >= 6, `${inView} rows in view`);
    assert.ok(frame.height >= 6 * 42, `the view is ${frame.height} px tall`);
    // One repository: no repository picker in the title bar.
    await versionHistorySideBar(page).locator('.title-actions').waitFor();
    assert.equal(await page.locator('.part.sidebar .action-label[aria-label*="Choose Repository"]').count(), 0);
  });

  it("every row's title stays visible beside its buttons, hovered and selected (measured in the view)", async () => {
    const page = workbench!.page;
    const view = pane(page);
    const rows = view.getByRole('option');
    const count = await rows.count();
    assert.ok(count >= 7, `${count} rows`);
    for (let i = 0; i < count; i++) {
      const row = rows.nth(i);
      await row.scrollIntoViewIfNeeded();
      await row.hover({ position: { x: 60, y: 10 } });
      const label = (await row.locator('.label').getAttribute('title'))!;
      const hovered = (await reports(view)).find((r) => r.label === label && r.hovered);
      assertTitleReadable(hovered, `row ${i} hovered`);
      if (i === 1) await workbench!.screenshot('view-title-hovered');
      await row.click({ position: SELECT_SPOT });
      await moveMouseAway(page);
      const selected = (await reports(view)).find((r) => r.label === label && r.selected);
      assert.equal(selected?.hovered, false);
      assertTitleReadable(selected, `row ${i} selected`);
      if (i === 1) await workbench!.screenshot('view-title-selected');
    }
    await rows.first().click({ position: SELECT_SPOT });
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
    await rowButton(row, /^Show changes of /).click();
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
    await rowButton(turnRow, /^Undo agent turn: /).click();
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
    await rowButton(initialRow, /^Restore to this version: /).click();
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

/** A workbench on a new `<name>.code-workspace` holding `folders` (the file's path too, to change its folders). */
async function openWorkspace(name: string, folders: string[]): Promise<{ workbench: Workbench; workspace: string }> {
  const workspace = path.join(tempDir('avh-workspace-'), `${name}.code-workspace`);
  fs.writeFileSync(workspace, JSON.stringify({ folders: folders.map((folder) => ({ path: folder })) }));
  const workbench = await startWorkbench({ folder: folders[0] });
  await workbench.page.goto(`${workbench.server.url}?workspace=${encodeURIComponent(workspace)}`, {
    waitUntil: 'domcontentloaded',
    timeout: 60_000,
  });
  await workbench.page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 60_000 });
  return { workbench, workspace };
}

/**
 * Waits until VS Code itself has the workspace's repositories: its own git extension shows the branch (`main`) in
 * the status bar. Under load code-server sometimes opens a `.code-workspace` without its folders — the window
 * titled "two (Workspace)", but no folder in the window (git shows no branch; the extension host starts with none,
 * and no change of folders ever comes). That is the harness's, not ours (a view given folders late follows them: the
 * "folder added later" test), so the window is reloaded once, and says so.
 */
async function whenFoldersLoaded(workbench: Workbench): Promise<void> {
  const branch = () =>
    workbench.page.locator('.part.statusbar .statusbar-item', { hasText: 'main' }).first().waitFor({ timeout: 30_000 });
  try {
    await branch();
  } catch {
    console.log(
      '    code-server opened the workspace without its folders (no git branch in the status bar): reloading once',
    );
    await workbench.reload();
    await branch();
  }
}

describe('Version History in a two-folder workspace: the repository picker in its title bar', function () {
  this.timeout(180_000);
  let first = '';
  let second = '';
  let workbench: Workbench | undefined;

  before(async () => {
    first = makeRepo();
    second = makeRepo();
    recordTurn(first, 'A turn in the first repository', 'a.txt', 'a\n');
    recordTurn(second, 'A turn in the second repository', 'b.txt', 'b\n');
    workbench = (await openWorkspace('two', [first, second])).workbench;
    await whenFoldersLoaded(workbench);
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench) {
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-view-picker-${test.fullTitle()}`)}`);
      // The extension's content-free event log: what the host did, for a failure seen only in CI.
      console.log(`    extension log (last 40 lines):\n${workbench.extensionLog().split('\n').slice(-40).join('\n')}`);
    }
  });

  after(async () => {
    await workbench?.stop();
    cleanupTempDirs();
  });

  it("shows the first folder's repository; the picker switches to the other, and the choice outlives a reload", async () => {
    const page = workbench!.page;
    const view = pane(page);
    await openVersionHistory(page);
    await view.getByRole('option', { name: /^Agent: A turn in the first repository,/ }).waitFor({ timeout: 60_000 });
    const picker = versionHistorySideBar(page).locator('.title-actions .action-label[aria-label*="Choose Repository"]');
    await picker.waitFor({ timeout: 30_000 });
    assert.match((await picker.getAttribute('class'))!, /codicon-repo\b/, 'an icon, not a text button');
    await picker.click();
    const quickPick = page.locator('.quick-input-widget');
    await quickPick.waitFor({ state: 'visible', timeout: 10_000 });
    const secondItem = quickPick.locator(`.monaco-list-row[aria-label*="${path.basename(second)}"]`);
    await secondItem.waitFor({ timeout: 10_000 });
    assert.equal(await quickPick.locator('.monaco-list-row').count(), 2, 'one entry per repository');
    await workbench!.screenshot('view-picker');
    await secondItem.click();
    await view.getByRole('option', { name: /^Agent: A turn in the second repository,/ }).waitFor({ timeout: 30_000 });
    assert.equal(await view.getByRole('option', { name: /first repository/ }).count(), 0);
    await versionHistorySideBar(page)
      .locator('.composite.title', { hasText: `Agent Version History: ${path.basename(second)}` })
      .waitFor({ timeout: 10_000 });
    await workbench!.screenshot('view-picker-chosen');

    await workbench!.reload();
    await whenFoldersLoaded(workbench!);
    await openVersionHistory(page);
    await view.getByRole('option', { name: /^Agent: A turn in the second repository,/ }).waitFor({ timeout: 60_000 });
  });
});

describe('Version History in a workspace whose only folder is no repository: a folder added later', function () {
  this.timeout(180_000);
  let workbench: Workbench | undefined;

  after(async () => {
    await workbench?.stop();
    cleanupTempDirs();
  });

  it('the view that said "Open a folder that is a git repository" shows the added repository’s versions', async () => {
    const plain = tempDir('avh-plain-');
    fs.writeFileSync(path.join(plain, 'notes.txt'), 'not a repository\n');
    const repo = makeRepo();
    recordTurn(repo, 'A turn in the added folder', 'a.txt', 'a\n');
    const opened = await openWorkspace('grow', [plain]);
    workbench = opened.workbench;
    const page = workbench.page;
    await openVersionHistory(page);
    const view = pane(page);
    await view.getByText('Open a folder that is a git repository').waitFor({ timeout: 60_000 });
    // What File > Add Folder to Workspace writes; VS Code reads the file again and the folders change in place.
    fs.writeFileSync(opened.workspace, JSON.stringify({ folders: [{ path: plain }, { path: repo }] }));
    try {
      await view.getByRole('option', { name: /^Agent: A turn in the added folder,/ }).waitFor({ timeout: 60_000 });
    } catch (error) {
      console.log(`    screenshot: ${await workbench.screenshot('e2e-view-folder-added')}`);
      console.log(`    extension log (last 40 lines):\n${workbench.extensionLog().split('\n').slice(-40).join('\n')}`);
      throw error;
    }
  });
});
