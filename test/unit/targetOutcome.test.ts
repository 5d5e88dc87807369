import * as assert from 'node:assert/strict';
import { preservationFor } from '../../src/core/restore/targetOutcome';
import { DurableStore } from '../../src/core/store/durableStore';
import type { TurnRow } from '../../src/core/turns/turnRecords';
import { cleanupTempDirs, tempDir } from '../support/gitFixtures';

describe('Undo preservation decision (durable outcome and the narrow legacy rule)', () => {
  let store: DurableStore;
  beforeEach(async () => {
    ({ store } = await DurableStore.open(tempDir()));
    await store.transaction((tx) => tx.run("INSERT INTO chats (id, created_at, updated_at) VALUES ('c', 0, 0)"));
  });
  afterEach(async () => {
    await store.close();
    cleanupTempDirs();
  });

  const insert = (id: string, seq: number, fields: Partial<TurnRow>) =>
    store.transaction((tx) =>
      tx.run(
        'INSERT INTO turns (id, chat_id, seq, prompt, recovery, terminal_outcome, version_commit, no_version_reason, ' +
          "created_at, ended_at) VALUES (?, 'c', ?, 'p', ?, ?, ?, ?, ?, ?)",
        [
          id,
          seq,
          fields.recovery ?? 'terminal',
          fields.terminal_outcome ?? null,
          fields.version_commit ?? null,
          fields.no_version_reason ?? null,
          fields.created_at ?? 0,
          fields.ended_at ?? null,
        ],
      ),
    );
  const decide = (id: string) =>
    store.read((r) => preservationFor(r, r.get<TurnRow>('SELECT * FROM turns WHERE id = ?', [id])!));

  it('a running turn is cancelled by Undo (active-cancel); cancelled and errored outcomes preserve; completed never does', async () => {
    await insert('running', 1, { recovery: 'running' });
    await insert('cancelled', 2, { terminal_outcome: 'cancelled', ended_at: 5 });
    await insert('errored', 3, { terminal_outcome: 'errored', ended_at: 6 });
    await insert('completed', 4, { terminal_outcome: 'completed', ended_at: 7 });
    assert.equal(await decide('running'), 'active-cancel');
    assert.equal(await decide('cancelled'), 'durable-cancelled-turn');
    assert.equal(await decide('errored'), 'durable-cancelled-turn');
    assert.equal(await decide('completed'), 'none');
  });

  it('a legacy NULL outcome counts as cancelled only when superseded by the next prompt while running, with no version', async () => {
    await insert('legacy-interrupted', 1, { created_at: 10, ended_at: 30 });
    await insert('next', 2, { created_at: 20, ended_at: 40, terminal_outcome: 'completed' });
    assert.equal(await decide('legacy-interrupted'), 'durable-cancelled-turn');
  });

  it('a legacy NULL outcome stays unknown (no preservation) otherwise: dirtiness or a missing commit alone never count', async () => {
    await insert('legacy-alone', 1, { created_at: 10, ended_at: 30 });
    assert.equal(await decide('legacy-alone'), 'none', 'no later turn: unknown');
    await insert('legacy-with-version', 2, { created_at: 40, ended_at: 60, version_commit: 'a'.repeat(40) });
    await insert('after-version', 3, { created_at: 50, ended_at: 70 });
    assert.equal(await decide('legacy-with-version'), 'none', 'it made a version: not cancelled');
    await insert('legacy-finished-first', 4, { created_at: 80, ended_at: 90 });
    await insert('later', 5, { created_at: 100, ended_at: 110 });
    assert.equal(await decide('legacy-finished-first'), 'none', 'the next turn began after it ended');
  });

  it('a completed turn whose version could not be made is undone like a cancelled one (issue 25); no-changes is not', async () => {
    const failures = ['index-locked', 'ref-update-refused', 'git-failed', 'interrupted', 'recovery-required'] as const;
    for (const [i, reason] of failures.entries()) {
      await insert(reason, i + 1, { terminal_outcome: 'completed', no_version_reason: reason, ended_at: 5 });
      assert.equal(await decide(reason), 'durable-cancelled-turn', reason);
    }
    await insert('nothing', 10, { terminal_outcome: 'completed', no_version_reason: 'no-changes', ended_at: 5 });
    assert.equal(await decide('nothing'), 'none', 'a turn that changed nothing has no work of its own to save');
    await insert('pending', 11, { terminal_outcome: 'completed', no_version_reason: 'pending', ended_at: 5 });
    assert.equal(await decide('pending'), 'none', 'reconciliation settles a pending turn first');
    await insert('made', 12, { terminal_outcome: 'completed', version_commit: 'b'.repeat(40), ended_at: 5 });
    assert.equal(await decide('made'), 'none');
  });
});
