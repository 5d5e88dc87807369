/**
 * Turn semantics (issues 23 #1, 24, 25; docs/product-contract.md §5.1, §8): a turn that changed nothing never blocks
 * Undo, a cancelled turn's partial work stays its own when a later turn began on top of it, a completed turn whose
 * version could not be made is undone like a cancelled one, and what the pane lists above the versions is what the
 * status bar counts. Real git in temp repositories, the real store, through the VersionHistory façade; the same Undo
 * sequences through the shipped CLI bundle (node dist/cli.js) with exact trees. Every test checks that nothing was
 * lost.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { contextOf } from '../../src/core/repoContextOf';
import { getTurn, type TurnRow } from '../../src/core/turns/turnRecords';
import { VersionHistory } from '../../src/core/versionHistory';
import type { OpenTurn } from '../../src/vscode/historyView/protocol';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  read,
  subjectOf,
  write,
} from '../support/gitFixtures';
import { DIST_CLI, dist, distBegin, distJson, porcelain, treeOf, worktreeTree } from '../support/turnFixtures';

const INTERRUPTED = '[Interrupted] Saved partial changes before restoring to an earlier version';

/** A repository with the user's uncommitted edit (README.md) and untracked file (notes.txt). */
function repoWithUserWork(): string {
  const repo = makeRepo();
  write(repo, 'src.txt', 'original source\n');
  git(repo, 'add', 'src.txt');
  git(repo, 'commit', '-q', '-m', 'source');
  write(repo, 'README.md', '# demo\nthe user is editing this\n');
  write(repo, 'notes.txt', "the user's untracked notes\n");
  return repo;
}

async function turnRow(history: VersionHistory, id: string): Promise<TurnRow> {
  const row = await contextOf(history).store.read((r) => getTurn(r, id));
  assert.ok(row, `turn ${id} is recorded`);
  return row;
}

async function openTurns(
  history: VersionHistory,
): Promise<Pick<OpenTurn, 'id' | 'state' | 'filesChanged' | 'canUndo'>[]> {
  const view = await history.versionsView(50);
  assert.equal(view.kind, 'versions');
  return (view.kind === 'versions' ? (view.openTurns ?? []) : []).map(({ id, state, filesChanged, canUndo }) => ({
    id,
    state,
    filesChanged,
    canUndo,
  }));
}

/** The checked-out branch's name. */
function branchOf(repo: string): string {
  return execFileSync('git', ['symbolic-ref', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
}

describe('turn semantics: no-change turns, partial work of cancelled turns, turns without a version (real git, real store)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  it('a question after an edit turn is listed quietly, never counted, never Undo’s target, and never hides the turn before it', async () => {
    const repo = repoWithUserWork();
    const history = await VersionHistory.open(repo);
    try {
      const before = contentInventory(repo);
      const edit = await history.beginTurn({ chatId: 'c', prompt: 'Add the feature' });
      write(repo, 'feature.ts', 'export const feature = true;\n');
      assert.ok((await history.endTurn(edit.turnId, 'completed')).version);
      const question = await history.beginTurn({ chatId: 'c', prompt: 'Explain this code' });
      const answered = await history.endTurn(question.turnId, 'completed');
      assert.deepEqual([answered.version, answered.reason], [null, 'no-changes']);
      assert.deepEqual(await openTurns(history), [
        { id: question.turnId, state: 'no-change', filesChanged: null, canUndo: false },
      ]);
      assert.deepEqual(await history.historyCounts(), { undo: 1, redo: 0 }, 'the question is not counted');
      for (let i = 0; i < 2; i++) {
        // Every plain Undo skips it: never `no-change` for the question.
        const preview = await history.preview({ kind: 'undo' });
        assert.equal(preview.turnId, edit.turnId);
      }
      const undone = await history.undo();
      assert.deepEqual([undone.result, undone.turnId], ['restored', edit.turnId]);
      assert.equal(treeOf(repo), treeOf(repo, edit.baseCommit), 'exactly the pre-turn state');
      assert.equal(read(repo, 'README.md'), '# demo\nthe user is editing this\n');
      assert.equal(read(repo, 'notes.txt'), "the user's untracked notes\n");
      assert.equal(fs.existsSync(path.join(repo, 'feature.ts')), false);
      assert.equal((await history.undo()).result, 'nothing-to-undo');
      // Undone by its id, the question says it changed nothing, and nothing moves.
      const at = head(repo);
      assert.deepEqual(await history.undo(question.turnId), { result: 'no-change', turnId: question.turnId });
      assert.equal(head(repo), at);
      assert.deepEqual(await history.historyCounts(), { undo: 0, redo: 1 });
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('interrupted turn, then a "never mind" turn that changes nothing on top of its partial work: plain Undo saves that work as [Interrupted] and restores the interrupted turn’s base; the next Undo never brings it back', async () => {
    const repo = repoWithUserWork();
    const history = await VersionHistory.open(repo);
    try {
      const before = contentInventory(repo);
      const first = await history.beginTurn({ chatId: 'c', prompt: 'Write the greeter' });
      write(repo, 'greeter.ts', 'export const greet = () => "hi";\n');
      await history.endTurn(first.turnId, 'completed');
      const interrupted = await history.beginTurn({ chatId: 'c', prompt: 'Refactor everything' });
      write(repo, 'src.txt', 'half refactored\n');
      write(repo, 'half.ts', 'export const half = 1;\n');
      await history.endTurn(interrupted.turnId, 'cancelled');
      assert.equal((await turnRow(history, interrupted.turnId)).no_version_reason, 'not-completed');
      const partial = worktreeTree(repo);
      for (const oid of contentInventory(repo)) before.add(oid);
      const neverMind = await history.beginTurn({ chatId: 'c', prompt: 'never mind' });
      assert.equal(treeOf(repo, neverMind.baseCommit), partial, 'its base snapshot holds the partial work');
      assert.equal((await history.endTurn(neverMind.turnId, 'completed')).reason, 'no-changes');
      assert.deepEqual(await openTurns(history), [
        { id: neverMind.turnId, state: 'no-change', filesChanged: null, canUndo: false },
        { id: interrupted.turnId, state: 'stopped', filesChanged: 2, canUndo: true },
      ]);
      assert.deepEqual(await history.historyCounts(), { undo: 2, redo: 0 }, 'the stopped turn and the version');

      const undone = await history.undo();
      assert.deepEqual([undone.result, undone.turnId], ['restored', interrupted.turnId]);
      assert.ok(undone.preserved, 'the partial work was saved first');
      assert.equal(subjectOf(repo, undone.preserved), INTERRUPTED);
      assert.equal(treeOf(repo, undone.preserved), partial, '[Interrupted] holds exactly the partial work');
      assert.equal(treeOf(repo), treeOf(repo, interrupted.baseCommit), 'the tree is the interrupted turn’s base');
      assert.equal(read(repo, 'src.txt'), 'original source\n');
      assert.equal(read(repo, 'README.md'), '# demo\nthe user is editing this\n');
      assert.equal(porcelain(repo), '');
      assert.deepEqual(await openTurns(history), []);

      // The next plain Undo is the turn before: the partial work does not come back.
      const next = await history.undo();
      assert.deepEqual([next.result, next.turnId], ['restored', first.turnId]);
      assert.equal(treeOf(repo), treeOf(repo, first.baseCommit));
      assert.equal(fs.existsSync(path.join(repo, 'half.ts')), false);
      assert.equal(read(repo, 'src.txt'), 'original source\n');
      assert.equal((await history.undo()).result, 'nothing-to-undo');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('a cancelled turn that changed nothing (stopped before its first edit) never blocks Undo, on a clean tree and on the user’s uncommitted edit', async () => {
    for (const dirty of [false, true]) {
      const repo = makeRepo();
      const history = await VersionHistory.open(repo);
      try {
        const before = contentInventory(repo);
        const t0 = await history.beginTurn({ chatId: 'c', prompt: 'first' });
        write(repo, 'a.txt', 'a\n');
        await history.endTurn(t0.turnId, 'completed');
        if (dirty) write(repo, 'README.md', '# demo\nuser edit\n');
        for (const oid of contentInventory(repo)) before.add(oid);
        const stopped = await history.beginTurn({ chatId: 'c', prompt: 'stopped at once' });
        await history.endTurn(stopped.turnId, 'cancelled');
        assert.equal((await turnRow(history, stopped.turnId)).no_version_reason, 'no-changes', `dirty: ${dirty}`);
        const t2 = await history.beginTurn({ chatId: 'c', prompt: 'second' });
        write(repo, 'b.txt', 'b\n');
        await history.endTurn(t2.turnId, 'completed');
        assert.equal((await history.undo()).turnId, t2.turnId);
        const second = await history.undo();
        assert.deepEqual([second.result, second.turnId], ['restored', t0.turnId], `dirty: ${dirty}`);
        assert.equal(treeOf(repo), treeOf(repo, t0.baseCommit));
        assert.equal((await history.undo()).result, 'nothing-to-undo');
        assertNothingLost(repo, before);
      } finally {
        await history.close();
      }
    }
  });

  it('a completed turn whose version could not be made (the branch’s ref lock held at its end) is listed above the versions and undone like a cancelled one: its work saved as [Interrupted] first', async () => {
    const repo = repoWithUserWork();
    const history = await VersionHistory.open(repo);
    try {
      const before = contentInventory(repo);
      const turn = await history.beginTurn({ chatId: 'c', prompt: 'Write the parser' });
      write(repo, 'parser.ts', 'export const parse = () => 1;\n');
      // Another git process moving the branch (an index.lock alone no longer stops a version: it is waited out,
      // and the index installed later).
      const refLock = path.join(repo, '.git', 'refs', 'heads', `${branchOf(repo)}.lock`);
      fs.writeFileSync(refLock, '');
      const ended = await history.endTurn(turn.turnId, 'completed');
      fs.rmSync(refLock);
      assert.equal(ended.version, null);
      assert.ok(ended.reason, 'the turn recorded why it has no version');
      const work = worktreeTree(repo);
      for (const oid of contentInventory(repo)) before.add(oid);
      assert.deepEqual(await openTurns(history), [
        { id: turn.turnId, state: 'unrecorded', filesChanged: 1, canUndo: true },
      ]);
      assert.deepEqual(await history.historyCounts(), { undo: 1, redo: 0 });
      const undone = await history.undo();
      assert.equal(undone.result, 'restored');
      assert.ok(undone.preserved, 'its work was saved, not refused as "uncommitted changes"');
      assert.equal(treeOf(repo, undone.preserved), work);
      assert.equal(treeOf(repo), treeOf(repo, turn.baseCommit));
      assert.equal(fs.existsSync(path.join(repo, 'parser.ts')), false);
      assert.equal(read(repo, 'notes.txt'), "the user's untracked notes\n");
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('the running turn is listed live above the versions with its files changed so far, counted, and Undo stops it and saves its work', async () => {
    const repo = repoWithUserWork();
    const history = await VersionHistory.open(repo);
    try {
      const before = contentInventory(repo);
      const running = await history.beginTurn({ chatId: 'c', prompt: 'Long task', agent: 'claude-code' });
      assert.deepEqual(await openTurns(history), [
        { id: running.turnId, state: 'running', filesChanged: 0, canUndo: true },
      ]);
      assert.deepEqual(await history.historyCounts(), { undo: 1, redo: 0 });
      write(repo, 'one.ts', '1\n');
      write(repo, 'src.txt', 'edited by the agent\n');
      fs.rmSync(path.join(repo, 'notes.txt')); // the agent deletes the user's untracked file
      assert.deepEqual(await openTurns(history), [
        { id: running.turnId, state: 'running', filesChanged: 3, canUndo: true },
      ]);
      const changes = await history.turnChangesSoFar(running.turnId);
      assert.equal(changes.base, running.baseCommit);
      assert.deepEqual(changes.files, [
        { path: 'notes.txt', status: 'deleted' },
        { path: 'one.ts', status: 'added' },
        { path: 'src.txt', status: 'modified' },
      ]);
      // The user's own pre-turn edit is in the base: not a change of the turn.
      write(repo, 'README.md', '# demo\nthe user is editing this\n');
      assert.equal((await openTurns(history))[0].filesChanged, 3);
      const work = worktreeTree(repo);
      for (const oid of contentInventory(repo)) before.add(oid);
      const undone = await history.undo();
      assert.deepEqual([undone.result, undone.turnId], ['restored', running.turnId]);
      assert.equal(treeOf(repo, undone.preserved), work);
      assert.equal(treeOf(repo), treeOf(repo, running.baseCommit));
      assert.equal(read(repo, 'notes.txt'), "the user's untracked notes\n");
      assert.equal((await turnRow(history, running.turnId)).terminal_outcome, 'cancelled');
      assert.deepEqual(await openTurns(history), []);
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('CLI (dist/cli.js): interrupted, "never mind", undo --turn <interrupted>, then plain undo: the partial work never comes back; exact trees, the user’s edit and untracked file kept', async () => {
    assert.ok(fs.existsSync(DIST_CLI), 'dist/cli.js is missing: run `npm run build` first');
    const repo = repoWithUserWork();
    const before = contentInventory(repo);
    const firstBase = worktreeTree(repo); // the first turn's base snapshot: the user's edit and file included
    const first = distBegin(repo, 'chat', 'Write the greeter');
    write(repo, 'greeter.ts', 'export const greet = () => "hi";\n');
    const firstEnd = distJson<{ version: string }>(repo, ['turn', 'end', first, '--outcome', 'completed']);
    assert.ok(firstEnd.version);
    const userState = worktreeTree(repo);
    const interrupted = distBegin(repo, 'chat', 'Refactor everything');
    write(repo, 'src.txt', 'half refactored\n');
    write(repo, 'half.ts', 'export const half = 1;\n');
    distJson(repo, ['turn', 'end', interrupted, '--outcome', 'cancelled']);
    const partial = worktreeTree(repo);
    for (const oid of contentInventory(repo)) before.add(oid);
    const neverMind = distBegin(repo, 'chat', 'never mind');
    assert.deepEqual(distJson(repo, ['turn', 'end', neverMind, '--outcome', 'completed']).version, null);

    const undone = distJson<{ result: string; turnId: string; preserved: string }>(repo, [
      'undo',
      '--turn',
      interrupted,
    ]);
    assert.deepEqual([undone.result, undone.turnId], ['restored', interrupted]);
    assert.equal(treeOf(repo, undone.preserved), partial, '[Interrupted] holds the partial work');
    assert.equal(treeOf(repo), userState, 'the tree before the interrupted turn, the user’s edit and file included');
    assert.equal(read(repo, 'README.md'), '# demo\nthe user is editing this\n');
    assert.equal(read(repo, 'notes.txt'), "the user's untracked notes\n");
    assert.equal(porcelain(repo), '');

    // The "never mind" turn changed nothing: plain Undo goes to the turn before, never to its base (the partial work).
    const next = distJson<{ result: string; turnId: string }>(repo, ['undo']);
    assert.deepEqual([next.result, next.turnId], ['restored', first]);
    assert.equal(treeOf(repo), firstBase);
    assert.equal(fs.existsSync(path.join(repo, 'half.ts')), false);
    assert.equal(read(repo, 'src.txt'), 'original source\n');
    assert.deepEqual(distJson(repo, ['undo']), { result: 'nothing-to-undo' });
    // Undo of the "never mind" turn by its id: it changed nothing, so nothing moves (its base would bring the work back).
    const at = head(repo);
    assert.equal(distJson<{ result: string }>(repo, ['undo', '--turn', neverMind]).result, 'no-change');
    assert.equal(head(repo), at);
    assert.equal(fs.existsSync(path.join(repo, 'half.ts')), false);
    assertNothingLost(repo, before);
  });

  it('CLI (dist/cli.js): a completed turn with no version (the branch’s ref lock held at its end) is undone like a cancelled one, never refused as "uncommitted changes"', () => {
    const repo = repoWithUserWork();
    const before = contentInventory(repo);
    const userState = worktreeTree(repo);
    const turn = distBegin(repo, 'chat', 'Write the parser');
    write(repo, 'parser.ts', 'export const parse = () => 1;\n');
    const refLock = path.join(repo, '.git', 'refs', 'heads', `${branchOf(repo)}.lock`);
    fs.writeFileSync(refLock, '');
    const ended = dist(repo, ['turn', 'end', turn, '--outcome', 'completed', '--json']);
    fs.rmSync(refLock);
    assert.equal(ended.code, 0, ended.stderr);
    assert.equal((JSON.parse(ended.stdout) as { version: string | null }).version, null);
    const work = worktreeTree(repo);
    for (const oid of contentInventory(repo)) before.add(oid);
    const undone = distJson<{ result: string; preserved: string }>(repo, ['undo']);
    assert.equal(undone.result, 'restored');
    assert.equal(treeOf(repo, undone.preserved), work);
    assert.equal(treeOf(repo), userState);
    assert.equal(porcelain(repo), '');
    assertNothingLost(repo, before);
  });
});
