// "Which turn wrote this line?" walked in a real workbench (code-server + Chromium, extension from the .vsix): the
// demo agent records two turns through the real CLI, the user commits a line of their own in the file the second
// turn rewrote; hovering a line the demo agent wrote shows the turn's prompt → Undo This Change in the hover → the
// line is gone, the user's own lines are untouched, the Version History pane shows the [Revert] row, and nothing
// that existed is lost. Line annotations are toggled on for a screenshot (docs/images/blame-hover.png comes from
// this test's hover screenshot).
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  testGitEnv,
} from '../support/gitFixtures';
import {
  elementScreenshot,
  moveMouseAway,
  openVersionHistory,
  runCommand,
  startWorkbench,
  versionHistoryPane,
  versionHistoryScreenshot,
  waitForNotification,
  type Workbench,
} from './harness';

const repoRoot = path.resolve(__dirname, '../../..');
const DEMO_AGENT = path.join(repoRoot, 'scripts/demoAgent.mjs');
const CLI = path.join(repoRoot, 'dist/cli.js');
const FILE = 'greeter/greeting.js';
const AGENT_LINE = 'const greeting = GREETINGS[language] ?? GREETINGS.en;';
const MY_LINE = '// Reviewed by me: keep greet() small.';
const PROMPT = 'Greet people in their own language';

/** One completed demo agent turn (`npm run demo-agent -- --repo <repo>`) as a real process. */
function runDemoAgent(repo: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DEMO_AGENT, '--repo', repo, '--cli', CLI, '--step-ms', '0'], {
      env: testGitEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`demo agent exited ${code}:\n${output}`)),
    );
  });
}

/** Opens `file` with Quick Open, as a user would, and waits for its editor. */
async function openFile(page: Page, file: string): Promise<void> {
  await page.keyboard.press('Control+P');
  const widget = page.locator('.quick-input-widget');
  await widget.waitFor({ state: 'visible', timeout: 10_000 });
  await widget.locator('input').fill(file);
  await widget
    .locator('.monaco-list-row', { hasText: path.basename(file) })
    .first()
    .waitFor({ timeout: 20_000 });
  await page.keyboard.press('Enter');
  await page.locator('.monaco-editor .view-line', { hasText: 'export function greet' }).first().waitFor();
}

describe('Which turn wrote this line? (code-server + Chromium, extension from the .vsix)', function () {
  this.timeout(240_000);
  let folder = '';
  let workbench: Workbench | undefined;

  before(async () => {
    folder = makeRepo();
    await runDemoAgent(folder); // "Add a greeter module with a test"
    await runDemoAgent(folder); // "Greet people in their own language": rewrites greeting.js
    const text = fs.readFileSync(path.join(folder, FILE), 'utf8');
    assert.ok(text.includes(AGENT_LINE), 'the demo agent wrote the line');
    fs.writeFileSync(path.join(folder, FILE), `${text}\n${MY_LINE}\n`);
    git(folder, 'commit', '-q', '-am', 'My review note');
    workbench = await startWorkbench({ folder, settings: { 'editor.hover.delay': 300 } });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench)
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-blame-${test.fullTitle()}`)}`);
  });

  after(async () => {
    await workbench?.stop();
    cleanupTempDirs();
  });

  it("hover a line the demo agent wrote → its prompt → Undo This Change → gone; the user's lines stay", async () => {
    const page = workbench!.page;
    await openFile(page, FILE);
    const before = contentInventory(folder);
    const line = page.locator('.monaco-editor .view-line', { hasText: 'GREETINGS[language]' }).first();
    const hover = page.locator('.monaco-hover', { hasText: PROMPT });
    // The first hover attributes the file; later ones answer from the cache.
    await eventuallyHover(page, line, hover);
    await moveMouseAway(page);
    await hover.waitFor({ state: 'hidden', timeout: 10_000 });
    const t0 = Date.now();
    await line.hover({ position: { x: 30, y: 5 } });
    await hover.waitFor({ state: 'visible', timeout: 20_000 });
    const shownMs = Date.now() - t0;
    console.log(`      hover visible ${shownMs} ms after the pointer came to rest (editor.hover.delay 300 ms)`);
    assert.match((await hover.innerText()).replace(/\u00a0/g, ' '), /demo-agent · chat Demo agent/);
    // Other hover providers (the JavaScript language service) may still be loading: their part is not ours to wait for.
    await page
      .locator('.monaco-hover', { hasText: 'Loading...' })
      .waitFor({ state: 'hidden', timeout: 15_000 })
      .catch(() => undefined);
    await elementScreenshot(hover, 'blame-hover');
    await editorTopScreenshot(page, 'blame-hover-editor');

    await hover.locator('a', { hasText: 'Undo This Change' }).click();
    await waitForNotification(page, /This change of the turn was undone/);
    const now = fs.readFileSync(path.join(folder, FILE), 'utf8');
    assert.ok(!now.includes(AGENT_LINE), 'the line the agent wrote is gone');
    assert.ok(now.includes(MY_LINE), "the user's own line is untouched");
    assert.equal(
      git(folder, 'log', '-1', '--format=%s').trim(),
      `[Revert] Undid a change of ${FILE} of turn "${PROMPT}"`,
    );
    assert.ok(fs.existsSync(path.join(folder, 'greeter/languages.js')), 'the rest of the turn stays');
    assert.equal(git(folder, 'status', '--porcelain').trim(), '');
    assertNothingLost(folder, before);

    await openVersionHistory(page);
    const row = versionHistoryPane(page).getByRole('option', {
      name: new RegExp(`^Restore: Undid a change of greeter/greeting\\.js of turn "${PROMPT}"`),
    });
    await row.waitFor({ timeout: 30_000 });
    await versionHistoryScreenshot(page, 'blame-pane-revert');
  });

  it('line annotations show which turn wrote each block, in its chat’s colour', async () => {
    const page = workbench!.page;
    await page.keyboard.press('Escape');
    await moveMouseAway(page);
    await page.locator('.monaco-editor .view-line').first().click();
    await runCommand(page, 'Agent Versions: Toggle Line Annotations');
    // Decorations are drawn as generated `ced-…` classes (the label is CSS content, not DOM text).
    await page.locator('.monaco-editor .view-overlays [class*="ced-"]').first().waitFor({ timeout: 30_000 });
    await workbench!.screenshot('blame-annotations');
    await runCommand(page, 'Agent Versions: Toggle Line Annotations');
  });
});

/** The top of the editor area (the file's first lines, with a hover over them), for the README. */
async function editorTopScreenshot(page: Page, name: string): Promise<void> {
  const editor = await page.locator('.monaco-workbench .part.editor').first().boundingBox();
  assert.ok(editor, 'the editor is shown');
  const dir = path.join(repoRoot, 'test-artifacts');
  fs.mkdirSync(dir, { recursive: true });
  const clip = { x: editor.x, y: editor.y, width: Math.min(editor.width, 820), height: Math.min(editor.height, 250) };
  await page.screenshot({ path: path.join(dir, `${name}.png`), clip, timeout: 10_000 });
}

/** Hovers `line` until `hover` shows: the first hover waits for the file's attribution (a few seconds at most). */
async function eventuallyHover(
  page: Page,
  line: ReturnType<Page['locator']>,
  hover: ReturnType<Page['locator']>,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    await line.hover({ position: { x: 30, y: 5 } });
    try {
      await hover.waitFor({ state: 'visible', timeout: 5_000 });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await moveMouseAway(page);
    }
  }
}
