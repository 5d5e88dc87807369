// Checkpoints before an agent's destructive commands in a real workbench (code-server + Chromium, extension from the
// packaged .vsix, fresh profile, 1400×900), issue 34, one workbench for three turns of Claude Code driven through the
// shipped CLI's hook (`hook claude-code`, the payloads captured from the real binary); each command really runs.
// 1. Edits, then `git clean -fdx` (its PreToolUse takes the checkpoint; it deletes the agent's new file and the
//    ignored `.env`): the running turn shows the step live; the end-of-turn notice names the command and the files it
//    deleted; the step's Restore to Before This Command (clicked in the view) brings the tree back to just before the
//    command, `.env` included, as a [Restore] version.
// 2. `rm -rf src`: the end-of-turn notice shows with its button, which restores src/ as a [Restore] version.
// 3. `git reset --hard` over the agent's change: its notice comes from a later look, which repeats neither earlier
//    notice; then Agent Versions: Restore to Before a Command… lists the three checkpoints newest first, each with the
//    command as the agent wrote it, and the pick restores. Checked with git; nothing lost.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assertNothingLost, contentInventory, git, makeRepo, read, write } from '../support/gitFixtures';
import { dist } from '../support/turnFixtures';
import type { Page } from 'playwright-core';
import {
  clickNotificationButton,
  moveMouseAway,
  openVersionHistory,
  runCommand,
  versionHistoryPane,
  versionHistoryScreenshot,
  waitForNotification,
} from './harness';
import { useWorkbench } from './workbenchSuite';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/hooks/claude-code');
const CAPTURED_REPO = '/home/user/work/repo';
const SESSION = '5b7e0c2d-1f3a-4b6c-8d9e-0a1b2c3d4e5f';
/** A command as agents write them: `$(…)` is shell, which the palette's pick must show as text, not as an icon. */
const RESET_COMMAND = 'git -C "$(pwd)" reset --hard HEAD';

/** Claude Code's hook event `name` (captured payload) for this repository and session, through dist/cli.js. */
function hook(repo: string, name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8').split(CAPTURED_REPO).join(repo);
  const payload = { ...(JSON.parse(text) as object), cwd: repo, session_id: SESSION, ...overrides };
  const r = dist(repo, ['hook', 'claude-code', '--json'], JSON.stringify(payload));
  assert.equal(r.code, 0, `hook ${name}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('checkpoint steps and Restore to Before This Command (code-server + Chromium, extension from the .vsix)', function () {
  this.timeout(240_000);
  const suite = useWorkbench('checkpoints', () => {
    const folder = makeRepo();
    write(folder, '.gitignore', '.env\n');
    write(folder, 'src/app.ts', 'export const app = 1;\n');
    git(folder, 'add', '-A');
    git(folder, 'commit', '-q', '-m', 'the app');
    write(folder, '.env', 'API_KEY=local-only\n');
    return folder;
  });
  /**
   * Each checkpoint the tests took: its id, the end-of-turn notice that must name it once, and whether that
   * notice's button was clicked (VS Code then closes it: the center no longer lists it).
   */
  const notices: { id: string; text: string; clicked: boolean }[] = [];

  it('the running turn shows the step; its end names the command; the step’s button brings the files back', async () => {
    const { folder, workbench: wb } = suite;
    const page = wb.page;
    const view = versionHistoryPane(page);
    await openVersionHistory(page);
    await view.getByRole('option', { name: /^Commit: the app/ }).waitFor({ timeout: 60_000 });
    const before = contentInventory(folder);

    assert.equal(hook(folder, 'UserPromptSubmit.json', { prompt: 'Clean the build output' }).action, 'began');
    write(folder, 'src/app.ts', 'export const app = 2;\n');
    write(folder, 'src/feature.ts', 'export const feature = true;\n');
    const taken = hook(folder, 'PreToolUse.json', { tool_name: 'Bash', tool_input: { command: 'git clean -fdx' } });
    assert.equal(taken.action, 'checkpoint', JSON.stringify(taken));
    const notice = 'The agent ran `git clean -x`; 2 files it deleted were saved — Restore to Before This Command.';
    notices.push({ id: String(taken.checkpointId), text: notice, clicked: false });
    const beforeCommand = { app: read(folder, 'src/app.ts'), feature: read(folder, 'src/feature.ts') };
    for (const oid of contentInventory(folder)) before.add(oid);
    git(folder, 'clean', '-q', '-fdx'); // the agent's command, as its shell runs it
    assert.equal(fs.existsSync(path.join(folder, '.env')), false);
    assert.equal(fs.existsSync(path.join(folder, 'src/feature.ts')), false);

    // Under the running turn, live: what ran, the command as written, what is gone since.
    const step = view.getByRole('listitem', { name: /^Before git clean -x, 2 deleted since, 1 ignored file saved/ });
    await step.waitFor({ timeout: 30_000 });
    assert.equal(await step.locator('.command').textContent(), '$ git clean -fdx');
    assert.equal(await step.locator('.files').textContent(), 'Deleted: .env, src/feature.ts');
    await moveMouseAway(page);
    await wb.screenshot('checkpoint-steps-running');
    await versionHistoryScreenshot(page, 'readme-checkpoint-steps');

    // The agent goes on and the turn ends: a version; the end-of-turn notice names the command, once.
    write(folder, 'src/other.ts', 'export const other = 3;\n');
    assert.equal(hook(folder, 'Stop.json').action, 'ended');
    await waitForNotification(page, notice);
    const version = git(folder, 'rev-parse', 'HEAD').trim();
    const ended = view.getByRole('listitem', {
      name: /^Before git clean -x, 2 deleted by the end, 1 ignored file saved/,
    });
    await ended.waitFor({ timeout: 30_000 });
    await moveMouseAway(page);
    await wb.screenshot('checkpoint-steps-ended');

    // The step's Restore to Before This Command: the tree just before `git clean -fdx`, `.env` written back.
    await ended.getByRole('button', { name: 'Restore to Before This Command: git clean -x' }).click();
    await waitForNotification(
      page,
      /Restored to before `git clean -x` — a new \[Restore\] version .* was added\. 1 ignored file it saved was written back\./,
    );
    assert.equal(read(folder, 'src/app.ts'), beforeCommand.app);
    assert.equal(read(folder, 'src/feature.ts'), beforeCommand.feature);
    assert.equal(read(folder, '.env'), 'API_KEY=local-only\n');
    assert.equal(
      fs.existsSync(path.join(folder, 'src/other.ts')),
      false,
      'the work after the command is in its version',
    );
    assert.match(git(folder, 'log', '-1', '--format=%s').trim(), /^\[Restore\]/);
    assert.equal(git(folder, 'rev-parse', 'HEAD~1').trim(), version, 'a new version on top; nothing rewritten');
    assert.equal(git(folder, 'status', '--porcelain').trim(), '', 'the tree is the new version');
    assertNothingLost(folder, before);
    await moveMouseAway(page);
    await wb.screenshot('checkpoint-steps-restored');
  });
  it('after a turn whose `rm -rf src` deleted files, the notice shows once with its button, and the button brings them back', async () => {
    const { folder, workbench: wb } = suite;
    const page = wb.page;
    const before = contentInventory(folder);
    const start = git(folder, 'rev-parse', 'HEAD').trim();
    assert.equal(hook(folder, 'UserPromptSubmit.json', { prompt: 'Start src over' }).action, 'began');
    write(folder, 'src/util.ts', 'export const util = 1;\n');
    const taken = hook(folder, 'PreToolUse.json', { tool_name: 'Bash', tool_input: { command: 'rm -rf src' } });
    assert.equal(taken.action, 'checkpoint', JSON.stringify(taken));
    const notice = 'The agent ran `rm -r`; 3 files it deleted were saved — Restore to Before This Command.';
    notices.push({ id: String(taken.checkpointId), text: notice, clicked: true });
    const beforeCommand = srcFiles(folder);
    assert.deepEqual(Object.keys(beforeCommand), ['app.ts', 'feature.ts', 'util.ts']);
    for (const oid of contentInventory(folder)) before.add(oid);
    fs.rmSync(path.join(folder, 'src'), { recursive: true }); // the agent's command, as its shell runs it
    assert.equal(hook(folder, 'Stop.json').action, 'ended');
    const version = git(folder, 'rev-parse', 'HEAD').trim();
    assert.notEqual(version, start, 'the turn made its version');

    const toast = await waitForNotification(page, notice);
    assert.equal(await toast.getByRole('button', { name: 'Restore to Before This Command' }).count(), 1);
    await moveMouseAway(page);
    await wb.screenshot('checkpoint-notice');
    await clickNotificationButton(page, notice, 'Restore to Before This Command');
    await waitForNotification(page, /Restored to before `rm -r` — a new \[Restore\] version .* was added\./);
    assert.deepEqual(srcFiles(folder), beforeCommand, 'src is back as it was just before `rm -rf src`');
    assert.equal(read(folder, '.env'), 'API_KEY=local-only\n', 'the ignored file is untouched');
    assert.match(git(folder, 'log', '-1', '--format=%s').trim(), /^\[Restore\]/);
    assert.equal(git(folder, 'rev-parse', 'HEAD~1').trim(), version, 'a new version on top; nothing rewritten');
    assert.equal(git(folder, 'status', '--porcelain').trim(), '', 'the tree is the new version');
    assertNothingLost(folder, before);
    await moveMouseAway(page);
    await wb.screenshot('checkpoint-notice-restored');
  });

  it('Restore to Before a Command… from the palette lists the checkpoints with their commands; the pick brings the files back', async () => {
    const { folder, workbench: wb } = suite;
    const page = wb.page;
    const before = contentInventory(folder);
    // One more turn: the agent changes a file and adds one, then `git reset --hard` takes the change back.
    assert.equal(hook(folder, 'UserPromptSubmit.json', { prompt: 'Try a faster app' }).action, 'began');
    write(folder, 'src/app.ts', 'export const app = 3;\n');
    write(folder, 'src/fast.ts', 'export const fast = true;\n');
    const taken = hook(folder, 'PreToolUse.json', {
      tool_name: 'Bash',
      tool_input: { command: RESET_COMMAND },
    });
    assert.equal(taken.action, 'checkpoint', JSON.stringify(taken));
    const notice = 'The agent ran `git reset --hard`; 1 file it changed was saved — Restore to Before This Command.';
    notices.push({ id: String(taken.checkpointId), text: notice, clicked: false });
    const beforeCommand = srcFiles(folder);
    for (const oid of contentInventory(folder)) before.add(oid);
    git(folder, 'reset', '-q', '--hard', 'HEAD'); // the agent's command (from the top folder), as its shell runs it
    assert.equal(read(folder, 'src/app.ts'), 'export const app = 2;\n');
    assert.equal(hook(folder, 'Stop.json').action, 'ended');
    const version = git(folder, 'rev-parse', 'HEAD').trim();
    // This turn's notice comes from a look after the earlier turns' notices and restores: none of those is repeated.
    await waitForNotification(page, notice);
    await moveMouseAway(page);
    for (const told of notices) {
      const logged = wb.extensionLog().match(new RegExp(`checkpoint\\.notice\\b.*${told.id}`, 'g')) ?? [];
      assert.equal(logged.length, 1, `the notice of ${told.text.slice(0, 40)}… was told once`);
      const shown = told.clicked ? 0 : 1;
      assert.equal(await notificationCount(page, told.text), shown, `${told.text.slice(0, 40)}… listed ${shown}×`);
    }

    // The user leaves the notice and goes through the palette instead.
    await page.keyboard.press('Escape');
    await runCommand(page, 'Agent Versions: Restore to Before a Command…');
    const widget = page.locator('.quick-input-widget');
    const rows = widget.locator('.monaco-list-row');
    await rows.first().waitFor({ state: 'visible', timeout: 20_000 });
    assert.match(
      await widget.locator('.quick-input-title').innerText(),
      /Restore to Before This Command — which command\?/,
    );
    // Newest first; each row names what ran and, below it, the command exactly as the agent wrote it.
    const shown = await rows.evaluateAll((els) =>
      els.map((e) => ({
        label: e.querySelector('.label-name')?.textContent ?? '',
        description: e.querySelector('.label-description')?.textContent ?? '',
        detail: e.querySelector('.quick-input-list-label-meta')?.textContent?.trim() ?? '',
      })),
    );
    assert.deepEqual(
      shown.map((r) => [r.label, r.detail]),
      [
        ['before `git reset --hard`', RESET_COMMAND],
        ['before `rm -r`', 'rm -rf src'],
        ['before `git clean -x`', 'git clean -fdx'],
      ],
    );
    assert.match(shown[0].description, /^just now · turn [0-9a-f]{8}$/);
    assert.match(shown[2].description, /· 1 ignored file saved$/);
    await moveMouseAway(page);
    await wb.screenshot('checkpoint-palette-pick');
    await rows.filter({ hasText: RESET_COMMAND }).click();
    await waitForNotification(page, /Restored to before `git reset --hard` — a new \[Restore\] version .* was added\./);
    assert.deepEqual(srcFiles(folder), beforeCommand, 'the change `git reset --hard` took back is back');
    assert.equal(read(folder, 'src/app.ts'), 'export const app = 3;\n');
    assert.match(git(folder, 'log', '-1', '--format=%s').trim(), /^\[Restore\]/);
    assert.equal(git(folder, 'rev-parse', 'HEAD~1').trim(), version, 'a new version on top; nothing rewritten');
    assert.equal(git(folder, 'status', '--porcelain').trim(), '', 'the tree is the new version');
    assertNothingLost(folder, before);
    await moveMouseAway(page);
    await wb.screenshot('checkpoint-palette-restored');
  });
});

/** The files under src/ and their contents, by name. */
function srcFiles(repo: string): Record<string, string> {
  const dir = path.join(repo, 'src');
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) out[name] = fs.readFileSync(path.join(dir, name), 'utf8');
  return out;
}

/** How many notifications the notification center lists with exactly `text` (it keeps every one shown). */
async function notificationCount(page: Page, text: string): Promise<number> {
  const center = page.locator('.notifications-center.visible');
  if (!(await center.isVisible())) {
    await page.locator('#status\\.notifications, .statusbar-item[id$="status.notifications"]').first().click();
    await center.waitFor({ state: 'visible', timeout: 10_000 });
    await moveMouseAway(page);
  }
  return center.locator('.notification-list-item', { hasText: text }).count();
}
