// The turns above the versions (docs/product-contract.md §8, issue 24) in the Vite-built page in real Chromium, fake
// host in the page: a running turn with its files changed so far, a stopped one whose partial work is in the tree, an
// errored one, one whose version could not be made, and a question that changed nothing (one muted line, no action).
// Their buttons post the right requests, have names and tooltips, never cover the title, and the busy state disables
// them.
import * as assert from 'node:assert/strict';
import type { OpenTurn } from '../../src/vscode/historyView/protocol';
import { minutesAgo, useFakeHostPage } from './fakeHostSuite';
import { row, screenshot, turn, versions } from './webviewPage';

declare const window: { __posted: { type: string }[] };
declare const document: { fonts: { ready: Promise<unknown> } };

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}
interface PageElement {
  getBoundingClientRect(): Box;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
  contains(other: PageElement | null): boolean;
  scrollWidth: number;
  textContent: string | null;
  ownerDocument: { elementFromPoint(x: number, y: number): PageElement | null };
}

/** Each top row's title: how many of its buttons overlap it, whether its centre shows it, and its shown width. */
function titleCover(root: unknown): { label: string; overlaps: number; hit: boolean; shown: number; full: number }[] {
  const rows = (root as PageElement).querySelectorAll('.open-turns .turn');
  const out = [];
  for (let i = 0; i < rows.length; i++) {
    const label = rows[i].querySelector('.label')!;
    const box = label.getBoundingClientRect();
    const buttons = rows[i].querySelectorAll('.actions button');
    let overlaps = 0;
    for (let b = 0; b < buttons.length; b++) {
      const o = buttons[b].getBoundingClientRect();
      if (o.left < box.right && o.right > box.left && o.top < box.bottom && o.bottom > box.top) overlaps++;
    }
    const hit = label.ownerDocument.elementFromPoint((box.left + box.right) / 2, (box.top + box.bottom) / 2);
    out.push({
      label: label.textContent ?? '',
      overlaps,
      hit: label.contains(hit),
      shown: box.right - box.left,
      full: label.scrollWidth,
    });
  }
  return out;
}

function openTurn(overrides: Partial<OpenTurn>): OpenTurn {
  return {
    id: 'turn-x',
    chatId: 'chat-1',
    chatTitle: null,
    agent: 'claude-code',
    label: 'A turn',
    state: 'running',
    startedAt: minutesAgo(2),
    endedAt: null,
    filesChanged: 0,
    canUndo: true,
    ...overrides,
  };
}

const STOPPED_LABEL = 'Refactor the whole test suite into smaller files and rename every helper';

/** Made at each use, so that "2 minutes ago" is still true when a loaded machine shows the page a minute later. */
const turnsNow = (): OpenTurn[] => [
  openTurn({ id: 'turn-running', label: 'Rename the parser module', filesChanged: 3, chatTitle: 'Parser' }),
  openTurn({ id: 'turn-question', label: 'Explain this code', state: 'no-change', filesChanged: null, canUndo: false }),
  openTurn({
    id: 'turn-stopped',
    label: STOPPED_LABEL,
    state: 'stopped',
    filesChanged: 2,
    agent: 'codex',
    startedAt: minutesAgo(9),
    endedAt: minutesAgo(8),
  }),
  openTurn({ id: 'turn-errored', label: 'Call the API', state: 'errored', filesChanged: 1, endedAt: minutesAgo(20) }),
  openTurn({
    id: 'turn-unrecorded',
    label: 'Write the docs',
    state: 'unrecorded',
    filesChanged: 4,
    endedAt: minutesAgo(30),
  }),
];

describe('Version History webview: the turns above the versions (Vite-built page in real Chromium, fake host)', function () {
  this.timeout(60_000);
  const host = useFakeHostPage();

  const section = () => host().page.getByRole('region', { name: 'Turns that are not versions yet' });
  const show = (openTurns: OpenTurn[]) =>
    host().showView(
      versions(
        [
          row({ kind: 'agent', label: 'Add the greeter', isHead: true, turn: turn() }),
          row({ kind: 'user', label: 'Initial commit' }),
        ],
        { openTurns },
      ),
    );

  it('lists each above the versions with its state, files and names; a turn that changed nothing is one muted line with no action', async () => {
    await show(turnsNow());
    await section().waitFor();
    const items = section().getByRole('listitem');
    assert.equal(await items.count(), 5);
    const names = await items.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    assert.deepEqual(names, [
      'Running turn: Rename the parser module, 3 files changed so far, by claude-code, chat Parser, began 2 minutes ago',
      'Changed nothing: Explain this code, by claude-code, 2 minutes ago',
      `Stopped turn: ${STOPPED_LABEL}, 2 files of partial work, by codex, 8 minutes ago`,
      'Errored turn: Call the API, 1 file of partial work, by claude-code, 20 minutes ago',
      'No version turn: Write the docs, 4 files changed, no version was made, by claude-code, 30 minutes ago',
    ]);
    assert.deepEqual(await section().locator('.badge').allTextContents(), [
      'Running',
      'Stopped',
      'Errored',
      'No version',
    ]);
    // Above the versions: the section ends where the list begins.
    const top = await section().boundingBox();
    const list = await host().page.getByRole('listbox').boundingBox();
    assert.ok(top && list && top.y + top.height <= list.y + 0.5, 'the turns are above the versions');
    // The question has no button; every other row has Show Changes and Undo.
    assert.equal(await items.nth(1).getByRole('button').count(), 0);
    for (const i of [0, 2, 3, 4]) assert.equal(await items.nth(i).getByRole('button').count(), 2);
    await screenshot(host().page, 'open-turns');
  });

  it('Show Changes and Undo post the request with the turn’s id, once per double click; tooltips and icons', async () => {
    await show(turnsNow());
    await section().waitFor();
    const running = section().getByRole('listitem').first();
    const showChanges = running.getByRole('button', { name: 'Show changes so far of Rename the parser module' });
    assert.equal(await showChanges.getAttribute('title'), 'Show Changes');
    assert.equal(await showChanges.locator('.codicon-diff-multiple').count(), 1);
    await showChanges.dblclick();
    const undo = section().getByRole('button', { name: `Undo stopped turn: ${STOPPED_LABEL}` });
    assert.equal(await undo.getAttribute('title'), 'Undo (saves its work first)');
    assert.equal(await undo.locator('.codicon-discard').count(), 1);
    await undo.click();
    await host().page.waitForFunction(() => window.__posted.some((m) => m.type === 'undo'));
    const posted = (await host().posted()).filter((m) => m.type === 'showTurnChanges' || m.type === 'undo');
    assert.deepEqual(
      posted.map((m) => ({ type: m.type, turnId: m.turnId })),
      [
        { type: 'showTurnChanges', turnId: 'turn-running' },
        { type: 'undo', turnId: 'turn-stopped' },
      ],
    );
    assert.equal(
      await section()
        .getByRole('button', { name: 'Undo running turn: Rename the parser module' })
        .getAttribute('title'),
      'Undo (stops the turn, saves its work first)',
    );
  });

  it('the titles are never covered by the buttons, narrow and wide', async () => {
    for (const width of [300, 420, 900]) {
      await host().page.setViewportSize({ width, height: 600 });
      await show(turnsNow());
      await section().waitFor();
      await host().page.evaluate(() => document.fonts.ready);
      const reports = await host().page.locator('body').evaluate(titleCover);
      assert.equal(reports.length, 4);
      for (const r of reports) {
        assert.equal(r.overlaps, 0, `${width}px: no button covers "${r.label}"`);
        assert.ok(r.hit, `${width}px: the centre of "${r.label}" shows it`);
        assert.ok(r.shown >= Math.min(r.full, 60) - 1, `${width}px: "${r.label}" keeps its space`);
      }
      await screenshot(host().page, `open-turns-${width}`);
    }
  });

  it('while a restore runs the buttons are disabled; without turns above the versions the section is gone', async () => {
    await show(turnsNow());
    await section().waitFor();
    await host().send({ type: 'didChangeBusy', busy: 'Undo Agent Turn…' });
    const buttons = section().getByRole('button');
    await buttons.first().and(host().page.locator(':disabled')).waitFor();
    for (let i = 0; i < (await buttons.count()); i++) assert.equal(await buttons.nth(i).isDisabled(), true);
    await host().send({ type: 'didChangeBusy', busy: null });
    await show([]);
    await section().waitFor({ state: 'detached' });
    // A malformed turn makes the whole message invalid: the page keeps what it showed and reports nothing broken.
    await show(turnsNow());
    await section().waitFor();
    await host().send({
      type: 'didChangeVersions',
      view: versions([], { openTurns: [{ ...turnsNow()[0], state: 'exploded' } as unknown as OpenTurn] }),
    });
    assert.equal(await section().getByRole('listitem').count(), 5);
  });
});
