import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RepoContext } from '../../src/core/context';
import { resolveRepository } from '../../src/core/git/repository';
import type { OperationRow } from '../../src/core/operations/operationRecords';
import { prewriteRestoreCommit, writeRestoreCommit } from '../../src/core/restore/restoreEffects';
import { VersionHistory } from '../../src/core/versionHistory';
import { cleanupTempDirs, git, head, makeRepo, write } from '../support/gitFixtures';
import { contextOf } from '../../src/core/repoContextOf';

/** Records in the store's journal file (each starts with the record magic; no compaction runs in these few writes). */
function journalRecords(history: VersionHistory): number {
  return (
    fs
      .readFileSync(path.join(contextOf(history).repo.stateDir, 'state.journal'))
      .toString('latin1')
      .split('AVHR').length - 1
  );
}

/**
 * The restore commit written ahead while planning waits for the probe (restoreEffects.prewriteRestoreCommit):
 * the saga takes it only when it is exactly the commit it would write, on real git objects.
 */
describe('restore commit written ahead of the saga (real git)', () => {
  after(cleanupTempDirs);

  async function setup() {
    const dir = makeRepo();
    write(dir, 'a.txt', 'one\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'base');
    const base = head(dir);
    write(dir, 'a.txt', 'two\n');
    git(dir, 'commit', '-q', '-am', 'second');
    const ctx = { repo: await resolveRepository(dir) } as RepoContext;
    const op: OperationRow = {
      id: 'op-1',
      kind: 'undo',
      phase: 'preparing',
      status: 'in-flight',
      turn_id: 'turn-1',
      source_branch: 'main',
      source_head: head(dir),
      target_commit: base,
      scope: 'everything',
      scope_path: null,
      preservation: 'none',
      preserve_commit: null,
      restore_commit: null,
      attempts: 1,
      last_error: null,
      started_at: 1_700_000_000_000,
      updated_at: 1_700_000_000_000,
    };
    return { dir, ctx, op, base };
  }

  it('the same commit is taken as written ahead; it is the commit the saga writes by itself', async () => {
    const { dir, ctx, op, base } = await setup();
    const ahead = prewriteRestoreCommit(ctx, op);
    const used = await writeRestoreCommit(ctx, op, undefined, ahead);
    assert.equal(used, await ahead.commit);
    assert.equal(used, await writeRestoreCommit(ctx, op), 'deterministic: the saga alone makes the same oid');
    assert.equal(git(dir, 'rev-parse', `${used}^{tree}`).trim(), git(dir, 'rev-parse', `${base}^{tree}`).trim());
    assert.equal(git(dir, 'rev-parse', `${used}^`).trim(), op.source_head);
    assert.match(git(dir, 'log', '-1', '--format=%B', used), /Agent-Operation: op-1\nAgent-Undo-Turn: turn-1/);
  });

  it('a commit written ahead for another parent, operation, date or content is never taken', async () => {
    const { dir, ctx, op, base } = await setup();
    const variants: OperationRow[] = [
      { ...op, source_head: base }, // the branch moved between the guess and the probe
      { ...op, id: 'op-2' },
      { ...op, started_at: op.started_at + 5_000 },
      { ...op, preserve_commit: base },
    ];
    for (const other of variants) {
      const ahead = prewriteRestoreCommit(ctx, other);
      const written = await writeRestoreCommit(ctx, op, undefined, ahead);
      assert.notEqual(written, await ahead.commit);
      assert.equal(written, await writeRestoreCommit(ctx, op));
    }
    const revert = await writeRestoreCommit(
      ctx,
      op,
      { tree: `${op.source_head}^{tree}`, subject: '[Revert] Undid turn "x"' },
      prewriteRestoreCommit(ctx, op),
    );
    assert.equal(git(dir, 'log', '-1', '--format=%s', revert).trim(), '[Revert] Undid turn "x"');
  });

  it('a commit that could not be written ahead is written by the saga', async () => {
    const { dir, ctx, op } = await setup();
    const broken = prewriteRestoreCommit(ctx, { ...op, target_commit: 'f'.repeat(40) });
    assert.equal(await broken.commit, null);
    const fixed = { ...op, target_commit: 'f'.repeat(40) };
    // Same spec as the failed one: the saga tries again itself and reports git's failure as it would have.
    await assert.rejects(writeRestoreCommit(ctx, fixed, undefined, broken));
    assert.ok(git(dir, 'rev-parse', 'HEAD'));
  });

  it('an Undo leaves one restore commit on the branch and its operation completed, after three store writes', async () => {
    const dir = makeRepo();
    write(dir, 'a.txt', 'one\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'base');
    const history = await VersionHistory.open(dir);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'edit a' });
      write(dir, 'a.txt', 'agent\n');
      const { version } = await history.endTurn(turnId, 'completed');
      const journalBefore = journalRecords(history);
      const undone = await history.undo(turnId);
      assert.equal(undone.result, 'restored');
      assert.equal(git(dir, 'rev-parse', 'HEAD^').trim(), version);
      assert.equal(git(dir, 'show', 'HEAD:a.txt'), 'one\n');
      const op = await contextOf(history).store.read((r) =>
        r.get<{ phase: string; status: string }>('SELECT phase, status FROM operations'),
      );
      assert.deepEqual(op, { phase: 'completed', status: 'completed' });
      assert.equal(
        journalRecords(history) - journalBefore,
        3,
        'admission, update-worktree, the final turn-store write',
      );
    } finally {
      await history.close();
    }
  });
});
