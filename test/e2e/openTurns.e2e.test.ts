// The turns above the versions in a real workbench (code-server + Chromium, extension from the packaged .vsix,
// fresh profile, 1400×900), as issue 24 asks: a question that changed nothing is one muted line and is not counted;
// a turn begun through the shipped CLI (`turn begin`) shows at the top at once and its files changed so far follow
// the edits live; Show Changes opens its base snapshot against the working tree in the multi-file diff; ended
// `cancelled`, its stopped row stays at the top and its Undo saves the partial work as [Interrupted] and restores
// the base (checked with git); the status bar's undo:N counts exactly what the pane offers Undo on. Nothing lost.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { INTERRUPTED_SUBJECT } from '../../src/core/domain/promptSummary';
import { assertNothingLost, contentInventory, git, makeRepo, write } from '../support/gitFixtures';
import { distBegin, distJson, porcelain, treeOf, worktreeTree } from '../support/turnFixtures';
import {
  moveMouseAway,
  openVersionHistory,
  versionHistoryPane,
  versionHistoryScreenshot,
  waitForNotification,
} from './harness';
import { useWorkbench } from './workbenchSuite';

const CHAT = 'e2e-open-turns';

/** The status bar's undo:N redo:M once it shows exactly `undo`/`redo`. */
async function statusBarShows(page: Page, undo: number, redo: number): Promise<void> {
  await page
    .locator('.part.statusbar .statusbar-item', { hasText: `undo:${undo} redo:${redo}` })
    .first()
    .waitFor({ state: 'visible', timeout: 30_000 });
}

/** How many Undo buttons the pane offers: on the turns above the versions and on the version rows. */
async function undoButtons(view: FrameLocator): Promise<number> {
  const top = await view
    .locator('.open-turns')
    .getByRole('button', { name: /^Undo / })
    .count();
  const rows = await view.getByRole('button', { name: /^Undo agent turn: /, includeHidden: true }).count();
  return top + rows;
}

describe('the turns above the versions, live (code-server + Chromium, extension from the .vsix)', function () {
  this.timeout(240_000);
  const suite = useWorkbench('open-turns', () => {
    const folder = makeRepo();
    write(folder, 'src/parser.ts', 'export const parse = (s: string) => s;\n');
    git(folder, 'add', '-A');
    git(folder, 'commit', '-q', '-m', 'the parser');
    const first = distBegin(folder, CHAT, 'Add the greeter');
    write(folder, 'src/greeter.ts', 'export const greet = () => "hi";\n');
    assert.ok(distJson<{ version: string }>(folder, ['turn', 'end', first, '--outcome', 'completed']).version);
    return folder;
  });

  it('a question shows quietly; a running turn shows live; stopped, its Undo saves and restores; the counts match', async () => {
    const { folder, workbench: wb } = suite;
    const page = wb.page;
    const view = versionHistoryPane(page);
    const turns = view.getByRole('region', { name: 'Turns that are not versions yet' });
    await openVersionHistory(page);
    await view.getByRole('option', { name: /^Agent: Add the greeter, completed/ }).waitFor({ timeout: 60_000 });
    await statusBarShows(page, 1, 0);
    const before = contentInventory(folder);

    // A question: listed as one muted line, never counted, no Undo.
    const question = distBegin(folder, CHAT, 'Explain the parser');
    assert.equal(distJson(folder, ['turn', 'end', question, '--outcome', 'completed']).version, null);
    const quiet = turns.getByRole('listitem', { name: /^Changed nothing: Explain the parser/ });
    await quiet.waitFor({ timeout: 20_000 });
    assert.equal(await quiet.getByRole('button').count(), 0);
    await statusBarShows(page, 1, 0);

    // A running turn, begun through the CLI: at the top at once, its files counted as the agent writes them.
    const baseTree = worktreeTree(folder);
    const running = distBegin(folder, CHAT, 'Rename the parser module');
    await turns.getByRole('listitem', { name: /^Running turn: Rename the parser module, no changes yet/ }).waitFor({
      timeout: 20_000,
    });
    await statusBarShows(page, 2, 0);
    write(folder, 'src/parser.ts', 'export const parseText = (s: string) => s;\n');
    await turns
      .getByRole('listitem', { name: /^Running turn: Rename the parser module, 1 file changed so far/ })
      .waitFor({ timeout: 20_000 });
    write(folder, 'src/index.ts', "export { parseText } from './parser';\n");
    const runningRow = turns.getByRole('listitem', {
      name: /^Running turn: Rename the parser module, 2 files changed so far/,
    });
    await runningRow.waitFor({ timeout: 20_000 });
    assert.equal(await undoButtons(view), 2, 'the pane offers Undo on the running turn and the greeter');
    await moveMouseAway(page);
    await wb.screenshot('open-turns-running');

    // Show Changes: the base snapshot against the working tree, in the multi-file diff editor.
    await runningRow.getByRole('button', { name: 'Show changes so far of Rename the parser module' }).click();
    await page
      .locator('.tabs-container .tab', { hasText: 'Rename the parser module (changes so far)' })
      .waitFor({ timeout: 20_000 });
    await page.locator('.editor-instance').getByText('index.ts').first().waitFor({ timeout: 20_000 });
    await page.locator('.editor-instance').getByText('parser.ts').first().waitFor({ timeout: 20_000 });
    await wb.screenshot('open-turns-show-changes');
    await page.keyboard.press('Control+K');
    await page.keyboard.press('W');

    // Ended cancelled (the user pressed Stop): the stopped row stays at the top with its partial work.
    distJson(folder, ['turn', 'end', running, '--outcome', 'cancelled']);
    const stoppedRow = turns.getByRole('listitem', {
      name: /^Stopped turn: Rename the parser module, 2 files of partial work/,
    });
    await stoppedRow.waitFor({ timeout: 20_000 });
    await statusBarShows(page, 2, 0);
    assert.equal(await undoButtons(view), 2);
    const partialTree = worktreeTree(folder);
    for (const oid of contentInventory(folder)) before.add(oid);
    await moveMouseAway(page);
    await wb.screenshot('open-turns-stopped');
    // The pane's box: the README's picture of the turns above the versions.
    await versionHistoryScreenshot(page, 'readme-turns-above-versions');

    // Its Undo saves the partial work as [Interrupted], then restores the base snapshot.
    await stoppedRow.getByRole('button', { name: 'Undo stopped turn: Rename the parser module' }).click();
    await waitForNotification(page, /Agent turn undone\. Its partial changes were saved as an Interrupted entry/);
    assert.equal(git(folder, 'log', '-1', '--format=%s', 'HEAD~1').trim(), INTERRUPTED_SUBJECT);
    assert.equal(treeOf(folder, 'HEAD~1'), partialTree, '[Interrupted] holds exactly the partial work');
    assert.equal(treeOf(folder), baseTree, 'the tree is the base snapshot again');
    assert.equal(porcelain(folder), '');
    assert.equal(fs.existsSync(path.join(folder, 'src/index.ts')), false);
    await view.getByRole('option', { name: /^Interrupted: / }).waitFor({ timeout: 20_000 });
    await turns.waitFor({ state: 'detached', timeout: 20_000 });
    await statusBarShows(page, 1, 1);
    assert.equal(await undoButtons(view), 1, 'the pane offers Undo on the greeter only, as the status bar counts');
    await moveMouseAway(page);
    await wb.screenshot('open-turns-undone');
    assertNothingLost(folder, before);
  });
});
