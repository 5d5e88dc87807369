import * as assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { BLOCKED_MESSAGE } from '../../src/core/history/wording';
import { rowsInView, titleReports, type TitleReport } from './rowGeometry';
import { FakeHostPage, launchChromium, openFakeHostPage, row, screenshot, turn, versions } from './webviewPage';

// The page's globals, as the callbacks passed to page.evaluate see them (this project compiles without the DOM lib).
declare const window: { __posted: { type: string }[]; __avhClient: { ignored: number } };
declare const document: {
  activeElement: unknown;
  querySelector(selector: string): { inert: boolean } | null;
  fonts: { ready: Promise<unknown>; check(font: string): boolean };
};

/** A row's title is shown whole or ellipsized, never under a button, and the pointer at its centre reaches it. */
function assertTitleReadable(report: TitleReport, what: string): void {
  assert.equal(report.overlaps, 0, `${what}: no button overlaps the title of "${report.label}"`);
  assert.ok(report.hit, `${what}: the title of "${report.label}" is what its centre shows`);
  assert.ok(
    report.shownWidth >= Math.min(report.fullWidth, 60) - 1,
    `${what}: "${report.label}" keeps its space (${report.shownWidth} of ${report.fullWidth} px)`,
  );
}

describe('Version History webview (Vite-built page in real Chromium, fake host in the page)', function () {
  this.timeout(60_000);
  let browser: Browser;
  let host: FakeHostPage;

  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    host = await openFakeHostPage(browser);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      await screenshot(host.page, `failed-${this.currentTest.title}`).catch(() => undefined);
    assert.deepEqual(host.errors, [], 'no page errors');
    await host.page.close();
  });

  const options = () => host.page.getByRole('option');
  const list = () => host.page.getByRole('listbox');

  it('says ready first, then renders every badge, outcome, agent, chat mark and files +/-', async () => {
    assert.deepEqual((await host.posted())[0], { type: 'ready', protocol: 1 });
    await host.showView(
      versions([
        row({ kind: 'restore', label: '[Restore] Restored version abc1234', isHead: true }),
        row({
          kind: 'agent',
          label: 'Add a greeting',
          turn: turn({ outcome: 'completed', agent: 'claude-code', chatTitle: 'Greetings', chatIndex: 1 }),
        }),
        row({
          kind: 'interrupted',
          label: '[Interrupted] Saved partial changes',
          turn: turn({ outcome: 'cancelled', agent: 'codex', chatIndex: 2, canUndo: false }),
        }),
        row({ kind: 'recovery', label: '[Recovery] Saved current changes' }),
        row({ kind: 'agent', label: 'Broken turn', turn: turn({ outcome: 'errored', agent: null, chatIndex: 1 }) }),
        row({ kind: 'user', label: 'my own commit', filesChanged: 1, insertions: 4, deletions: 2 }),
      ]),
    );
    await options().first().waitFor();
    assert.equal(await options().count(), 6);
    const labels = await options().evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    assert.match(labels[0]!, /^Restore: \[Restore\] Restored version abc1234, .*current version$/);
    assert.match(
      labels[1]!,
      /^Agent: Add a greeting, completed, by claude-code, chat 1 Greetings, 5 minutes ago, [0-9a-f]{7}, 2 files changed, \+10 −3$/,
    );
    assert.match(labels[2]!, /^Interrupted: .*, cancelled, by codex, chat 2,/);
    assert.match(labels[3]!, /^Recovery: /);
    assert.match(labels[4]!, /^Agent: Broken turn, errored, chat 1,/);
    assert.match(labels[5]!, /^Commit: my own commit, 5 minutes ago, [0-9a-f]{7}, 1 file changed, \+4 −2$/);
    const badges = await host.page.locator('.badge').allTextContents();
    assert.deepEqual(badges, ['Restore', 'Agent', 'Interrupted', 'Recovery', 'Agent', 'Commit']);
    const outcomes = await host.page.locator('.outcome').allTextContents();
    assert.deepEqual(outcomes, ['completed', 'cancelled', 'errored']);
    // The absolute time is on hover.
    assert.match(
      (await options().nth(5).locator('[title]').filter({ hasText: 'minutes ago' }).getAttribute('title'))!,
      /\d/,
    );
    await screenshot(host.page, 'badges');
  });

  it('marks undone turns and offers Redo at the top while it is valid', async () => {
    const undone = row({ kind: 'agent', label: 'Add world', turn: turn({ undone: true, canUndo: false }) });
    await host.showView(
      versions([row({ kind: 'restore', label: '[Restore] Restored version 1234567', isHead: true }), undone], {
        canRedo: true,
      }),
    );
    await options().first().waitFor();
    assert.match((await options().nth(1).getAttribute('aria-label'))!, /^Agent: Add world, undone, completed/);
    assert.equal(await options().nth(1).locator('.undone-badge').textContent(), 'Undone');
    // A double click on a button acts once (as on every action button of the view).
    await host.page.getByRole('button', { name: 'Redo the last undone turn' }).dblclick();
    await host.page.waitForFunction(() => window.__posted.some((m) => m.type === 'redo'));
    assert.equal((await host.posted()).filter((m) => m.type === 'redo').length, 1);
    const redo = (await host.posted()).find((m) => m.type === 'redo');
    assert.deepEqual(Object.keys(redo!).sort(), ['id', 'type']);
    await screenshot(host.page, 'undone-redo');
    await host.showView(versions([undone], { canRedo: false }));
    await host.page.getByRole('button', { name: 'Redo the last undone turn' }).waitFor({ state: 'detached' });
  });

  it('Continue Chat from Before This Turn: a button on an undone turn that can continue, none on one that cannot', async () => {
    const codex = turn({ agent: 'codex', undone: true, canUndo: false, canContinueChat: true });
    const gemini = turn({ agent: 'gemini', undone: true, canUndo: false, canContinueChat: false });
    await host.showView(
      versions([
        row({ kind: 'agent', label: 'Add world', turn: codex }),
        row({ kind: 'agent', label: 'Add moon', turn: gemini }),
      ]),
    );
    await options().first().click();
    // The row's icon buttons are aria-hidden (the row's menu is their accessible form).
    const button = options()
      .first()
      .getByRole('button', { name: 'Continue the chat from before this turn: Add world', includeHidden: true });
    await button.waitFor();
    await screenshot(host.page, 'continue-chat-button');
    await button.click();
    await host.page.waitForFunction(() => window.__posted.some((m) => m.type === 'continueChat'));
    const sent = (await host.posted()).find((m) => m.type === 'continueChat');
    assert.equal(sent!.turnId, codex.id);
    await options().nth(1).click();
    assert.equal(
      await options()
        .nth(1)
        .getByRole('button', { name: 'Continue the chat from before this turn: Add moon', includeHidden: true })
        .count(),
      0,
    );
  });

  it('branch loss: the warning row with its metadata, a lost chat with Continue on a New Branch, on-remote and unknown with their one action', async () => {
    const lostTurn = turn({ chatId: 'chat-lost', chatTitle: 'Login', chatBranch: 'lost', canUndo: false });
    await host.showView(
      versions([row({ kind: 'agent', label: 'Add the login form', turn: lostTurn })], {
        notices: {
          warnings: [
            {
              chatId: 'chat-old',
              chatTitle: 'Signup',
              oldBranch: 'feature/signup',
              newBranch: 'feature/signup-2',
              baseBranch: 'main',
              repository: '/work/repo',
              at: Date.now(),
            },
          ],
          chats: [
            {
              chatId: 'chat-lost',
              chatTitle: 'Login',
              branch: 'feature/login',
              state: 'lost',
              canContinue: true,
              message:
                'The branch "feature/login" for this chat no longer exists locally or on "origin". Its code changes cannot be recovered.',
            },
            {
              chatId: 'chat-remote',
              chatTitle: null,
              branch: 'feature/x',
              state: 'on-remote',
              canContinue: false,
              message: 'The branch "feature/x" for this chat was deleted locally but still exists on "origin".',
            },
            {
              chatId: 'chat-offline',
              chatTitle: null,
              branch: 'feature/y',
              state: 'unknown',
              canContinue: false,
              message:
                'The branch "feature/y" for this chat is not in this repository, and "origin" could not be reached.',
            },
          ],
        },
      }),
    );
    const warning = host.page.getByRole('note');
    await warning.waitFor();
    assert.equal(
      (await warning.textContent())!.trim().replace(/^⚠\s*/, ''),
      'Conversation continues on `feature/signup-2`; code changes from `feature/signup` were not recovered.',
    );
    assert.deepEqual(
      await warning.evaluate((el) => [
        el.getAttribute('data-old-branch'),
        el.getAttribute('data-new-branch'),
        el.getAttribute('data-base-branch'),
        el.getAttribute('data-chat'),
        el.getAttribute('data-repository'),
      ]),
      ['feature/signup', 'feature/signup-2', 'main', 'chat-old', '/work/repo'],
    );
    const alerts = host.page.getByRole('alert');
    assert.equal(await alerts.count(), 3);
    assert.match((await alerts.nth(0).textContent())!, /no longer exists locally or on "origin"/);
    assert.equal(
      await alerts.nth(1).getByRole('button', { name: 'Continue on a New Branch' }).count(),
      0,
      'on-remote is never offered a new branch',
    );
    assert.equal(
      await alerts.nth(2).getByRole('button', { name: 'Continue on a New Branch' }).count(),
      0,
      'unknown is never offered a new branch',
    );
    assert.doesNotMatch((await alerts.nth(2).textContent())!, /lost|cannot be recovered/);
    // The lost chat's row says so, and offers the same action.
    assert.match((await options().first().getAttribute('aria-label'))!, /branch lost/);
    assert.equal(await options().first().locator('.branch-badge').textContent(), 'Branch lost');
    await alerts.nth(0).getByRole('button', { name: 'Continue on a New Branch' }).click();
    await alerts.nth(1).getByRole('button', { name: 'Restore from Remote' }).click();
    await alerts.nth(2).getByRole('button', { name: 'Try again' }).click();
    await host.page.waitForFunction(() => window.__posted.filter((m) => m.type !== 'ready').length >= 3);
    const sent = (await host.posted())
      .filter((m) => m.type !== 'ready')
      .map((m) => {
        const { id: _id, ...rest } = m as { id: number };
        return rest;
      });
    assert.deepEqual(sent, [
      { type: 'continueOnNewBranch', chatId: 'chat-lost' },
      { type: 'restoreChatBranch', chatId: 'chat-remote' },
      { type: 'checkBranchesAgain' },
    ]);
    await screenshot(host.page, 'branch-loss');
  });

  it('while recovery is required shows only the blocked text, with no buttons', async () => {
    await host.showView(versions([row()]));
    await options().first().waitFor();
    await host.showView({ kind: 'blocked', message: BLOCKED_MESSAGE });
    await host.page.getByRole('status').filter({ hasText: 'temporarily unavailable' }).waitFor();
    assert.equal((await host.page.locator('#app').innerText()).trim(), BLOCKED_MESSAGE);
    assert.equal(await host.page.getByRole('button').count(), 0);
    assert.equal(await options().count(), 0);
    await screenshot(host.page, 'blocked');
  });

  it('the empty state lists each agent with its state and a button that starts Connect Agent… for it', async () => {
    await host.showView({ kind: 'empty', branch: 'main' });
    const section = host.page.getByRole('region', { name: 'Connect an agent' });
    await section.waitFor();
    assert.match(await section.innerText(), /No agent turns are recorded yet/);
    assert.equal(await section.getByRole('list', { name: 'Agents' }).count(), 0, 'no states yet: no list');
    await host.send({
      type: 'didChangeAgents',
      agents: [
        {
          name: 'claude-code',
          displayName: 'Claude Code',
          state: 'not-connected',
          summary: 'Claude Code: not connected.',
        },
        { name: 'codex', displayName: 'Codex', state: 'older-form', summary: 'Codex: connected with an older form.' },
        { name: 'gemini', displayName: 'Gemini CLI', state: 'connected', summary: 'Gemini CLI: connected in x' },
      ],
    });
    const items = section.getByRole('list', { name: 'Agents' }).getByRole('listitem');
    await items.nth(2).waitFor();
    assert.deepEqual(
      (await items.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()),
      ['Claude Code not connected Connect', 'Codex connected in an older form Update', 'Gemini CLI connected'],
    );
    await section.getByRole('button', { name: 'Connect Claude Code' }).click();
    await section.getByRole('button', { name: 'Update Codex' }).click();
    await section.getByRole('button', { name: 'Connect Agent…' }).click();
    await section.getByRole('button', { name: 'Check Agent Connections' }).click();
    await section.getByRole('button', { name: 'extension API' }).click();
    // A state the protocol does not know is dropped whole (the list keeps what it had).
    await host.send({
      type: 'didChangeAgents',
      agents: [{ name: 'x', displayName: 'X', state: 'hacked', summary: '' }],
    });
    assert.equal(await items.count(), 3);
    const commands = (await host.posted()).filter((m) => m.type !== 'ready');
    assert.deepEqual(commands, [
      { type: 'connectAgent', agent: 'claude-code' },
      { type: 'connectAgent', agent: 'codex' },
      { type: 'connectAgent' },
      { type: 'checkAgentConnections' },
      { type: 'openReadme', section: 'extension-api' },
    ]);
    await screenshot(host.page, 'empty');
  });

  it('works by keyboard: Tab, arrows, Enter shows changes, the context menu key offers Undo and Restore', async () => {
    const rows = [
      row({ kind: 'agent', label: 'Newest', isHead: true, turn: turn({ id: 'turn-newest' }) }),
      row({ kind: 'agent', label: 'Older', turn: turn({ id: 'turn-older' }) }),
      row({ kind: 'user', label: 'Oldest' }),
    ];
    await host.showView(versions(rows));
    await options().first().waitFor();
    await host.page.keyboard.press('Tab');
    assert.equal(await list().evaluate((el) => el === document.activeElement), true);
    assert.equal(await list().getAttribute('aria-activedescendant'), 'version-0');
    await host.page.keyboard.press('ArrowDown');
    assert.equal(await list().getAttribute('aria-activedescendant'), 'version-1');
    assert.equal(await options().nth(1).getAttribute('aria-selected'), 'true');
    await host.page.keyboard.press('Enter');
    await host.page.keyboard.press('ContextMenu');
    const menu = host.page.getByRole('menu', { name: 'Actions for Older' });
    await menu.waitFor();
    assert.deepEqual(await menu.getByRole('menuitem').allTextContents(), [
      'Show Changes',
      'Undo',
      'Lines It Still Owns',
      'Restore to This Version',
    ]);
    assert.equal(
      await menu
        .getByRole('menuitem', { name: 'Undo agent turn: Older' })
        .evaluate((el) => el === document.activeElement),
      false,
    );
    await host.page.keyboard.press('ArrowDown');
    assert.equal(
      await menu
        .getByRole('menuitem', { name: 'Undo agent turn: Older' })
        .evaluate((el) => el === document.activeElement),
      true,
    );
    await screenshot(host.page, 'keyboard-menu');
    await host.page.keyboard.press('Enter');
    await menu.waitFor({ state: 'detached' });
    assert.equal(await list().evaluate((el) => el === document.activeElement), true, 'focus returns to the list');
    await host.page.keyboard.press('End');
    assert.equal(await list().getAttribute('aria-activedescendant'), 'version-2');
    await host.page.keyboard.press('Shift+F10');
    await host.page.getByRole('menu', { name: 'Actions for Oldest' }).waitFor();
    assert.deepEqual(
      await host.page.getByRole('menuitem').allTextContents(),
      ['Show Changes', 'Restore to This Version'],
      'no Undo on a commit that is not a turn',
    );
    await host.page.keyboard.press('ArrowUp');
    await host.page.keyboard.press('Enter');
    await host.page.keyboard.press('Home');
    await host.page.keyboard.press('ContextMenu');
    await host.page.getByRole('menu', { name: 'Actions for Newest' }).waitFor();
    assert.deepEqual(
      await host.page.getByRole('menuitem').allTextContents(),
      ['Show Changes', 'Undo', 'Lines It Still Owns'],
      'no Restore on the current version',
    );
    await host.page.keyboard.press('Escape');
    await host.page.getByRole('menu').waitFor({ state: 'detached' });
    const requests = (await host.posted()).filter((m) => typeof m.id === 'number').map(({ id: _id, ...m }) => m);
    assert.deepEqual(requests, [
      { type: 'showChanges', oid: rows[1].oid },
      { type: 'undo', turnId: 'turn-older' },
      { type: 'restore', oid: rows[2].oid },
    ]);
  });

  it("a row's icon buttons: names, tooltips, icons; they never cover its title (narrow and wide)", async () => {
    const lost = turn({ id: 'turn-lost', chatId: 'chat-lost', chatBranch: 'lost' });
    const rows = [
      row({ kind: 'agent', label: 'Newest turn', isHead: true, turn: turn({ id: 'turn-newest' }) }),
      row({ kind: 'agent', label: 'A turn whose prompt summary is long enough to need an ellipsis', turn: lost }),
      row({ kind: 'user', label: 'my own commit' }),
    ];
    await host.showView(versions(rows));
    await options().first().waitFor();
    await host.page.evaluate(() => document.fonts.ready);
    assert.ok(await host.page.evaluate(() => document.fonts.check('16px codicon')), 'the codicon font loaded');
    const expected = [
      [
        ['Show Changes', 'Show changes of Newest turn', 'diff-multiple'],
        ['Undo', 'Undo agent turn: Newest turn', 'discard'],
      ],
      [
        ['Show Changes', `Show changes of ${rows[1].label}`, 'diff-multiple'],
        ['Undo', `Undo agent turn: ${rows[1].label}`, 'discard'],
        ['Continue on a New Branch', `Continue the conversation of ${rows[1].label} on a new branch`, 'git-branch'],
        ['Restore to This Version', `Restore to this version: ${rows[1].label}`, 'history'],
      ],
      [
        ['Show Changes', 'Show changes of my own commit', 'diff-multiple'],
        ['Restore to This Version', 'Restore to this version: my own commit', 'history'],
      ],
    ];
    for (const [i, buttons] of expected.entries()) {
      await options()
        .nth(i)
        .hover({ position: { x: 40, y: 10 } });
      const shown = await options()
        .nth(i)
        .locator('.actions button')
        .evaluateAll((els) =>
          els.map((el) => [
            el.getAttribute('title'),
            el.getAttribute('aria-label'),
            /codicon-([\w-]+)/.exec(el.querySelector('.codicon')?.getAttribute('class') ?? '')?.[1],
            el.textContent,
          ]),
        );
      assert.deepEqual(
        shown,
        buttons.map((b) => [...b, '']),
        `row ${i}: tooltip, accessible name, icon, no text`,
      );
      for (const name of buttons.map((b) => b[1]))
        await options().nth(i).getByRole('button', { name, exact: true, includeHidden: true }).waitFor();
    }
    await screenshot(host.page, 'icon-buttons-hover');

    // Hovered, and selected (the pointer elsewhere): the title keeps its place beside the buttons.
    for (const width of [300, 420, 900]) {
      await host.page.setViewportSize({ width, height: 600 });
      for (let i = 0; i < rows.length; i++) {
        await options()
          .nth(i)
          .hover({ position: { x: 40, y: 10 } });
        const hovered = (await host.page.locator('body').evaluate(titleReports))[i];
        assert.ok(hovered.hovered && hovered.buttons.length > 0, `${width} px, row ${i}: its buttons show on hover`);
        assertTitleReadable(hovered, `${width} px, hovered`);
        await options()
          .nth(i)
          .click({ position: { x: 40, y: 10 } });
        await host.page.mouse.move(width / 2, 590);
        const selected = (await host.page.locator('body').evaluate(titleReports))[i];
        assert.ok(selected.selected && !selected.hovered && selected.buttons.length > 0, `${width} px, row ${i}`);
        assertTitleReadable(selected, `${width} px, selected`);
      }
      const reports = await host.page.locator('body').evaluate(titleReports);
      const oneLine = reports.every((r) => Math.abs(r.titleMiddle - r.detailsMiddle) < 3);
      assert.equal(oneLine, width >= 600, `${width} px: ${width >= 600 ? 'one line' : 'two lines'} per row`);
      await screenshot(host.page, `icon-buttons-selected-${width}`);
    }
    assert.equal(await host.page.locator('body').evaluate(rowsInView), 3);
    // Only the selected and the hovered row show buttons: the others' titles have the whole width.
    const shownRows = (await host.page.locator('body').evaluate(titleReports)).filter((r) => r.buttons.length > 0);
    assert.deepEqual(
      shownRows.map((r) => r.label),
      [rows[2].label],
    );
  });

  it('the selected row shows its buttons as the keyboard moves the selection, and they act on that row', async () => {
    const rows = [
      row({ kind: 'agent', label: 'First', isHead: true, turn: turn({ id: 'turn-first' }) }),
      row({ kind: 'agent', label: 'Second', turn: turn({ id: 'turn-second' }) }),
    ];
    await host.showView(versions(rows));
    await options().first().waitFor();
    await host.page.mouse.move(200, 590);
    await host.page.keyboard.press('Tab');
    const withButtons = async () =>
      (await host.page.locator('body').evaluate(titleReports)).filter((r) => r.buttons.length > 0).map((r) => r.label);
    assert.deepEqual(await withButtons(), ['First']);
    await host.page.keyboard.press('ArrowDown');
    assert.deepEqual(await withButtons(), ['Second']);
    for (const report of await host.page.locator('body').evaluate(titleReports))
      assertTitleReadable(report, 'keyboard');
    // The buttons are for the mouse (the list stays the one tab stop); a click acts on their row and keeps focus.
    const buttons = options().nth(1).locator('.actions button');
    assert.deepEqual(await buttons.evaluateAll((els) => els.map((el) => el.getAttribute('tabindex'))), [
      '-1',
      '-1',
      '-1',
    ]);
    await options().nth(1).getByRole('button', { name: 'Undo agent turn: Second', includeHidden: true }).click();
    await host.page.waitForFunction(() => window.__posted.some((m) => m.type === 'undo'));
    assert.deepEqual(
      (await host.posted()).filter((m) => m.type === 'undo').map(({ id: _id, ...m }) => m),
      [{ type: 'undo', turnId: 'turn-second' }],
    );
    assert.equal(await list().evaluate((el) => el === document.activeElement), true, 'the list keeps the focus');
    await host.page.keyboard.press('ArrowUp');
    assert.deepEqual(await withButtons(), ['First', 'Second'], 'the selected row, and the hovered one');
    await screenshot(host.page, 'icon-buttons-keyboard');
  });

  it('the busy state disables the list and shows progress; an error reply shows as an alert', async () => {
    await host.showView(versions([row({ kind: 'agent', label: 'A turn', turn: turn() }), row({ label: 'Base' })]));
    await options().first().waitFor();
    await host.send({ type: 'didChangeBusy', busy: 'Undo Agent Turn…' });
    await host.page.getByRole('progressbar', { name: 'Undo Agent Turn…' }).waitFor();
    assert.equal(await list().getAttribute('aria-busy'), 'true');
    assert.equal(await list().evaluate((el) => (el as unknown as { inert: boolean }).inert), true);
    await screenshot(host.page, 'busy');
    const before = (await host.posted()).length;
    await options()
      .nth(1)
      .dblclick({ force: true })
      .catch(() => undefined);
    await host.page.keyboard.press('Enter');
    assert.equal((await host.posted()).length, before, 'nothing is sent while busy');
    await host.send({ type: 'didChangeBusy', busy: null });
    await host.page.getByRole('progressbar').waitFor({ state: 'detached' });
    await host.page.waitForFunction(() => document.querySelector('[role="listbox"]')?.inert === false);
    await host.failNext('showChanges', 'The version could not be read.');
    await options().nth(1).dblclick();
    // Two steps, so a failure says which half broke: the double click sent nothing, or the error reply showed nothing.
    await host.page
      .waitForFunction(() => window.__posted.some((m) => m.type === 'showChanges'), undefined, { timeout: 10_000 })
      .catch(async () =>
        assert.fail(`no showChanges after the double click; posted: ${JSON.stringify(await host.posted())}`),
      );
    await host.page
      .getByRole('alert')
      .filter({ hasText: 'The version could not be read.' })
      .waitFor({ timeout: 10_000 });
    const showRequests = async () => (await host.posted()).filter((m) => m.type === 'showChanges').length;
    assert.equal(await showRequests(), 1, 'a double click on a row asks once, wherever in the row it lands');
    await host.page.getByRole('button', { name: 'Dismiss the error' }).click();
    await host.page.getByRole('alert').waitFor({ state: 'detached' });

    // A double click on a row's own button acts once too, and the error it brings moves no row: it sits over the
    // bottom of the view (above the list, it pushed the rows down between the two clicks).
    const topOfFirst = () =>
      options()
        .nth(0)
        .evaluate((el) => (el as unknown as { getBoundingClientRect(): { top: number } }).getBoundingClientRect().top);
    await options().nth(0).hover();
    const rowTop = await topOfFirst();
    await host.failNext('showChanges', 'The second version could not be read.');
    await options().nth(0).getByRole('button', { name: 'Show Changes', includeHidden: true }).dblclick();
    await host.page
      .getByRole('alert')
      .filter({ hasText: 'The second version could not be read.' })
      .waitFor({ timeout: 10_000 });
    assert.equal(await showRequests(), 2);
    assert.equal(await topOfFirst(), rowTop);
    await screenshot(host.page, 'error');
  });

  it('ignores malformed host messages and keeps working', async () => {
    await host.showView(versions([row({ label: 'Good' })]));
    await options().first().waitFor();
    for (const junk of [
      null,
      42,
      'didChangeVersions',
      {},
      { type: 'didChangeVersions' },
      { type: 'didChangeVersions', view: { kind: 'nope' } },
      { type: 'didChangeVersions', view: { kind: 'versions', rows: 'x' } },
      { type: 'reply', id: 'x' },
      { type: 'error', id: 999 },
      { type: 'reply', id: 12345 },
      { type: 'didChangeBusy', busy: 5 },
      { type: 'didChangeVersions', view: { kind: 'blocked' } },
    ])
      await host.send(junk);
    assert.equal(await host.page.evaluate(() => window.__avhClient.ignored), 11);
    assert.equal(await options().count(), 1);
    assert.match((await options().first().getAttribute('aria-label'))!, /Good/);
    // A row that does not validate renders as a note; its neighbours still render.
    await host.showView(versions([row({ label: 'Before' }), { oid: 42 } as never, row({ label: 'After' })]));
    await host.page.getByText('This entry could not be read.').waitFor();
    assert.equal(await options().count(), 3);
    assert.match((await options().nth(2).getAttribute('aria-label'))!, /After/);
  });

  it('10,000 versions: only the rows in view exist in the DOM, and scrolling to the end asks for more', async () => {
    const many = Array.from({ length: 10_000 }, (_, i) => row({ label: `Commit ${i}` }));
    await host.showView(versions(many, { hasMore: true }));
    await options().first().waitFor();
    const rendered = await options().count();
    assert.ok(rendered > 5 && rendered < 60, `rendered ${rendered} rows`);
    await list().evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    await host.page.getByRole('option', { name: /^Commit: Commit 9999,/ }).waitFor();
    assert.ok((await options().count()) < 60);
    await host.page.waitForFunction(() => window.__posted.some((m) => m.type === 'loadMore'));
    await screenshot(host.page, 'ten-thousand');
  });

  it('the selection stays on the same version when new versions arrive on top or the list changes', async () => {
    const many = Array.from({ length: 10_000 }, (_, i) => row({ label: `Commit ${i}` }));
    await host.showView(versions(many));
    await options().first().waitFor();
    await list().focus();
    await host.page.keyboard.press('End');
    assert.equal(await list().getAttribute('aria-activedescendant'), 'version-9999');
    // Three new versions on top: the selected one moves down three places and stays selected.
    const fresh = [row({ label: 'New 1' }), row({ label: 'New 2' }), row({ label: 'New 3' })];
    await host.showView(versions([...fresh, ...many]));
    await host.page.locator('[role="listbox"][aria-activedescendant="version-10002"]').waitFor();
    assert.equal(await host.page.locator('#version-10002').getAttribute('aria-selected'), 'true');
    // A list where it sits far above its old place (the rows before it went away): found there, not reset.
    await host.showView(versions(many.slice(9_990)));
    await host.page.locator('[role="listbox"][aria-activedescendant="version-9"]').waitFor();
    await host.page.getByRole('option', { name: /^Commit: Commit 9999,/, selected: true }).waitFor();
    // Gone altogether: the selection stays within the list.
    await host.showView(versions(many.slice(0, 4)));
    await host.page.locator('[role="listbox"][aria-activedescendant="version-3"]').waitFor();
    await host.page.keyboard.press('ArrowUp');
    assert.equal(await list().getAttribute('aria-activedescendant'), 'version-2');
  });
});
