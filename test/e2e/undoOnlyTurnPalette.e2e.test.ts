// Issue 33 item 8 through the palette of a real workbench (code-server + Chromium, extension from the .vsix): Undo
// Agent Turn → the chat pick → "Work landed after this turn" → Undo Only This Turn → "another chat wrote these
// files" → Continue. The user's two answers must both reach the core: before the fix the second one was dropped and
// the core refused. The repository is built beforehand with the shipped CLI's `hook` from captured payloads of two
// agents (Claude Code in chat A, Codex in chat B, whose shell wrote A's file while both ran).
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { CLI } from '../support/cliProcess';
import { eventually } from '../support/eventually';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  subjectOf,
  write,
} from '../support/gitFixtures';
import { runCommand, startWorkbench, waitForNotification, type Workbench } from './harness';

const ROOT = path.resolve(__dirname, '../../..');
/** The scrubbed repository folder of the captured payloads (test/fixtures/hooks). */
const CAPTURED_REPO = '/home/user/work/repo';
const CHAT_A = 'aaaaaaaa-e2e8-4edb-b5e7-f35f493e58ea';
const CHAT_B = 'bbbbbbbb-e2e8-7ca2-a02f-14d8e7a2bf1d';
const SHARED = 'shared.txt';
const LATER_B = 'later-b.txt';

/** One hook event through the shipped CLI, from an agent's captured payload pointed at `repo`, in chat `session`. */
function hook(agent: string, name: string, repo: string, session: string): { turnId?: string; version?: string } {
  const text = fs
    .readFileSync(path.join(ROOT, 'test/fixtures/hooks', name), 'utf8')
    .split(CAPTURED_REPO)
    .join(repo);
  const input = JSON.stringify({ ...(JSON.parse(text) as object), cwd: repo, session_id: session });
  const r = spawnSync(process.execPath, [CLI, 'hook', agent, '--json'], {
    cwd: repo,
    input,
    encoding: 'utf8',
    env: { ...process.env, COPILOT_CLI: '' },
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { turnId?: string; version?: string };
}

function dialog(page: Page) {
  return page.locator('.monaco-dialog-box');
}

describe('Undo Only This Turn, then Continue past "another chat wrote these files", from the palette (code-server + Chromium, .vsix; issue 33 item 8)', function () {
  this.timeout(180_000);
  let folder = '';
  let workbench: Workbench | undefined;
  let inventory: Set<string>;

  before(async () => {
    folder = makeRepo();
    write(folder, SHARED, 'shared before\n');
    git(folder, 'add', SHARED);
    git(folder, 'commit', '-q', '-m', 'user: shared file');
    const a = hook('claude-code', 'claude-code/UserPromptSubmit.json', folder, CHAT_A);
    hook('codex', 'codex/UserPromptSubmit.json', folder, CHAT_B);
    // Chat B's shell writes the shared file while both turns run; chat A's turn ends with it in its version.
    write(folder, SHARED, 'shared, by a shell of chat B\n');
    hook('codex', 'codex/PostToolUse-Bash.json', folder, CHAT_B);
    assert.ok(hook('claude-code', 'claude-code/Stop.json', folder, CHAT_A).version, 'chat A made a version');
    write(folder, LATER_B, 'B\n');
    assert.ok(hook('codex', 'codex/Stop.json', folder, CHAT_B).version, 'chat B made a later version');
    assert.ok(a.turnId);
    inventory = contentInventory(folder);
    workbench = await startWorkbench({ folder });
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state === 'failed' && workbench)
      console.log(`    screenshot: ${await workbench.screenshot(`e2e-${test.fullTitle()}`)}`);
  });

  after(async () => {
    await workbench?.stop();
    cleanupTempDirs();
  });

  it("both answers reach the core: chat A's turn alone is undone as a [Revert] version, chat B's later turn stays", async () => {
    const page = workbench!.page;
    await runCommand(page, 'Agent Versions: Undo Agent Turn');
    // Two chats have turns: the pick names them; chat A's is not the latest.
    const pick = page.locator('.quick-input-widget .monaco-list-row', { hasText: CHAT_A.slice(0, 8) }).first();
    await pick.waitFor({ state: 'visible', timeout: 20_000 });
    await pick.click();
    const landed = dialog(page).filter({ hasText: 'Work landed after this turn' });
    await landed.waitFor({ state: 'visible', timeout: 20_000 });
    await workbench!.screenshot('undo-only-turn-1-choice');
    await landed.getByRole('button', { name: 'Undo Only This Turn' }).click();
    const other = dialog(page).filter({ hasText: CHAT_B.slice(0, 8) });
    await other.waitFor({ state: 'visible', timeout: 20_000 });
    assert.match(
      (await other.innerText()).replace(/\s+/g, ' '),
      new RegExp(SHARED.replace('.', '\\.')),
      'names the file',
    );
    await workbench!.screenshot('undo-only-turn-2-other-chat');
    await other.getByRole('button', { name: 'Continue' }).click();
    await dialog(page).waitFor({ state: 'hidden', timeout: 10_000 });
    await eventually(
      'the [Revert] version',
      () => subjectOf(folder),
      (s) => s.startsWith('[Revert] Undid turn "'),
      { timeoutMs: 30_000 },
    );
    // The commit lands before git has written the files back: the notice comes when the restore has finished.
    await waitForNotification(page, /undone/i);
    assert.equal(fs.readFileSync(path.join(folder, SHARED), 'utf8'), 'shared before\n', "chat A's turn is undone");
    assert.equal(fs.readFileSync(path.join(folder, LATER_B), 'utf8'), 'B\n', "chat B's later turn stays");
    assert.equal(git(folder, 'status', '--porcelain', '--untracked-files=all').trim(), '', 'clean');
    assertNothingLost(folder, inventory);
    // No error was shown: the core did not refuse the confirmed Undo.
    assert.equal(
      await page.locator('.notification-toast', { hasText: /another chat|Nothing was changed/i }).count(),
      0,
      'no refusal after Continue',
    );
  });
});
