// New projects in a real workbench (code-server + Chromium, the test .vsix): a folder without git, an agent
// begins a turn through the extension API → one notification offers Enable Version History. Not Now creates
// nothing (and is not asked again that day); Enable runs `git init` and the turn records as a version.
// The "agent" is the test build's `agentVersions._test.agentTurn` (begin → write a file → end, through the API),
// reached by a key binding in the profile since the palette does not list it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { FIRST_BASE_SUBJECT } from '../../src/core/git/workingTree';
import {
  ENABLE_BUTTON,
  ENABLE_QUESTION,
  NOT_NOW_BUTTON,
  TEST_AGENT_RESULT,
  TEST_AGENT_TURN_COMMAND,
} from '../../src/vscode/enableCopy';
import { repoPicture } from '../support/assertions';
import { git, subjectOf } from '../support/gitFixtures';
import {
  clickNotificationButton,
  runCommand,
  startWorkbench,
  TEST_VSIX_ENV,
  versionHistoryPane,
  waitForNotification,
  type Workbench,
} from './harness';

const SHOW_HISTORY = 'Agent Versions: Show Version History';
const NO_REPOSITORY_TEXT = 'Open a folder that is a git repository to see its versions.';
const ENABLE_KEY = 'ctrl+alt+shift+f7';
const DECLINE_KEY = 'ctrl+alt+shift+f8';

/** Presses the key binding `key` (VS Code notation) in the workbench. */
async function press(page: Page, key: string): Promise<void> {
  await page.keyboard.press(
    key
      .split('+')
      .map((k) => ({ ctrl: 'Control', alt: 'Alt', shift: 'Shift' })[k] ?? k.toUpperCase())
      .join('+'),
  );
}

describe('new project: Enable Version History in a folder without git (code-server + Chromium, test .vsix)', function () {
  this.timeout(240_000);
  let root: string;
  let enabled: string;
  let declined: string;
  let workbench: Workbench | undefined;

  before(async () => {
    const vsix = process.env[TEST_VSIX_ENV];
    if (!vsix || !fs.existsSync(vsix))
      throw new Error(`no test .vsix: set ${TEST_VSIX_ENV} (scripts/vscode/runE2E.mjs packages dist/test-extension/)`);
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'avh-e2e-newproject-')));
    enabled = path.join(root, 'enabled');
    declined = path.join(root, 'declined');
    for (const folder of [enabled, declined]) {
      fs.mkdirSync(folder);
      fs.writeFileSync(path.join(folder, 'notes.md'), '# my notes\n');
    }
    workbench = await startWorkbench({
      folder: root,
      vsix,
      keybindings: [
        {
          key: ENABLE_KEY,
          command: TEST_AGENT_TURN_COMMAND,
          args: { repository: enabled, prompt: 'Scaffold an app', file: 'app.js' },
        },
        {
          key: DECLINE_KEY,
          command: TEST_AGENT_TURN_COMMAND,
          args: { repository: declined, prompt: 'Scaffold another app', file: 'app.js' },
        },
      ],
    });
    // A folder without git does not activate the extension by itself: an agent extension's getExtension().activate()
    // does; here opening the (passive) Version History view does, which never asks anything.
    await runCommand(workbench.page, SHOW_HISTORY);
    await versionHistoryPane(workbench.page).getByText(NO_REPOSITORY_TEXT).waitFor({ timeout: 60_000 });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench)
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-${test.fullTitle()}`)}`);
  });

  after(async () => {
    await workbench?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('Not Now: nothing is created, the API call fails plainly, and the question is not asked again that day', async () => {
    const { page } = workbench!;
    const picture = repoPicture(declined);
    await press(page, DECLINE_KEY);
    await clickNotificationButton(page, ENABLE_QUESTION, NOT_NOW_BUTTON, { timeout: 90_000 });
    await waitForNotification(page, `${TEST_AGENT_RESULT} failed: This folder is not a git repository.`);
    assert.equal(fs.existsSync(path.join(declined, '.git')), false);
    assert.equal(fs.existsSync(path.join(root, '.git')), false);
    assert.deepEqual(repoPicture(declined), picture, 'nothing was written');

    // Asked at most once a day: the next turn there fails at once, with no question.
    await runCommand(page, 'Notifications: Clear All Notifications');
    await press(page, DECLINE_KEY);
    const results = page.locator('.notification-toast, .notifications-center.visible .notification-list-item', {
      hasText: `${TEST_AGENT_RESULT} failed`,
    });
    await results.first().waitFor({ state: 'visible', timeout: 30_000 });
    assert.equal(await page.locator('.notification-toast', { hasText: ENABLE_QUESTION }).count(), 0);
    assert.equal(fs.existsSync(path.join(declined, '.git')), false);
  });

  it('Enable Version History: git init, then the turn records ([Base] of the files there, then [Agent])', async () => {
    const { page } = workbench!;
    await press(page, ENABLE_KEY);
    await clickNotificationButton(page, ENABLE_QUESTION, ENABLE_BUTTON, { timeout: 90_000 });
    await waitForNotification(page, new RegExp(`${TEST_AGENT_RESULT} version [0-9a-f]{40}`));
    assert.equal(fs.existsSync(path.join(enabled, '.git')), true);
    assert.equal(subjectOf(enabled), '[Agent] Scaffold an app');
    assert.equal(subjectOf(enabled, 'HEAD^'), FIRST_BASE_SUBJECT);
    assert.deepEqual(git(enabled, 'ls-tree', '-r', '--name-only', 'HEAD^').trim().split('\n'), ['notes.md']);
    assert.deepEqual(git(enabled, 'ls-tree', '-r', '--name-only', 'HEAD').trim().split('\n').sort(), [
      'app.js',
      'notes.md',
    ]);
    assert.equal(git(enabled, 'status', '--porcelain').trim(), '');
    assert.equal(fs.existsSync(path.join(root, '.git')), false, 'only the folder the agent works in got a repository');
  });
});
