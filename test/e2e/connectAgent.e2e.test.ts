// Connecting an agent from VS Code, walked through a real workbench (code-server + Chromium, the shipped .vsix, a
// fresh profile) the way a new user would: the pane's empty state → Connect Agent… from the palette → the scope quick
// pick → the preview and its confirmation (Cancel writes nothing) → the hook entry naming the launcher → that command,
// exactly as written, run through `sh -c` with a prompt payload and then a Stop payload (the second with no node on
// PATH: the editor's own runtime runs it) → the turn in git and in the pane → `agent-versions` in a terminal → bad
// settings files (malformed, read-only, a symlink) reported and left byte-identical. Screenshots in test-artifacts/.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { eventually } from '../support/eventually';
import {
  assertNothingLost,
  contentInventory,
  git,
  makeRepo,
  subjectOf,
  testGitEnv,
  write,
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

const CONNECT = 'Agent Versions: Connect Agent…';
const CHECK = 'Agent Versions: Check Agent Connections';
const { version } = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as {
  version: string;
};

/** Picks the quick pick row whose label starts with `label` (after waiting for it), by click. */
async function pick(page: Page, label: string): Promise<void> {
  const row = page.locator(`.quick-input-widget .monaco-list-row[aria-label^="${label}"]`).first();
  await row.waitFor({ state: 'visible', timeout: 30_000 });
  await row.click();
  await row.waitFor({ state: 'hidden', timeout: 10_000 });
}

/** The settings' hook commands for `event`. */
function commandsIn(file: string, event: string): string[] {
  const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    hooks: Record<string, { hooks: { command: string }[] }[]>;
  };
  return (settings.hooks[event] ?? []).flatMap((g) => g.hooks.map((h) => h.command));
}

/** A PATH with git and env(1) but no node. */
function pathWithoutNode(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const tool of ['git', 'env'])
    fs.symlinkSync(
      spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(),
      path.join(dir, tool),
    );
  return dir;
}

describe('connect from VS Code: empty state → Connect Agent… → preview → confirm → the hook records a turn (code-server + Chromium, .vsix)', function () {
  this.timeout(300_000);
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'avh-connect-')));
  const home = path.join(root, 'home');
  const launcher = path.join(home, '.agent-versions', 'bin', 'agent-versions');
  let repo = '';
  let workbench: Workbench | undefined;
  let step = 0;
  const shot = async (name: string) => workbench!.screenshot(`connect-${String(++step).padStart(2, '0')}-${name}`);

  before(async () => {
    fs.mkdirSync(home, { recursive: true });
    repo = makeRepo();
    workbench = await startWorkbench({ folder: repo, env: { HOME: home } });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench)
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-connect-${test.title.slice(0, 60)}`)}`);
  });

  after(async () => {
    await workbench?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('the empty state lists the registry’s agents, not connected, with their buttons; activation wrote the launcher', async () => {
    const { page } = workbench!;
    await openVersionHistory(page);
    const section = versionHistoryPane(page).getByRole('region', { name: 'Connect an agent' });
    await section.getByRole('button', { name: 'Connect Claude Code' }).waitFor({ timeout: 60_000 });
    await section.getByRole('button', { name: 'Connect Codex' }).waitFor();
    await section.getByRole('button', { name: 'Connect Agent…' }).waitFor();
    await section.getByRole('button', { name: 'Check Agent Connections' }).waitFor();
    assert.match(fs.readFileSync(launcher, 'utf8'), /^#!\/bin\/sh\n# agent-versions launcher 1\n/);
    await moveMouseAway(page);
    await versionHistoryScreenshot(page, 'connect-empty-state');
  });

  it('Connect Agent… from the palette: the quick pick, the scope, the preview; Cancel writes nothing; Connect writes the launcher’s hook', async () => {
    const { page } = workbench!;
    const file = path.join(repo, '.claude', 'settings.json');
    for (const answer of ['Cancel', 'Connect']) {
      await runCommand(page, CONNECT);
      const agentRow = page.locator('.quick-input-widget .monaco-list-row[aria-label^="Claude Code"]').first();
      await agentRow.waitFor({ timeout: 30_000 });
      if (answer === 'Cancel') await elementScreenshot(page.locator('.quick-input-widget'), 'connect-quick-pick');
      await pick(page, 'Claude Code');
      await page.locator('.quick-input-widget .monaco-list-row[aria-label^="Every project"]').waitFor();
      if (answer === 'Cancel') await elementScreenshot(page.locator('.quick-input-widget'), 'connect-scope-pick');
      await pick(page, 'This project');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      assert.match(await dialog.innerText(), /Connect Claude Code in \.claude\/settings\.json\?/);
      assert.ok((await dialog.innerText()).includes(`The hook runs: ${launcher} hook claude-code`));
      // The diff editor behind the dialog shows the file as it would be.
      await page.locator('.editor-instance .monaco-diff-editor').first().waitFor();
      if (answer === 'Cancel') await shot('preview');
      assert.equal(fs.existsSync(file), false, 'nothing is written before the confirmation');
      await dialog.getByRole('button', { name: answer }).click();
      await dialog.waitFor({ state: 'hidden' });
    }
    await eventually('the settings file', () => fs.existsSync(file), Boolean, { timeoutMs: 15_000 });
    for (const event of ['UserPromptSubmit', 'Stop', 'StopFailure', 'SessionEnd'])
      assert.deepEqual(commandsIn(file, event), [`${launcher} hook claude-code`]);
    await waitForNotification(page, 'Connected Claude Code in .claude/settings.json.');
    // The preview is closed; the pane now says Claude Code is connected.
    assert.equal(await page.locator('.editor-instance .monaco-diff-editor').count(), 0);
    const section = versionHistoryPane(page).getByRole('region', { name: 'Connect an agent' });
    await section
      .getByRole('listitem')
      .filter({ hasText: /Claude Code\s*connected\s*$/ })
      .waitFor({ timeout: 30_000 });
    // Again: already connected, nothing changes.
    const bytes = fs.readFileSync(file);
    await runCommand(page, CONNECT);
    await pick(page, 'Claude Code');
    await pick(page, 'This project');
    await waitForNotification(page, 'Claude Code is already connected in .claude/settings.json; nothing changed.');
    assert.deepEqual(fs.readFileSync(file), bytes);
  });

  it('the command exactly as written, through `sh -c`: a prompt, an edit, then a Stop with no node on PATH (the editor’s runtime) record a turn that git and the pane show', async () => {
    const { page } = workbench!;
    const command = commandsIn(path.join(repo, '.claude', 'settings.json'), 'UserPromptSubmit')[0];
    const before = contentInventory(repo);
    const run = (payload: object, env: NodeJS.ProcessEnv = {}) =>
      spawnSync('/bin/sh', ['-c', command], {
        cwd: repo,
        input: JSON.stringify(payload),
        encoding: 'utf8',
        env: { ...testGitEnv(), HOME: home, ...env },
        timeout: 60_000,
      });
    const session = 'e2e-connect';
    const begun = run({
      hook_event_name: 'UserPromptSubmit',
      session_id: session,
      cwd: repo,
      prompt: 'Add a greeting',
    });
    assert.equal(begun.status, 0, begun.stderr);
    write(repo, 'greeting.txt', 'hello\n');
    const ended = run(
      { hook_event_name: 'Stop', session_id: session, cwd: repo },
      { PATH: pathWithoutNode(path.join(root, 'bin')) },
    );
    assert.equal(ended.status, 0, ended.stderr);
    assert.match(subjectOf(repo), /^\[Agent\] Add a greeting/);
    assert.equal(
      git(repo, 'show', '--format=', '--name-only', 'HEAD').trim().split('\n').includes('greeting.txt'),
      true,
    );
    assertNothingLost(repo, before);
    const view = versionHistoryPane(page);
    await view
      .getByRole('option', { name: /^Agent: Add a greeting, completed, by claude-code/ })
      .waitFor({ timeout: 30_000 });
    await versionHistoryScreenshot(page, 'connect-first-turn');
  });

  it('a terminal’s PATH has agent-versions (the launcher’s folder first)', async () => {
    const { page } = workbench!;
    const out = path.join(root, 'terminal-out.txt');
    await runCommand(page, 'Terminal: Create New Terminal');
    await page.locator('.terminal-wrapper.active .xterm, .terminal .xterm').first().waitFor({ timeout: 30_000 });
    await page.locator('.xterm-helper-textarea').first().focus();
    await page.keyboard.type(`agent-versions --version > '${out}'; command -v agent-versions >> '${out}'\n`);
    const expected = `agent-versions ${version}\n${launcher}\n`;
    const read = () => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '');
    await eventually('the terminal’s output', read, (text) => text === expected, { timeoutMs: 30_000 });
  });

  it('bad settings files — malformed, read-only, a symlink — are reported in a notification and left byte-identical', async () => {
    const { page } = workbench!;
    const malformed = path.join(repo, '.claude', 'settings.local.json');
    fs.writeFileSync(malformed, '{ "permissions": { "allow": [ }\n');
    const readOnly = path.join(repo, '.codex', 'hooks.json');
    fs.mkdirSync(path.dirname(readOnly), { recursive: true });
    fs.writeFileSync(readOnly, '{ "hooks": {} }\n');
    fs.chmodSync(readOnly, 0o444);
    const target = path.join(root, 'dotfiles', 'claude-settings.json');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, '{ "model": "opus" }\n');
    const link = path.join(home, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(target, link);
    const snapshot = () => [
      fs.readFileSync(malformed),
      fs.readFileSync(readOnly),
      fs.readFileSync(target),
      fs.readlinkSync(link),
    ];
    const bytes = snapshot();
    const cases: [string, string, RegExp][] = [
      ['Claude Code', 'Only me, in this project', /settings\.local\.json is not valid JSON \(line 1, column \d+: /],
      ['Codex', 'This project', /hooks\.json is read-only; make it writable/],
      ['Claude Code', 'Every project', /settings\.json is a symbolic link, so Agent Versions leaves it as it is/],
    ];
    for (const [agent, scope, message] of cases) {
      await runCommand(page, CONNECT);
      await pick(page, agent);
      await pick(page, scope);
      const notification = await waitForNotification(page, message);
      assert.equal(await page.locator('.monaco-dialog-box').count(), 0, 'no confirmation: nothing to confirm');
      if (agent === 'Codex') await elementScreenshot(notification, 'connect-read-only');
      await moveMouseAway(page);
      await page.keyboard.press('Escape');
    }
    assert.deepEqual(snapshot(), bytes);
    assert.equal(fs.lstatSync(link).isSymbolicLink(), true);
    for (const file of [malformed, readOnly, link]) fs.rmSync(file);
  });

  it('Check Agent Connections lists each agent with doctor’s state', async () => {
    const { page } = workbench!;
    await runCommand(page, CHECK);
    const widget = page.locator('.quick-input-widget');
    await widget.locator('.monaco-list-row[aria-label*="Claude Code"]').first().waitFor({ timeout: 30_000 });
    const rows = (await widget.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
    assert.ok(
      rows.some((r) => /^\s*Claude Code\s*connected\s+Claude Code: connected in /.test(r)),
      rows.join(' | '),
    );
    assert.ok(
      rows.some((r) => /^\s*Codex\s*not connected\s+Codex: not connected\./.test(r)),
      rows.join(' | '),
    );
    assert.ok(
      rows.some((r) => /^\s*Launcher\s*~\/\.agent-versions\/bin\/agent-versions/.test(r)),
      rows.join(' | '),
    );
    await elementScreenshot(widget, 'connect-check');
    await page.keyboard.press('Escape');
  });

  it('the Getting Started walkthrough has the steps and their buttons; its Check button runs the command and completes the step', async () => {
    const { page } = workbench!;
    await runCommand(page, 'View: Toggle Panel Visibility'); // the terminal of the test before
    await runCommand(page, 'Welcome: Open Walkthrough...');
    await pick(page, 'Get Started with Agent Version History');
    const steps = page.locator('.gettingStartedContainer');
    await steps.getByText('Connect your agent').first().waitFor({ timeout: 30_000 });
    await steps.getByRole('button', { name: 'Connect an Agent…' }).first().waitFor();
    // The Check step's own button runs the command; the step completes on it (the page keeps the service running).
    const check = steps.locator('button.getting-started-step[data-step-id$="#check"]');
    await check.click();
    await steps.getByRole('button', { name: 'Check Agent Connections' }).first().click();
    await page.locator('.quick-input-widget .monaco-list-row').filter({ visible: true }).first().waitFor();
    // Escape until the quick pick is closed. One that reached the walkthrough page instead (focus not yet in the
    // quick pick, on a loaded machine) takes the page back to the list of walkthroughs, every step's button then
    // disabled: the walkthrough is opened again.
    const quickInput = page.locator('.quick-input-widget');
    await eventually(
      'the quick pick to close',
      async () => {
        if (await quickInput.isVisible()) await page.keyboard.press('Escape');
        return quickInput.isVisible();
      },
      (visible) => !visible,
      { intervalMs: 500 },
    );
    const connectStep = steps.locator('button.getting-started-step[data-step-id$="#connect"]');
    if (!(await connectStep.isEnabled())) {
      await runCommand(page, 'Welcome: Open Walkthrough...');
      await pick(page, 'Get Started with Agent Version History');
    }
    await steps.locator('button.getting-started-step[data-step-id$="#check"][aria-checked="true"]').waitFor();
    await connectStep.click();
    await shot('walkthrough');
  });
});
