// Issue 32 in a real workbench (code-server + Chromium, extension from the .vsix, 1400×900): Continue Chat from
// Before This Turn where it applies and not where it does not. The turns are real: Codex 0.171.0 (the real binary,
// against the Responses mock on 127.0.0.1; its hooks record the anchors) runs two turns in one chat; before them a
// Gemini CLI turn (its captured hook payloads through the shipped CLI; Gemini has no fork mechanism) in another.
// The view's Codex row offers the command in its menu, the Gemini row does not; the palette's pick of the Gemini
// turn says the CLI's refusal; Undo of the Codex turn offers it on the toast, and the click forks the thread through
// the real `codex app-server` and opens a terminal named "Codex — continued chat" running `codex resume <fork>`;
// Undo of the Gemini turn's toast does not offer it. Undo Turn and Its Conversation (one command: the Undo, then the
// fork): from the row's menu of a third Codex turn it undoes the turn (git checked) and forks the thread before it —
// the fork, resumed, sends the model turns one and two and nothing of the third; from the palette, with the thread's
// session file deleted (the fork fails for a real reason), the Undo stands in git and the message says so and that
// no fork was made.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { NO_MECHANISM } from '../../src/cli/conversations/registry';
import { killProcessesUnder, stopAllAgents } from '../agents/support/agentProcess';
import { capturedEvents, makeSandbox, removeSandbox, type Sandbox, turnsOf } from '../agents/support/agentSandbox';
import { type CodexSetup, codexExec, setUpCodex } from '../agents/support/codexSession';
import { applyPatch, reply } from '../agents/support/openaiResponsesMock';
import { eventually } from '../support/eventually';
import { assertNothingLost, cleanupTempDirs, contentInventory, git } from '../support/gitFixtures';
import { dist } from '../support/turnFixtures';
import {
  moveMouseAway,
  openVersionHistory,
  runCommand,
  startWorkbench,
  versionHistoryPane,
  waitForNotification,
  type Workbench,
} from './harness';

const GEMINI_FIXTURES = path.resolve(__dirname, '../../../test/fixtures/hooks/gemini');
const CAPTURED_REPO = '/home/user/work/repo';
const GEMINI_SESSION = '6e733568-e2e3-4f44-9b43-7fcea2f53ebc';
const CONTINUE = 'Continue Chat from Before This Turn';
const UNDO_BOTH = 'Undo Turn and Its Conversation';

/** Gemini CLI's hook event from its captured payload, pointed at `repo`, through dist/cli.js. */
function geminiHook(repo: string, name: string, overrides: Record<string, unknown> = {}): void {
  const text = fs.readFileSync(path.join(GEMINI_FIXTURES, name), 'utf8').split(CAPTURED_REPO).join(repo);
  const payload = { ...(JSON.parse(text) as object), cwd: repo, session_id: GEMINI_SESSION, ...overrides };
  const r = dist(repo, ['hook', 'gemini', '--json'], JSON.stringify(payload));
  assert.equal(r.code, 0, `hook gemini ${name}: ${r.stderr}`);
}

/** The processes running `codex resume <id>` (the terminal's), as [pid, id]. */
function codexResumes(): [number, string][] {
  const found: [number, string][] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const at = argv.indexOf('resume');
    if (at > 0 && path.basename(argv[at - 1]) === 'codex' && argv[at + 1]) found.push([Number(entry), argv[at + 1]]);
  }
  return found;
}

/** Codex's session files (rollouts) under `codexHome`, sorted. */
function sessionFiles(codexHome: string): string[] {
  const under = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? under(path.join(dir, e.name)) : [path.join(dir, e.name)]))
      .filter((f) => f.endsWith('.jsonl'));
  const sessions = path.join(codexHome, 'sessions');
  return fs.existsSync(sessions) ? under(sessions).sort() : [];
}

/** Opens a Version History row's context menu and returns its items' texts. */
async function menuOf(page: Page, row: RegExp): Promise<string[]> {
  const view = versionHistoryPane(page);
  await view.getByRole('option', { name: row }).click({ button: 'right' });
  const menu = view.getByRole('menu');
  await menu.waitFor({ state: 'visible', timeout: 10_000 });
  return menu.getByRole('menuitem').allInnerTexts();
}

describe('Continue Chat from Before This Turn: offered for a real Codex 0.171.0 turn (mock model on 127.0.0.1), not for a Gemini CLI turn (code-server + Chromium, .vsix)', function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  let setup: CodexSetup;
  let workbench: Workbench | undefined;
  let thread = '';

  before(async () => {
    sandbox = makeSandbox('continue-chat-e2e');
    setup = await setUpCodex(sandbox, { script: [] });
    const repo = sandbox.repo;
    geminiHook(repo, 'BeforeAgent.json', { prompt: 'Write the gemini notes' });
    fs.writeFileSync(path.join(repo, 'gemini.txt'), 'by gemini\n');
    geminiHook(repo, 'AfterAgent.json');
    setup.mock.script([
      reply('ANSWER-ONE'),
      applyPatch('*** Begin Patch\n*** Add File: second.txt\n+second turn\n*** End Patch\n'),
      reply('ANSWER-TWO'),
    ]);
    assert.equal((await codexExec(setup, 'PROMPT-ONE').exited).code, 0);
    thread = String(capturedEvents(sandbox)[0].payload.session_id);
    assert.equal((await codexExec(setup, 'PROMPT-TWO writes second.txt', { resume: thread }).exited).code, 0);
    assert.equal(setup.mock.remaining(), 0, 'the model script was used up');
    // The extension host gets the login shell's environment (VS Code resolves it), whose profile resets PATH: the
    // user's own profile puts the agent on PATH, as a user's does.
    const agentDir = path.dirname(setup.bin.path);
    for (const file of ['.profile', '.bashrc'])
      fs.writeFileSync(path.join(sandbox.home, file), `export PATH='${agentDir}':"$PATH"\n`);
    workbench = await startWorkbench({
      folder: repo,
      env: {
        HOME: sandbox.home,
        CODEX_HOME: setup.codexHome,
        PATH: `${path.dirname(setup.bin.path)}${path.delimiter}${process.env.PATH ?? ''}`,
        AVH_MOCK_OPENAI_KEY: 'sk-mock-openai',
      },
    });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench) {
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-continue-chat-${test.title.slice(0, 50)}`)}`);
      const events = workbench
        .extensionLog()
        .split('\n')
        .filter((l) => /chat\.|restore\./.test(l));
      console.log(`    log: ${events.join('\n    ')}`);
      const shown = await workbench.page.locator('.notification-toast, .notification-list-item').allInnerTexts();
      console.log(`    notifications: ${shown.join(' | ')}`);
    }
  });

  after(async () => {
    await workbench?.stop();
    for (const [pid] of codexResumes()) {
      try {
        process.kill(pid);
      } catch {
        // already gone
      }
    }
    await stopAllAgents();
    await setup?.mock.close();
    if (sandbox) {
      killProcessesUnder(sandbox.root);
      await removeSandbox(sandbox);
    }
    cleanupTempDirs();
  });

  it('the Codex row’s menu offers it and the Gemini row’s does not; the palette’s pick of the Gemini turn says why', async () => {
    const page = workbench!.page;
    const view = versionHistoryPane(page);
    await openVersionHistory(page);
    await view.getByRole('option', { name: /^Agent: PROMPT-TWO writes second\.txt/ }).waitFor({ timeout: 60_000 });
    const codexMenu = await menuOf(page, /^Agent: PROMPT-TWO writes second\.txt/);
    assert.ok(codexMenu.includes(CONTINUE), `the Codex row offers it: ${codexMenu.join(', ')}`);
    assert.ok(codexMenu.includes('Undo Turn and Its Conversation'), 'and the Undo of both');
    await workbench!.screenshot('continue-chat-1-codex-row-menu');
    await page.keyboard.press('Escape');
    await view.getByRole('menu').waitFor({ state: 'hidden', timeout: 10_000 });
    const geminiMenu = await menuOf(page, /^Agent: Write the gemini notes/);
    assert.ok(geminiMenu.includes('Undo'), `the Gemini row has its other actions: ${geminiMenu.join(', ')}`);
    assert.ok(!geminiMenu.includes(CONTINUE), 'the Gemini row does not offer it');
    assert.ok(!geminiMenu.includes('Undo Turn and Its Conversation'));
    await workbench!.screenshot('continue-chat-2-gemini-row-menu');
    await page.keyboard.press('Escape');

    await runCommand(page, `Agent Versions: ${CONTINUE}`);
    const pick = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Write the gemini notes' }).first();
    await pick.waitFor({ state: 'visible', timeout: 20_000 });
    assert.match(await pick.innerText(), /cannot continue this agent’s chat/);
    await workbench!.screenshot('continue-chat-3-palette-pick');
    await pick.click();
    const refusal = await waitForNotification(page, NO_MECHANISM);
    assert.match(await refusal.innerText(), /Nothing was created\./);
    assert.equal(codexResumes().length, 0, 'no terminal was opened');
  });

  it('Undo of the Codex turn offers it on the toast: the click forks the thread and opens a terminal running `codex resume <fork>`', async () => {
    const page = workbench!.page;
    const repo = sandbox.repo;
    const before = contentInventory(repo);
    await moveMouseAway(page);
    await runCommand(page, 'Agent Versions: Undo Agent Turn');
    // Two chats have turns: the Codex chat's is the latest.
    const pick = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'codex' }).first();
    await pick.waitFor({ state: 'visible', timeout: 20_000 });
    await pick.click();
    const toast = await waitForNotification(page, /Agent turn undone/);
    await eventually(
      'second.txt taken back',
      () => fs.existsSync(path.join(repo, 'second.txt')),
      (e) => !e,
      {
        timeoutMs: 30_000,
      },
    );
    const button = toast.getByRole('button', { name: CONTINUE });
    await button.waitFor({ state: 'visible', timeout: 10_000 });
    await workbench!.screenshot('continue-chat-4-undo-toast');
    await moveMouseAway(page);
    await button.click();

    await waitForNotification(page, /Continued the Codex conversation from just before this turn/, {
      timeout: 90_000,
    });
    const forked = await eventually(
      'the fork in the log',
      () => /chat\.forked .*agent=codex .*forkId=(\S+)/.exec(workbench!.extensionLog()),
      (m) => m !== null,
      { timeoutMs: 30_000 },
    );
    const forkId = forked![1].replace(/[",}]+$/, '');
    assert.notEqual(forkId, thread, 'a fork, not the original thread');
    const terminal = page.locator('.part.panel').getByText('Codex — continued chat').first();
    await terminal.waitFor({ state: 'visible', timeout: 30_000 });
    const resumes = await eventually('the terminal runs codex resume', codexResumes, (r) => r.length > 0, {
      timeoutMs: 60_000,
    });
    assert.deepEqual(
      resumes.map(([, id]) => id),
      [forkId],
      'the terminal runs `codex resume <the fork>`',
    );
    await workbench!.screenshot('continue-chat-5-terminal');
    assertNothingLost(repo, before);
  });

  it('Undo of the Gemini turn: its toast does not offer it', async () => {
    const page = workbench!.page;
    await moveMouseAway(page);
    await runCommand(page, 'Notifications: Clear All Notifications');
    // The Codex chat has no turn left to undo (its first turn changed nothing): Undo takes the Gemini turn.
    await runCommand(page, 'Agent Versions: Undo Agent Turn');
    const toast = await waitForNotification(page, /Agent turn undone/);
    await eventually(
      'gemini.txt taken back',
      () => fs.existsSync(path.join(sandbox.repo, 'gemini.txt')),
      (e) => !e,
      {
        timeoutMs: 30_000,
      },
    );
    await workbench!.screenshot('continue-chat-6-gemini-undo-toast');
    assert.equal(await toast.getByRole('button', { name: CONTINUE }).count(), 0, 'not offered for Gemini CLI');
  });

  it('Undo Turn and Its Conversation from the Codex row’s menu: the turn is undone in git, the thread forked just before it; the fork, resumed, hears turns one and two and nothing of the third', async () => {
    const page = workbench!.page;
    const repo = sandbox.repo;
    await runCommand(page, 'Notifications: Clear All Notifications');
    setup.mock.script([
      applyPatch('*** Begin Patch\n*** Add File: third.txt\n+third turn\n*** End Patch\n'),
      reply('ANSWER-THREE'),
    ]);
    assert.equal((await codexExec(setup, 'PROMPT-THREE writes third.txt', { resume: thread }).exited).code, 0);
    assert.equal(fs.readFileSync(path.join(repo, 'third.txt'), 'utf8'), 'third turn\n');
    const third = (await turnsOf(repo)).at(-1)!;
    assert.equal(third.chatId, `codex:${thread}`);
    const versionBefore = git(repo, 'rev-parse', 'HEAD').trim();
    assert.equal(versionBefore, third.version, 'the third turn made the latest version');
    const before = contentInventory(repo);
    const resumesBefore = codexResumes().map(([, id]) => id);

    const view = versionHistoryPane(page);
    await openVersionHistory(page);
    await view.getByRole('option', { name: /^Agent: PROMPT-THREE writes third\.txt/ }).waitFor({ timeout: 60_000 });
    await menuOf(page, /^Agent: PROMPT-THREE writes third\.txt/);
    const item = view.getByRole('menu').getByRole('menuitem', { name: /^Undo agent turn and its conversation: / });
    assert.equal(await item.innerText(), UNDO_BOTH);
    await item.click();

    // The Undo: a new [Restore] version of the tree before the turn, the turn marked undone.
    await waitForNotification(page, /Agent turn undone — restored version/, { timeout: 60_000 });
    assert.equal(fs.existsSync(path.join(repo, 'third.txt')), false, 'third.txt taken back');
    assert.match(git(repo, 'log', '-1', '--format=%s'), /^\[Restore\]/);
    assert.equal(
      git(repo, 'rev-parse', 'HEAD^{tree}').trim(),
      git(repo, 'rev-parse', `${third.version}^^{tree}`).trim(),
    );
    assert.notEqual((await turnsOf(repo)).find((t) => t.id === third.id)!.undoneBy, null, 'the turn is undone');
    // The fork, then its terminal.
    await waitForNotification(page, /Continued the Codex conversation from just before this turn/, {
      timeout: 90_000,
    });
    const forked = await eventually(
      'the fork of the third turn in the log',
      () => new RegExp(`chat\\.forked agent=codex turnId=${third.id} forkId=(\\S+)`).exec(workbench!.extensionLog()),
      (m) => m !== null,
      { timeoutMs: 30_000 },
    );
    const forkId = forked![1];
    assert.ok(![thread, ...resumesBefore].includes(forkId), 'a new fork, not the thread or the earlier fork');
    const resumes = await eventually(
      'the terminal runs codex resume <the fork>',
      () => codexResumes().filter(([, id]) => id === forkId),
      (r) => r.length > 0,
      { timeoutMs: 60_000 },
    );
    await workbench!.screenshot('continue-chat-7-undo-with-conversation');
    assertNothingLost(repo, before);

    // The fork's terminal is left; the fork, resumed with a prompt (codex exec, one process at a time on the fork):
    // the model hears turns one and two and nothing of the third.
    for (const [pid] of resumes) process.kill(pid);
    await eventually(
      'the terminal’s codex ended',
      () => codexResumes().filter(([, id]) => id === forkId),
      (r) => r.length === 0,
      {
        timeoutMs: 30_000,
      },
    );
    setup.mock.script([reply('ANSWER-FOUR')]);
    assert.equal((await codexExec(setup, 'PROMPT-FOUR', { resume: forkId }).exited).code, 0);
    const heard = JSON.stringify((setup.mock.turnRequests().at(-1)!.body as { input?: unknown }).input);
    for (const said of ['PROMPT-ONE', 'ANSWER-ONE', 'PROMPT-TWO', 'ANSWER-TWO', 'PROMPT-FOUR'])
      assert.ok(heard.includes(said), `the fork's request carries ${said}`);
    for (const gone of ['PROMPT-THREE', 'third.txt', 'ANSWER-THREE'])
      assert.ok(!heard.includes(gone), `the fork's request carries nothing of the undone turn (${gone})`);
    assertNothingLost(repo, before);
  });

  it('Undo Turn and Its Conversation when the fork fails (the Codex thread’s session file deleted): the Undo stands in git, and the message says so and that no fork was made', async () => {
    const page = workbench!.page;
    const repo = sandbox.repo;
    await runCommand(page, 'Notifications: Clear All Notifications');
    setup.mock.script([
      applyPatch('*** Begin Patch\n*** Add File: fifth.txt\n+fifth turn\n*** End Patch\n'),
      reply('ANSWER-FIVE'),
    ]);
    assert.equal((await codexExec(setup, 'PROMPT-FIVE writes fifth.txt', { resume: thread }).exited).code, 0);
    const fifth = (await turnsOf(repo)).at(-1)!;
    assert.equal(fifth.chatId, `codex:${thread}`);
    assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), fifth.version);
    // The user deleted the chat in Codex: its session file is gone.
    const own = sessionFiles(setup.codexHome).filter((f) => path.basename(f).includes(thread));
    assert.equal(own.length, 1, `one session file for the thread: ${own.join(', ')}`);
    fs.rmSync(own[0]);
    const sessionsLeft = sessionFiles(setup.codexHome);
    const resumesBefore = codexResumes();
    const before = contentInventory(repo);

    await runCommand(page, `Agent Versions: ${UNDO_BOTH}`);
    const pick = page
      .locator('.quick-input-widget .monaco-list-row', { hasText: 'PROMPT-FIVE writes fifth.txt' })
      .first();
    await pick.waitFor({ state: 'visible', timeout: 20_000 });
    await pick.click();
    const failed = await waitForNotification(
      page,
      /The turn was undone \(that stands\), but its conversation was not continued/,
      {
        timeout: 90_000,
      },
    );
    await workbench!.screenshot('continue-chat-8-undo-stands-fork-failed');
    const text = await failed.innerText();
    assert.match(
      text,
      /The turn was undone \(that stands\), but its conversation was not continued: Codex has no thread with this turn’s id any more \(deleted or archived\)\. No fork was made; the original conversation was left untouched\./,
    );
    assert.ok(!text.includes('Nothing was created'), 'the Undo made a version: the message does not say nothing was');
    const undone = await waitForNotification(page, /Agent turn undone — restored version/);
    assert.equal(await undone.getByRole('button', { name: CONTINUE }).count(), 0, 'the Undo’s toast offers no fork');

    // The Undo stands: a [Restore] version of the tree before the turn, the turn undone, fifth.txt gone.
    assert.equal(fs.existsSync(path.join(repo, 'fifth.txt')), false, 'fifth.txt taken back');
    assert.match(git(repo, 'log', '-1', '--format=%s'), /^\[Restore\]/);
    assert.equal(
      git(repo, 'rev-parse', 'HEAD^{tree}').trim(),
      git(repo, 'rev-parse', `${fifth.version}^^{tree}`).trim(),
    );
    assert.notEqual((await turnsOf(repo)).find((t) => t.id === fifth.id)!.undoneBy, null, 'the turn is undone');
    // What did not happen: no fork (no session file, no log line, no terminal).
    assert.deepEqual(sessionFiles(setup.codexHome), sessionsLeft, 'no session file was created');
    const log = workbench!.extensionLog();
    assert.ok(!log.includes(`chat.forked agent=codex turnId=${fifth.id}`), 'no fork was logged');
    assert.match(log, /chat\.fork-failed reason=exit-1/);
    assert.deepEqual(codexResumes(), resumesBefore, 'no terminal was opened');
    assertNothingLost(repo, before);
  });
});
