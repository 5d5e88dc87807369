/**
 * Undo of a turn without a version (issue 25): a running turn, a cancelled one, or a completed one whose version
 * could not be made asks the same "work landed after this turn" question as a completed turn, before anything
 * changes (before a running turn is even ended). It has no version of its own to reverse, so the one way is Restore
 * Everything to Before This Turn, confirmed; Undo Only This Turn is refused with the reason. Real git, the real
 * store, the façade and the shipped CLI bundle; nothing lost.
 */
import * as assert from 'node:assert/strict';
import { contextOf } from '../../src/core/repoContextOf';
import { getTurn } from '../../src/core/turns/turnRecords';
import { VersionHistory } from '../../src/core/versionHistory';
import { expectReason, repoPicture } from '../support/assertions';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  read,
  write,
} from '../support/gitFixtures';
import { dist, distBegin, distJson, porcelain, treeOf, worktreeTree } from '../support/turnFixtures';

/** Chat A's turn (left as `end` says), then chat B's completed turn on top of it. */
async function laterTurnOfAnotherChat(
  end: 'running' | 'cancelled',
): Promise<{ repo: string; history: VersionHistory; a: string; aBase: string; b: string; before: Set<string> }> {
  const repo = makeRepo();
  const history = await VersionHistory.open(repo);
  const before = contentInventory(repo);
  const a = await history.beginTurn({ chatId: 'chat-a', prompt: 'A: write a' });
  write(repo, 'a.txt', "A's partial work\n");
  if (end === 'cancelled') await history.endTurn(a.turnId, 'cancelled');
  const b = await history.beginTurn({ chatId: 'chat-b', prompt: 'B: write b' });
  write(repo, 'b.txt', "B's work\n");
  assert.ok((await history.endTurn(b.turnId, 'completed')).version);
  for (const oid of contentInventory(repo)) before.add(oid);
  return { repo, history, a: a.turnId, aBase: a.baseCommit, b: b.turnId, before };
}

describe('Undo of a running or cancelled turn asks about the work that landed after it (real git, real store)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  for (const end of ['running', 'cancelled'] as const) {
    it(`a ${end} turn of chat A, then a completed turn of chat B: asked first (nothing changed, A still ${end}), then restored everything once confirmed`, async () => {
      const { repo, history, a, aBase, b, before } = await laterTurnOfAnotherChat(end);
      try {
        const preview = await history.preview({ kind: 'undo', turnId: a });
        assert.deepEqual(preview.later, {
          otherChatTurns: 1,
          sameChatTurns: 0,
          userCommits: 0,
          reverts: 0,
          uncommitted: false,
        });
        assert.deepEqual(preview.onlyTurn, { conflicts: [], noVersion: true });
        const picture = repoPicture(repo);
        const refused = await expectReason(history.undo(a), 'confirmation-required');
        assert.match(
          refused.message,
          /^Work landed after this turn: 1 turn of another chat\. This turn made no version/,
        );
        assert.equal(refused.details.choice, false, 'no Undo Only This Turn to choose');
        assert.deepEqual(repoPicture(repo), picture, 'nothing changed');
        const row = () => contextOf(history).store.read((r) => getTurn(r, a)!);
        assert.equal((await row()).recovery, end === 'running' ? 'running' : 'terminal', 'not even ended');
        const only = await expectReason(history.undo(a, { only: 'turn' }), 'invalid-input');
        assert.match(only.message, /made no version of its own/);
        assert.deepEqual(repoPicture(repo), picture);

        const undone = await history.undo(a, { confirmUserCommits: true });
        assert.deepEqual([undone.result, undone.turnId], ['restored', a]);
        assert.equal(treeOf(repo), treeOf(repo, aBase), 'everything since A began is taken away');
        assert.equal(porcelain(repo), '');
        assert.equal((await row()).terminal_outcome, 'cancelled');
        assert.notEqual(git(repo, 'log', '--format=%H', '--grep', `Agent-Turn: ${b}`).trim(), '', 'B stays in history');
        assertNothingLost(repo, before);
      } finally {
        await history.close();
      }
    });
  }

  it('with nothing after it, a cancelled turn’s Undo asks nothing (its own partial work is not later work)', async () => {
    const repo = makeRepo();
    write(repo, 'README.md', '# demo\nuser edit\n');
    const history = await VersionHistory.open(repo);
    try {
      const before = contentInventory(repo);
      const t = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, 'x.txt', 'partial\n');
      await history.endTurn(t.turnId, 'cancelled');
      for (const oid of contentInventory(repo)) before.add(oid);
      const preview = await history.preview({ kind: 'undo' });
      assert.equal(preview.turnId, t.turnId);
      assert.deepEqual(preview.later, {
        otherChatTurns: 0,
        sameChatTurns: 0,
        userCommits: 0,
        reverts: 0,
        uncommitted: false,
      });
      assert.equal(preview.onlyTurn, undefined);
      const undone = await history.undo();
      assert.equal(undone.result, 'restored');
      assert.equal(read(repo, 'README.md'), '# demo\nuser edit\n');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('CLI (dist/cli.js): undo --turn <cancelled A> after B completed is refused with the flags to confirm; --yes restores A’s base', () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const aBase = worktreeTree(repo);
    const a = distBegin(repo, 'chat-a', 'A: write a');
    write(repo, 'a.txt', "A's partial work\n");
    distJson(repo, ['turn', 'end', a, '--outcome', 'cancelled']);
    const b = distBegin(repo, 'chat-b', 'B: write b');
    write(repo, 'b.txt', "B's work\n");
    assert.ok(distJson<{ version: string }>(repo, ['turn', 'end', b, '--outcome', 'completed']).version);
    for (const oid of contentInventory(repo)) before.add(oid);
    const picture = repoPicture(repo);
    const refused = dist(repo, ['undo', '--turn', a, '--json']);
    assert.equal(refused.code, 1);
    const error = (JSON.parse(refused.stdout) as { error: { reason: string; message: string } }).error;
    assert.equal(error.reason, 'confirmation-required');
    assert.equal(
      error.message,
      'Work landed after this turn: 1 turn of another chat. This turn made no version of its own, so Undo restores ' +
        'everything to before it and takes that work away too (it stays in history). Run again with --yes to ' +
        'continue; nothing was changed.',
    );
    assert.deepEqual(repoPicture(repo), picture, 'nothing changed');
    const undone = distJson<{ result: string; turnId: string }>(repo, ['undo', '--turn', a, '--yes']);
    assert.deepEqual([undone.result, undone.turnId], ['restored', a]);
    assert.equal(treeOf(repo), aBase);
    assertNothingLost(repo, before);
  });
});
