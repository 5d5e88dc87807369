// Branch loss in a real workbench (code-server + Chromium, extension from the .vsix): a chat's branch merged into
// main and then deleted locally and on the (real, on-disk) remote. Version History shows the chat as lost; Undo of
// its turn gets the error notification with Continue on a New Branch, nothing replaced before the click; the
// click makes and checks out `<old>-2` from the base branch, and the warning row appears in Version History.
import * as assert from 'node:assert/strict';
import type { FrameLocator, Page } from 'playwright-core';
import { cliJson } from '../support/cliProcess';
import { localBranchNames } from '../support/chatBranchFixtures';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  tempDir,
  write,
} from '../support/gitFixtures';
import { clickNotificationButton, runCommand, startWorkbench, waitForNotification, type Workbench } from './harness';

function pane(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

const SELECT_SPOT = { x: 12, y: 10 };
const LOST =
  /The branch "feature\/login" for this chat no longer exists locally or on "origin"\. Its code changes cannot be recovered\./;

describe('Branch loss in a real workbench (code-server + Chromium, extension from the .vsix)', function () {
  this.timeout(240_000);
  let folder = '';
  let workbench: Workbench | undefined;
  let inventory = new Set<string>();

  before(async () => {
    folder = makeRepo();
    const remote = tempDir('avh-e2e-remote-');
    git(remote, 'init', '-q', '--bare', '-b', 'main');
    git(folder, 'remote', 'add', 'origin', `file://${remote}`);
    git(folder, 'push', '-q', '-u', 'origin', 'main');
    git(folder, 'remote', 'set-head', 'origin', 'main');
    // The agent works on its own branch; the turn is recorded through the real CLI.
    git(folder, 'switch', '-q', '-c', 'feature/login');
    const { turnId } = cliJson<{ turnId: string }>(
      [
        'turn',
        'begin',
        '--chat',
        'e2e-chat',
        '--title',
        'Login',
        '--agent',
        'e2e-agent',
        '--prompt',
        'Add the login form',
      ],
      { cwd: folder },
    );
    write(folder, 'login.ts', 'export const login = true;\n');
    cliJson(['turn', 'end', turnId, '--outcome', 'completed'], { cwd: folder });
    git(folder, 'push', '-q', 'origin', 'feature/login');
    // Merged, then the branch deleted everywhere (what a merged pull request usually leaves).
    git(folder, 'switch', '-q', 'main');
    git(folder, 'merge', '-q', '--ff-only', 'feature/login');
    git(folder, 'push', '-q', 'origin', 'main');
    git(folder, 'push', '-q', 'origin', '--delete', 'feature/login');
    git(folder, 'branch', '-q', '-D', 'feature/login');
    inventory = contentInventory(folder);
    workbench = await startWorkbench({ folder });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench)
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-branch-loss-${test.fullTitle()}`)}`);
  });

  after(async () => {
    await workbench?.stop();
    cleanupTempDirs();
  });

  it('Version History shows the chat as lost, with Continue on a New Branch', async () => {
    const page = workbench!.page;
    await runCommand(page, 'Agent Versions: Show Version History');
    const view = pane(page);
    await view.getByRole('alert').filter({ hasText: LOST }).waitFor({ timeout: 60_000 });
    await view.getByRole('alert').getByRole('button', { name: 'Continue on a New Branch' }).waitFor();
    await view
      .getByRole('option', { name: /^Agent: Add the login form, branch lost, completed, by e2e-agent/ })
      .waitFor();
    await workbench!.screenshot('branch-loss-view');
  });

  it('Undo of the lost chat’s turn: the error notification with its button, nothing replaced before the click', async () => {
    const page = workbench!.page;
    const view = pane(page);
    const before = head(folder);
    const row = view.getByRole('option', { name: /^Agent: Add the login form/ });
    await row.click({ position: SELECT_SPOT });
    await row.getByRole('button', { name: /^Undo agent turn: /, includeHidden: true }).click();
    const toast = await waitForNotification(page, LOST);
    await toast.getByRole('button', { name: 'Continue on a New Branch' }).waitFor();
    await workbench!.screenshot('branch-loss-notification');
    assert.equal(head(folder), before, 'nothing replaced before the click');
    assert.equal(git(folder, 'symbolic-ref', '--short', 'HEAD').trim(), 'main');
    assert.deepEqual(localBranchNames(folder), ['main']);

    await clickNotificationButton(page, LOST, 'Continue on a New Branch');
    await waitForNotification(
      page,
      /Conversation continues on `feature\/login-2`; code changes from `feature\/login` were not recovered\./,
    );
    assert.equal(git(folder, 'symbolic-ref', '--short', 'HEAD').trim(), 'feature/login-2');
    assert.equal(head(folder), before, 'the new branch starts at the base branch (main)');
    assert.deepEqual(localBranchNames(folder), ['feature/login-2', 'main']);
    assertNothingLost(folder, inventory);
  });

  it('the warning row is in Version History, and the chat record points at the new branch', async () => {
    const view = pane(workbench!.page);
    const warning = view.getByRole('note').filter({
      hasText: 'Conversation continues on `feature/login-2`; code changes from `feature/login` were not recovered.',
    });
    await warning.waitFor({ timeout: 30_000 });
    assert.equal(await warning.getAttribute('data-base-branch'), 'main');
    assert.equal(await warning.getAttribute('data-chat'), 'e2e-chat');
    assert.equal(await view.getByRole('alert').count(), 0, 'the chat is no longer shown as lost');
    await workbench!.screenshot('branch-loss-warning-row');
    const status = cliJson<{ branch: string; chatBranch: string; continuations: unknown[] }>(
      ['chat', 'status', '--chat', 'e2e-chat'],
      { cwd: folder },
    );
    assert.deepEqual([status.branch, status.chatBranch, status.continuations.length], ['ok', 'feature/login-2', 1]);
  });
});
