// The golden path, walked once through a real workbench (code-server + Chromium) the way a user would, checking
// the UI and git after every step: the demo repository npm start makes (demo agent through the real CLI) → the
// Version History pane lists its turns → a new demo turn is stopped midway → Undo Agent Turn saves the partial
// changes as [Interrupted] and restores the base snapshot → Redo brings the pre-undo tree back → an Undo whose
// extension host is killed in the middle of git's checkout (a failpoint of the test build: the test .vsix, never
// the shipped one) → after a reload, guided recovery (toast, status bar, blocked pane) settles it → Undo works
// again, and no content that ever existed is lost. A screenshot of every step lands in test-artifacts/.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { INTERRUPTED_SUBJECT, RECOVERY_SUBJECT } from '../../src/core/domain/promptSummary';
import { BLOCKED_MESSAGE } from '../../src/core/history/wording';
import { recoveryLatchPresent } from '../support/assertions';
import { eventually } from '../support/eventually';
import { assertNothingLost, contentInventory, git, head, subjectOf, testGitEnv } from '../support/gitFixtures';
import {
  clickNotificationButton,
  elementScreenshot,
  extensionHostPids,
  gitProcessesIn,
  moveMouseAway,
  runCommand,
  startWorkbench,
  TEST_VSIX_ENV,
  versionHistoryPane,
  versionHistoryScreenshot,
  waitForNotification,
  type Workbench,
} from './harness';

const repoRoot = path.resolve(__dirname, '../../..');
const DEMO_AGENT = path.join(repoRoot, 'scripts/demoAgent.mjs');
const CLI = path.join(repoRoot, 'dist/cli.js');
const start = createRequire(__filename)(path.join(repoRoot, 'scripts/start.mjs')) as {
  ensureDemoRepo(dir: string, options: { reset: boolean; signal: AbortSignal }): Promise<void>;
};

const UNDO = 'Agent Versions: Undo Agent Turn';
const REDO = 'Agent Versions: Redo Agent Turn';
const REQUIRED = 'Version restore needs attention';
const INDEX_LOCKED =
  'Version History is unavailable — Another Git process is using this repository (index.lock is held).';
const DIRTY = 'Your current changes need to be saved';

/** The tree object of the working tree as `git add -A` would stage it, built in a temp index (the real one is untouched). */
function worktreeTree(repo: string): string {
  const index = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'avh-index-')), 'index');
  const env = { ...testGitEnv(), GIT_INDEX_FILE: index };
  const run = (...args: string[]) => execFileSync('git', args, { cwd: repo, env, encoding: 'utf8' });
  try {
    run('read-tree', 'HEAD');
    run('add', '-A');
    return run('write-tree').trim();
  } finally {
    fs.rmSync(path.dirname(index), { recursive: true, force: true });
  }
}

const treeOf = (repo: string, rev = 'HEAD') => git(repo, 'rev-parse', `${rev}^{tree}`).trim();
const porcelain = (repo: string) => git(repo, 'status', '--porcelain', '--untracked-files=all').trim();

/** `npm run demo-agent -- --repo <repo> --cancel-after <ms>` as a real process; resolves with its output once it ended. */
function runDemoAgent(repo: string, cancelAfterMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [DEMO_AGENT, '--repo', repo, '--cli', CLI, '--cancel-after', String(cancelAfterMs)],
      { env: testGitEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`demo agent exited ${code}:\n${output}`)),
    );
  });
}

/** The Undo/Redo counts the status bar item shows ("undo:N redo:M"), once it shows `expected` if given. */
async function statusBarCounts(
  page: Page,
  expected?: { undo: number; redo: number },
): Promise<{ undo: number; redo: number }> {
  const text = expected ? `undo:${expected.undo} redo:${expected.redo}` : /undo:\d+ redo:\d+/;
  const item = page.locator('.part.statusbar .statusbar-item', { hasText: text }).first();
  await item.waitFor({ state: 'visible', timeout: 60_000 });
  const [, undo, redo] = /undo:(\d+) redo:(\d+)/.exec(await item.innerText()) ?? [];
  return { undo: Number(undo), redo: Number(redo) };
}

/** Makes git's checkout slow in a way git itself allows (a smudge filter), so a kill lands while it writes files. */
function slowCheckout(repo: string): () => void {
  const attributes = path.join(repo, '.git', 'info', 'attributes');
  fs.mkdirSync(path.dirname(attributes), { recursive: true });
  fs.writeFileSync(attributes, '* filter=avhslow\n');
  git(repo, 'config', 'filter.avhslow.smudge', 'sleep 5; cat');
  return () => {
    fs.rmSync(attributes, { force: true });
    git(repo, 'config', '--remove-section', 'filter.avhslow');
  };
}

describe('golden path: demo → Version History → stop → Undo → Redo → crash mid-restore → recovery → Undo (code-server + Chromium, test .vsix)', function () {
  this.timeout(420_000);
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'avh-golden-')));
  const demo = path.join(tmp, 'demo-repo');
  let workbench: Workbench | undefined;
  let step = 0;
  const shot = async (name: string) => workbench!.screenshot(`golden-${String(++step).padStart(2, '0')}-${name}`);

  before(async () => {
    const vsix = process.env[TEST_VSIX_ENV];
    if (!vsix || !fs.existsSync(vsix))
      throw new Error(`no test .vsix: set ${TEST_VSIX_ENV} (scripts/vscode/runE2E.mjs packages dist/test-extension/)`);
    // The very demo repository `npm start` makes: a completed turn, then a stopped one with partial changes left.
    await start.ensureDemoRepo(demo, { reset: false, signal: new AbortController().signal });
    workbench = await startWorkbench({ folder: demo, vsix });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench) {
      console.log(`    screenshot: ${await workbench.screenshot('golden-failed')}`);
      // The extension's content-free event log: what the host did, for a failure seen only in CI.
      console.log(`    extension log (last 60 lines):\n${workbench.extensionLog().split('\n').slice(-60).join('\n')}`);
    }
  });

  after(async () => {
    await workbench?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('walks the whole product, checking the UI and git after each step, and loses nothing', async () => {
    const wb = workbench!;
    const page = wb.page;
    const view = versionHistoryPane(page);
    const inventory = contentInventory(demo);

    // 1. Version History lists the demo's turns.
    assert.deepEqual(git(demo, 'log', '--format=%s').trim().split('\n'), [
      '[Agent] Add a greeter module with a test',
      'Initial commit',
    ]);
    const initialCounts = await statusBarCounts(page);
    await runCommand(page, 'Agent Versions: Show Version History');
    await view
      .getByRole('option', { name: /^Agent: Add a greeter module with a test, completed, by demo-agent/ })
      .waitFor({ timeout: 30_000 });
    await view.getByRole('option', { name: /^Commit: Initial commit,/ }).waitFor();
    await shot('version-history');

    // 2. A new demo turn, stopped midway: no commit, its partial edits in the tree, one more turn to undo.
    const headBeforeTurn = head(demo);
    const baseTree = worktreeTree(demo); // the state the turn starts from: what Undo must bring back
    const agentOutput = await runDemoAgent(demo, 2000);
    assert.match(agentOutput, /stopped after [12] of 3 edits/, agentOutput);
    assert.equal(head(demo), headBeforeTurn, 'a stopped turn makes no commit');
    const preUndoTree = worktreeTree(demo);
    assert.notEqual(preUndoTree, baseTree, 'the stopped turn left partial changes');
    for (const oid of contentInventory(demo)) inventory.add(oid);
    await statusBarCounts(page, { undo: initialCounts.undo + 1, redo: 0 });
    await shot('turn-stopped');

    // 3. Undo Agent Turn: the partial changes are saved as [Interrupted], the tree is the base snapshot again.
    await runCommand(page, UNDO);
    await waitForNotification(page, /Agent turn undone\. Its partial changes were saved as an Interrupted entry/);
    assert.match(subjectOf(demo), /^\[Restore\] /);
    assert.equal(subjectOf(demo, 'HEAD~1'), INTERRUPTED_SUBJECT);
    assert.equal(treeOf(demo, 'HEAD~1'), preUndoTree, '[Interrupted] holds exactly the partial changes');
    assert.equal(treeOf(demo), baseTree, 'the tree equals the base snapshot');
    assert.equal(porcelain(demo), '');
    await view.getByRole('option', { name: /^Interrupted: / }).waitFor({ timeout: 15_000 });
    await view.getByRole('option', { name: /^Restore: .*current version$/ }).waitFor({ timeout: 15_000 });
    await statusBarCounts(page, { undo: initialCounts.undo, redo: 1 });
    await shot('undone');

    // 4. Redo Agent Turn: the pre-undo tree is back.
    await runCommand(page, REDO);
    await waitForNotification(page, /Agent turn redone — restored version/);
    assert.equal(treeOf(demo), preUndoTree, 'the tree equals the pre-undo tree');
    assert.equal(porcelain(demo), '');
    await statusBarCounts(page, { undo: initialCounts.undo + 1, redo: 0 });
    await shot('redone');
    // The pane's box (the webview is laid over it): the README's picture of Version History.
    await moveMouseAway(page); // no hover tooltip in the picture
    await versionHistoryScreenshot(page, 'readme-version-history');
    const redoHead = head(demo);

    // 5. Undo again, with the extension host killed by the test build's failpoint while git's checkout writes files.
    const restoreCheckout = slowCheckout(demo);
    await wb.restartServer({ env: { AVH_FAILPOINT: 'git:read-tree:during', AVH_FAILPOINT_DELAY_MS: '2500' } });
    await statusBarCounts(page, { undo: initialCounts.undo + 1, redo: 0 });
    const hosts = extensionHostPids(wb.server.pid);
    assert.ok(hosts.length > 0, 'an extension host runs');
    await runCommand(page, UNDO);
    // The restore's read-tree (it takes the index's lock when it starts): the host that started it is the one the
    // failpoint kills 2.5 s into it, after SIGKILLing it. Waiting for that host by pid, not for any host to go: a
    // host that ends for another reason would leave read-tree running, and the server's stop below would then end
    // it with a signal, on which git removes its own lock.
    const [readTree] = await eventually(
      "the restore's read-tree to start",
      () => gitProcessesIn(demo, ['read-tree', '-u']),
      (found) => found.length > 0,
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    assert.ok(hosts.includes(readTree.parent), 'the read-tree was started by an extension host');
    await eventually(
      'the extension host that ran the restore to die at the failpoint',
      () => fs.existsSync(`/proc/${readTree.parent}`) || fs.existsSync(`/proc/${readTree.pid}`),
      (running) => !running,
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    await shot('host-killed');
    restoreCheckout();
    assert.equal(head(demo), redoHead, 'the branch never moved');
    assert.ok(
      fs.existsSync(path.join(demo, '.git', 'index.lock')),
      'git was killed mid-checkout and left its index.lock',
    );
    assert.notEqual(porcelain(demo), '', 'the working tree is half restored');
    for (const oid of contentInventory(demo)) inventory.add(oid);

    // 6. Reload the window (code-server restarted without the failpoint): recovery toast, status bar, blocked pane.
    await wb.restartServer();
    await page
      .locator('.part.statusbar .statusbar-item', { hasText: 'Version recovery needed' })
      .first()
      .waitFor({ timeout: 60_000 });
    // The view comes back with the window (its container was the one shown) and, showing the blocked state, brings
    // the notice back itself (it opens the notification center, which closes an open palette): wait for that first.
    // The toast may already have hidden (toasts do after a few seconds): the notification center keeps every notice,
    // and waitForNotification opens it when no notice shows.
    await view.getByText(BLOCKED_MESSAGE).waitFor({ timeout: 60_000 });
    const notice = await waitForNotification(page, REQUIRED, { timeout: 60_000 });
    await runCommand(page, 'Agent Versions: Show Version History');
    await view.getByText(BLOCKED_MESSAGE).waitFor({ timeout: 30_000 });
    assert.equal(await view.getByRole('option').count(), 0);
    assert.equal(await recoveryLatchPresent(demo), true);
    await shot('recovery-required');
    await elementScreenshot(notice, 'readme-recovery-notice');

    // 7. Use current version: git's stale index.lock blocks it, with what to do; the user removes it, then Check again.
    assert.ok(fs.existsSync(path.join(demo, '.git', 'index.lock')), "the killed read-tree's index.lock is still there");
    await clickNotificationButton(page, REQUIRED, 'Use current version');
    await waitForNotification(page, INDEX_LOCKED);
    await shot('blocked-index-lock');
    assert.equal(await recoveryLatchPresent(demo), true, 'a blocked check changes nothing');
    fs.rmSync(path.join(demo, '.git', 'index.lock'));
    await clickNotificationButton(page, INDEX_LOCKED, 'Check again');

    // 8. The half-restored tree is dirty: Save changes & use current version → a [Recovery] commit, "ready".
    await clickNotificationButton(page, DIRTY, 'Save changes & use current version');
    await waitForNotification(
      page,
      `Current changes saved — Your changes were saved as ${RECOVERY_SUBJECT}. Version History is ready.`,
    );
    assert.equal(subjectOf(demo), RECOVERY_SUBJECT);
    assert.equal(git(demo, 'rev-parse', 'HEAD~1').trim(), redoHead);
    assert.equal(porcelain(demo), '');
    assert.equal(await recoveryLatchPresent(demo), false);
    await view.getByRole('option', { name: /^Recovery: .*current version$/ }).waitFor({ timeout: 30_000 });
    await shot('recovered');

    // 9. Undo works again: the stopped turn is undone to its base snapshot once more.
    await runCommand(page, UNDO);
    await waitForNotification(page, /Agent turn undone — restored version/);
    assert.match(subjectOf(demo), /^\[Restore\] /);
    assert.equal(treeOf(demo), baseTree, 'the tree equals the base snapshot again');
    assert.equal(porcelain(demo), '');
    await view.getByRole('option', { name: /^Restore: .*current version$/ }).waitFor({ timeout: 15_000 });
    await shot('undone-again');

    assertNothingLost(demo, inventory);
  });
});
