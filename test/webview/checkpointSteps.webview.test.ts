// Checkpoints before an agent's destructive commands (issue 34) as steps in the Vite-built page in real Chromium,
// fake host in the page: under a running turn (against the working tree) and under a finished turn's version line.
// Each step says what ran (the label, and the command as the agent wrote it), the files gone or changed, and its
// Restore to Before This Command posts the checkpoint's id once per double click; busy disables it.
import * as assert from 'node:assert/strict';
import type { CheckpointedTurn, CommandStep, OpenTurn } from '../../src/vscode/historyView/protocol';
import { minutesAgo, useFakeHostPage } from './fakeHostSuite';
import { row, screenshot, turn, versions } from './webviewPage';

declare const window: { __posted: { type: string }[] };
declare const document: { querySelectorAll(selector: string): { length: number } };

const RESET_ID = '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
const CLEAN_ID = '0d9e8f7a-6b5c-4d3e-9f2a-1b0c9d8e7f6a';
const STASH_ID = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';

function step(overrides: Partial<CommandStep>): CommandStep {
  return {
    id: RESET_ID,
    label: 'git reset --hard',
    command: 'git reset --hard',
    createdAt: minutesAgo(3),
    savedFiles: 0,
    deleted: 0,
    modified: 0,
    files: [],
    ...overrides,
  };
}

const VERSION_OID = 'c'.repeat(40);

function model(): { openTurns: OpenTurn[]; checkpoints: CheckpointedTurn[] } {
  return {
    openTurns: [
      {
        id: 'turn-running',
        chatId: 'chat-1',
        chatTitle: 'Cleanup',
        agent: 'claude-code',
        label: 'Clean the build output',
        state: 'running',
        startedAt: minutesAgo(5),
        endedAt: null,
        filesChanged: 6,
        canUndo: true,
        steps: [
          step({
            command: 'cd src && git reset --hard',
            modified: 2,
            files: [
              { path: 'src/parser.ts', status: 'modified' },
              { path: 'src/lexer.ts', status: 'modified' },
            ],
          }),
          step({
            id: CLEAN_ID,
            label: 'git clean -x',
            command: 'git clean -fdx',
            createdAt: minutesAgo(1),
            savedFiles: 2,
            deleted: 4,
            files: [
              { path: '.env', status: 'deleted' },
              { path: 'debug.log', status: 'deleted' },
              { path: 'notes/todo.md', status: 'deleted' },
              { path: 'src/new-feature.ts', status: 'deleted' },
            ],
          }),
        ],
      },
    ],
    checkpoints: [
      {
        turnId: 'turn-done',
        oid: VERSION_OID,
        label: 'Stash the experiment',
        time: Math.floor(minutesAgo(30) / 1000),
        agent: 'codex',
        chatTitle: null,
        steps: [
          step({
            id: STASH_ID,
            label: 'git stash',
            command: 'git stash push -m wip',
            createdAt: minutesAgo(31),
          }),
        ],
      },
    ],
  };
}

describe('Version History webview: checkpoint steps (Vite-built page in real Chromium, fake host)', function () {
  this.timeout(60_000);
  const host = useFakeHostPage();

  const show = () =>
    host().showView(
      versions(
        [
          row({ kind: 'agent', label: 'Stash the experiment', oid: VERSION_OID, isHead: true, turn: turn() }),
          row({ kind: 'user', label: 'Initial commit' }),
        ],
        model(),
      ),
    );
  const steps = () =>
    host().page.getByRole('list', { name: 'Commands the agent ran that a checkpoint was taken before' });

  it('lists each step under its turn: what ran, the command as written, the files gone or changed, ignored files saved', async () => {
    await show();
    await steps().first().waitFor();
    assert.equal(await steps().count(), 2, 'one list under the running turn, one under the finished turn');
    const running = steps().nth(0).getByRole('listitem');
    assert.deepEqual(await running.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label'))), [
      'Before git reset --hard, 2 changed since, 3 minutes ago',
      'Before git clean -x, 4 deleted since, 2 ignored files saved, 1 minute ago',
    ]);
    assert.deepEqual(await running.locator('.command').allTextContents(), [
      '$ cd src && git reset --hard',
      '$ git clean -fdx',
    ]);
    assert.equal(
      await running.nth(1).locator('.files').textContent(),
      'Deleted: .env, debug.log, notes/todo.md, src/new-feature.ts',
    );
    const finished = steps().nth(1).getByRole('listitem');
    assert.equal(
      await finished.first().getAttribute('aria-label'),
      'Before git stash, nothing it had was missing at the end, 31 minutes ago',
    );
    // Under their turns: the running turn's steps right below it, the finished turn's below its version line.
    const turnBox = await host().page.locator('.open-turns .turn').first().boundingBox();
    const runningBox = await steps().nth(0).boundingBox();
    assert.ok(turnBox && runningBox && runningBox.y >= turnBox.y + turnBox.height - 0.5);
    const doneLine = host().page.getByRole('listitem', { name: /^Agent turn: Stash the experiment, version ccccccc/ });
    const doneBox = await doneLine.boundingBox();
    const finishedBox = await steps().nth(1).boundingBox();
    assert.ok(doneBox && finishedBox && finishedBox.y >= doneBox.y + doneBox.height - 0.5);
    const list = await host().page.getByRole('listbox').boundingBox();
    assert.ok(list && finishedBox.y + finishedBox.height <= list.y + 0.5, 'above the versions');
    await host().page.setViewportSize({ width: 1400, height: 900 });
    await screenshot(host().page, 'checkpoint-steps-wide');
    await host().page.setViewportSize({ width: 380, height: 700 });
    await screenshot(host().page, 'checkpoint-steps');
  });

  it('Restore to Before This Command posts the checkpoint’s id, once per double click; busy disables it', async () => {
    await show();
    await steps().first().waitFor();
    const button = host().page.getByRole('button', { name: 'Restore to Before This Command: git clean -x' });
    assert.equal(await button.getAttribute('title'), 'Restore to Before This Command');
    await button.dblclick();
    await host().page.getByRole('button', { name: 'Restore to Before This Command: git stash' }).click();
    await host().page.waitForFunction(
      () => window.__posted.filter((m) => m.type === 'restoreBeforeCommand').length >= 2,
    );
    const posted = (await host().posted()).filter((m) => m.type === 'restoreBeforeCommand');
    assert.deepEqual(
      posted.map((m) => m.checkpointId),
      [CLEAN_ID, STASH_ID],
    );
    await host().send({ type: 'didChangeBusy', busy: 'Restore to Before This Command…' });
    await host().page.waitForFunction(() => document.querySelectorAll('.steps button:disabled').length === 3);
  });

  it('an error reply is shown; a step whose host model is malformed is not rendered at all', async () => {
    await show();
    await steps().first().waitFor();
    await host().failNext('restoreBeforeCommand', 'This step is no longer listed in Version History.');
    await host().page.getByRole('button', { name: 'Restore to Before This Command: git reset --hard' }).click();
    await host().page.getByRole('alert').getByText('This step is no longer listed in Version History.').waitFor();
    const bad = model();
    (bad.openTurns[0].steps![0] as unknown as { id: string }).id = 'not-a-checkpoint';
    await host().showView(versions([row()], bad));
    // The whole notification is refused (the page keeps the model it had), as for any malformed host message.
    assert.equal(await steps().count(), 2);
  });
});
