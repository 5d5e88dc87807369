import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isAvhError } from '../../src/core/errors';
import type { RepoContext } from '../../src/core/context';
import { isUndoable, promoteUndoTarget, turnOfVersion, undoableTurns } from '../../src/core/restore/historyCounts';
import {
  ARCHIVE_FILE,
  DurableStore,
  SNAPSHOT_FILE,
  type StoreReader,
  type StoreTx,
} from '../../src/core/store/durableStore';
import { archivedCounts } from '../../src/core/store/archive';
import { rebuildFromTrailers } from '../../src/core/turns/rebuildFromTrailers';
import { countTurns, getTurn, openTurns, type TurnRow } from '../../src/core/turns/turnRecords';
import { VersionHistory } from '../../src/core/versionHistory';
import type { VersionRow, VersionsView } from '../../src/vscode/historyView/protocol';
import { assertNothingLost, cleanupTempDirs, contentInventory, head, makeRepo, write } from '../support/gitFixtures';
import { contextOf } from '../../src/core/repoContextOf';

const tmpDirs: string[] = [];
function tmpStoreDir(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-archive-'));
  tmpDirs.push(root);
  return path.join(root, 'agent-versions');
}

const KEEP = { archiveKeep: 40, archiveMargin: 20 };
const hex = (n: number) => n.toString(16).padStart(40, '0');
const TURN_COLUMNS =
  'id, chat_id, seq, prompt, agent, recovery, terminal_outcome, branch, base_head, base_commit, version_commit, no_version_reason, undone_by, created_at, ended_at';

/** Turn `i` of a varied history: three chats, two branches, some undone, some without a base, a few still open. */
function turnValues(i: number, total: number): (string | number | null)[] {
  const open = i >= total - 2; // the two newest turns are still running
  return [
    `turn-${String(i).padStart(6, '0')}`,
    `chat-${i % 3}`,
    Math.floor(i / 3) + 1,
    `prompt ${i}`,
    i % 2 ? 'claude-code' : 'copilot',
    open ? 'running' : 'terminal',
    open ? null : i % 7 === 0 ? 'cancelled' : 'completed',
    i % 5 === 0 ? 'feature' : 'main',
    hex(i),
    i % 13 === 0 ? null : hex(i + 1),
    open || i % 7 === 0 ? null : hex(i + 100_000),
    i % 7 === 0 ? 'not-completed' : null,
    i % 11 === 0 ? `op-${i}` : null,
    1_700_000_000_000 + i * 1000,
    open ? null : 1_700_000_000_500 + i * 1000,
  ];
}

function insertTurns(tx: StoreTx, from: number, to: number, total: number): void {
  for (let i = from; i < to; i++)
    tx.run(
      `INSERT INTO turns (${TURN_COLUMNS}) VALUES (${TURN_COLUMNS.split(',')
        .map(() => '?')
        .join(', ')})`,
      turnValues(i, total),
    );
}

async function populate(dir: string, total: number, options = {}): Promise<DurableStore> {
  const { store } = await DurableStore.open(dir, { compactEvery: 1, ...KEEP, ...options });
  await store.transaction((tx) => {
    for (let c = 0; c < 3; c++)
      tx.run('INSERT INTO chats (id, title, agent, created_at, updated_at) VALUES (?, ?, ?, ?, ?)', [
        `chat-${c}`,
        `Chat ${c}`,
        'claude-code',
        1,
        1,
      ]);
    insertTurns(tx, 0, total, total);
  });
  return store;
}

const withoutRowid = (row: TurnRow | undefined) => {
  if (!row) return row;
  const copy: Record<string, unknown> = { ...row };
  delete copy.rowid;
  return copy;
};

/** Every public read of turns, as the history sees them. */
function historyPicture(r: StoreReader) {
  const ids = r.all<{ id: string }>('SELECT id FROM turns ORDER BY created_at, rowid').map((t) => t.id);
  return {
    all: r.all<TurnRow>('SELECT * FROM turns ORDER BY created_at, rowid').map(withoutRowid),
    byId: ids.filter((_, n) => n % 17 === 0).map((id) => withoutRowid(getTurn(r, id))),
    byVersion: [0, 1, 50, 98, 150].map((i) => turnOfVersion(r, hex(i + 100_000))),
    undoMain: undoableTurns(r, 'main'),
    undoFeature: undoableTurns(r, 'feature'),
    running: openTurns(r).map((t) => t.id),
  };
}

/** What the status bar and `status` count, from the hot reader plus the archive's counts kept in the hot database. */
function hotCounts(r: StoreReader) {
  const archived = archivedCounts(r);
  return {
    total: countTurns(r).total + archived.rows,
    undoMain: undoableTurns(r, 'main').length + (archived.undoable.main ?? 0),
    undoFeature: undoableTurns(r, 'feature').length + (archived.undoable.feature ?? 0),
  };
}

async function waitForRotation(store: DurableStore): Promise<void> {
  // Rotation runs in the compaction job queued after the write; a read queued behind it waits for it.
  await store.read(() => undefined);
}

describe('History archive (real sql.js files)', function () {
  this.timeout(60_000);
  after(() => {
    for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('rotation moves old finished turns out; every read returns exactly what it returned before', async () => {
    const dir = tmpStoreDir();
    // With a large keep, nothing rotates: the "before" picture.
    const { store: plain } = await DurableStore.open(path.join(dir, '..', 'plain'), { compactEvery: 1 });
    await plain.transaction((tx) => {
      for (let c = 0; c < 3; c++)
        tx.run('INSERT INTO chats (id, title, agent, created_at, updated_at) VALUES (?, ?, ?, ?, ?)', [
          `chat-${c}`,
          `Chat ${c}`,
          'claude-code',
          1,
          1,
        ]);
      insertTurns(tx, 0, 300, 300);
    });
    const before = await plain.read(historyPicture);
    const beforeCounts = await plain.read(hotCounts);
    await plain.close();
    const plainSnapshotBytes = fs.statSync(path.join(dir, '..', 'plain', SNAPSHOT_FILE)).size;
    assert.equal(fs.existsSync(path.join(dir, '..', 'plain', ARCHIVE_FILE)), false, 'no rotation below keep + margin');

    const store = await populate(dir, 300);
    await waitForRotation(store);
    const hot = await store.read((r) => r.all<{ id: string; recovery: string }>('SELECT id, recovery FROM turns'));
    assert.ok(hot.length < 60, `hot table holds the newest turns only (${hot.length})`);
    assert.ok(
      hot.some((t) => t.recovery === 'running'),
      'running turns stay hot',
    );
    assert.ok(fs.existsSync(path.join(dir, ARCHIVE_FILE)));
    assert.equal(store.archiveLoaded, false, 'rotation leaves the archive unloaded');

    assert.deepEqual(await store.read(historyPicture, { history: true }), before);
    assert.deepEqual(await store.read(hotCounts), beforeCounts, 'counts from the hot database alone');
    await store.close();

    // A new process: the hot snapshot is small, and reads still see everything.
    assert.ok(
      fs.statSync(path.join(dir, SNAPSHOT_FILE)).size < plainSnapshotBytes,
      'the hot snapshot is smaller than the whole history',
    );
    const { store: again } = await DurableStore.open(dir, KEEP);
    assert.deepEqual(await again.read(historyPicture, { history: true }), before);
    assert.deepEqual(await again.read(hotCounts), beforeCounts);
    await again.close();
  });

  it('the turn, hook and gate path never loads the archive', async () => {
    const dir = tmpStoreDir();
    await (await populate(dir, 300)).close();
    const { store } = await DurableStore.open(dir, KEEP);
    // begin turn (next seq of its chat), end turn, the gate's reads, status.
    await store.transaction((tx) => {
      const seq =
        (tx.get<{ seq: number }>('SELECT MAX(seq) AS seq FROM turns WHERE chat_id = ?', ['chat-1'])?.seq ?? 0) + 1;
      assert.equal(seq, 100 + 1, "each chat's newest turn stays hot, so the next seq is right");
      tx.run(
        "INSERT INTO turns (id, chat_id, seq, prompt, recovery, branch, created_at) VALUES ('turn-new', 'chat-1', ?, 'p', 'accepted', 'main', 1800000000000)",
        [seq],
      );
    });
    await store.transaction((tx) =>
      tx.run(
        "UPDATE turns SET recovery = 'terminal', terminal_outcome = 'completed', ended_at = 1800000000001 WHERE id = 'turn-new'",
      ),
    );
    await store.read((r) => ({
      open: openTurns(r),
      counts: countTurns(r),
      undo: undoableTurns(r, 'main')[0],
      turn: getTurn(r, 'turn-new'),
    }));
    assert.equal(store.archiveLoaded, false);
    assert.ok(await store.read((r) => getTurn(r, 'turn-000003'), { history: true }));
    assert.equal(store.archiveLoaded, true, 'a history read loads it');
    await store.close();
  });

  it('Undo of an archived turn brings it back to the hot table first; it is read once and writes reach it', async () => {
    const dir = tmpStoreDir();
    const store = await populate(dir, 300);
    await waitForRotation(store);
    const target = 'turn-000004';
    assert.equal(await store.read((r) => getTurn(r, target)), undefined, 'archived');
    const countsBefore = await store.read(hotCounts);
    assert.equal(await store.promoteTurns(() => [target]), 1);
    assert.equal(await store.promoteTurns(() => [target]), 0, 'already hot');
    const row = await store.read((r) => getTurn(r, target));
    assert.equal(row?.prompt, 'prompt 4');
    assert.deepEqual(await store.read(hotCounts), countsBefore, 'counted once');
    assert.equal(
      await store.read((r) => r.get<{ n: number }>('SELECT COUNT(*) AS n FROM turns WHERE id = ?', [target])?.n, {
        history: true,
      }),
      1,
    );
    await store.transaction((tx) => tx.run('UPDATE turns SET undone_by = ? WHERE id = ?', ['op-undo', target]));
    assert.equal(
      (await store.read((r) => getTurn(r, target), { history: true }))?.undone_by,
      'op-undo',
      'the hot copy wins',
    );
    assert.equal((await store.read(hotCounts)).undoMain, countsBefore.undoMain - 1);
    await store.close();
  });

  it('Undo without a turn id finds the latest undoable turn even when it is archived and an older one is hot', async () => {
    const dir = tmpStoreDir();
    const { store } = await DurableStore.open(dir, { compactEvery: 1, ...KEEP });
    await store.transaction((tx) => {
      for (let c = 0; c < 3; c++)
        tx.run('INSERT INTO chats (id, title, agent, created_at, updated_at) VALUES (?, ?, ?, ?, ?)', [
          `chat-${c}`,
          `Chat ${c}`,
          'claude-code',
          1,
          1,
        ]);
      insertTurns(tx, 0, 300, 300);
      // Every "feature" turn from 100 on was undone: the branch's latest undoable turn is turn 95, long archived.
      tx.run("UPDATE turns SET undone_by = 'op-old' WHERE branch = 'feature' AND created_at >= 1700000100000");
    });
    await waitForRotation(store);
    const ctx = { store } as unknown as RepoContext; // promoteUndoTarget reads and writes only ctx.store
    const latestBefore = await store.read((r) => undoableTurns(r, 'feature')[0]?.id, { history: true });
    assert.equal(latestBefore, 'turn-000095');
    // An older undoable "feature" turn comes back hot (as an earlier Undo of it would leave it).
    await store.promoteTurns(() => ['turn-000005']);
    assert.equal(
      await store.read((r) => undoableTurns(r, 'feature')[0]?.id),
      'turn-000005',
      'the hot table alone would pick the older one',
    );
    await promoteUndoTarget(ctx, 'feature');
    assert.equal(
      await store.read((r) => undoableTurns(r, 'feature')[0]?.id),
      'turn-000095',
      'the latest undoable turn is hot now',
    );
    await store.close();
  });

  it('a damaged archive file: clear notice, moved aside, hot store intact, no crash', async () => {
    const dir = tmpStoreDir();
    await (await populate(dir, 300)).close();
    const file = path.join(dir, ARCHIVE_FILE);
    const bytes = fs.readFileSync(file);
    bytes[bytes.length - 100] ^= 0xff;
    fs.writeFileSync(file, bytes);
    const { store } = await DurableStore.open(dir, KEEP);
    const hotBefore = await store.read((r) => r.all('SELECT * FROM turns ORDER BY rowid'));
    await assert.rejects(
      store.read((r) => r.all('SELECT id FROM turns'), { history: true }),
      (error: unknown) => {
        assert.ok(isAvhError(error));
        assert.match(
          error.message,
          /history archive \(older turns\) was damaged \(file does not match the state database\); it was moved aside to .*state\.archive\.sqlite\.corrupt-/,
        );
        return true;
      },
    );
    const aside = fs.readdirSync(dir).filter((n) => n.startsWith(`${ARCHIVE_FILE}.corrupt-`));
    assert.equal(aside.length, 1, 'kept, never deleted');
    assert.deepEqual(fs.readFileSync(path.join(dir, aside[0])), bytes);
    assert.deepEqual(
      await store.read((r) => r.all('SELECT * FROM turns ORDER BY rowid'), { history: true }),
      hotBefore,
      'later history reads: the hot turns',
    );
    assert.deepEqual(await store.read((r) => r.all('SELECT * FROM turns ORDER BY rowid')), hotBefore);
    await store.close();
  });

  it("a foreign archive file (another repository's) is refused the same way", async () => {
    const a = tmpStoreDir();
    const b = tmpStoreDir();
    await (await populate(a, 300)).close();
    await (await populate(b, 300)).close();
    fs.copyFileSync(path.join(b, ARCHIVE_FILE), path.join(a, ARCHIVE_FILE));
    const { store } = await DurableStore.open(a, KEEP);
    await assert.rejects(
      store.read((r) => r.all('SELECT id FROM turns'), { history: true }),
      /history archive \(older turns\) was damaged/,
    );
    await store.close();
  });

  it('two processes: one rotates, the other (already open, archive loaded) still answers reads correctly', async () => {
    const dir = tmpStoreDir();
    const store = await populate(dir, 300);
    await waitForRotation(store);
    assert.equal((await store.read((r) => r.all('SELECT id FROM turns'), { history: true })).length, 300);
    assert.equal(store.archiveLoaded, true);
    // Another process adds 200 turns (with compactEvery 1 its compaction rotates again).
    const script = `
      const [modulePath, dir] = process.argv.slice(1);
      const { DurableStore } = require(modulePath);
      DurableStore.open(dir, { compactEvery: 1, archiveKeep: 40, archiveMargin: 20 }).then(async ({ store }) => {
        await store.transaction((tx) => {
          for (let i = 300; i < 500; i++) tx.run("INSERT INTO turns (id, chat_id, seq, prompt, recovery, terminal_outcome, branch, base_commit, created_at, ended_at) VALUES (?, 'chat-0', ?, 'p', 'terminal', 'completed', 'main', ?, ?, ?)",
            ['turn-' + String(i).padStart(6, '0'), 1000 + i, 'b' + i, 1700000000000 + i * 1000, 1700000000000 + i * 1000]);
        });
        await store.close();
      });`;
    const before = fs.statSync(path.join(dir, ARCHIVE_FILE)).size;
    execFileSync(process.execPath, [
      '-e',
      script,
      path.join(__dirname, '..', '..', 'src', 'core', 'store', 'durableStore.js'),
      dir,
    ]);
    assert.ok(fs.statSync(path.join(dir, ARCHIVE_FILE)).size > before, 'the other process rotated');
    const ids = await store.read((r) => r.all<{ id: string }>('SELECT id FROM turns ORDER BY id').map((t) => t.id), {
      history: true,
    });
    assert.equal(ids.length, 500);
    assert.equal(new Set(ids).size, 500, 'none duplicated');
    assert.ok(
      (await store.read((r) => countTurns(r).total)) < 100,
      'its hot table lost the moved rows through the journal',
    );
    assert.equal((await store.read(hotCounts)).total, 500);
    await store.close();
  });

  it('an archive written before a migration added a turns column reads that column as NULL', async () => {
    const dir = tmpStoreDir();
    const store = await populate(dir, 300);
    await waitForRotation(store);
    // Stand-in for a future migration: a new column in the hot table only (the archive file is not rewritten).
    await store.transaction((tx) => tx.run('ALTER TABLE turns ADD COLUMN future_col TEXT'));
    const rows = await store.read(
      (r) =>
        r.all<{ id: string; future_col: string | null }>('SELECT id, future_col FROM turns WHERE id = ?', [
          'turn-000001',
        ]),
      { history: true },
    );
    assert.deepEqual(rows, [{ id: 'turn-000001', future_col: null }]);
    await store.close();
  });

  it('isUndoable matches undoableTurns', async () => {
    const dir = tmpStoreDir();
    const store = await populate(dir, 300);
    const { all, undo } = await store.read(
      (r) => ({ all: r.all<TurnRow>('SELECT * FROM turns'), undo: new Set(undoableTurns(r, 'main').map((t) => t.id)) }),
      { history: true },
    );
    for (const t of all) assert.equal(isUndoable(t, 'main'), undo.has(t.id), t.id);
    await store.close();
  });
});

describe('History archive behind the façade (real git, real sql.js files)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  /** Every history read the façade offers, with the counts the status bar and `status` show. */
  async function facadePicture(history: VersionHistory, oids: string[], previewOf: string) {
    const status = await history.status();
    return {
      // What Undo of an old turn would take with it (other chats' later turns, user commits …).
      preview: await history.preview({ kind: 'undo', turnId: previewOf }),
      view: await history.versionsView(100),
      versions: await history.getVersions(100),
      counts: await history.historyCounts(),
      turns: status.counts,
      byVersion: await Promise.all(oids.map((oid) => history.turnOfVersion(oid))),
      picker: await history.undoableTurns(),
    };
  }

  it('reads are unchanged by rotation; the turn path never loads the archive; Undo of an archived turn works and Redo brings it back', async () => {
    const repo = makeRepo();
    let history = await VersionHistory.open(repo);
    const turns: { turnId: string; version: string }[] = [];
    try {
      for (let i = 0; i < 16; i++) {
        const t = await history.beginTurn({
          chatId: `chat-${i % 2}`,
          prompt: `Turn ${i}`,
          agent: 'claude-code',
          chatTitle: `Chat ${i % 2}`,
        });
        write(repo, `f${i}.txt`, `file ${i}\n`);
        await history.endTurn(t.turnId, 'completed');
        turns.push({ turnId: t.turnId, version: head(repo) });
      }
    } finally {
      await history.close();
    }
    const oids = turns.map((t) => t.version);
    history = await VersionHistory.open(repo);
    const before = await facadePicture(history, oids, turns[2].turnId);
    const stateDir = history.repository.stateDir;
    await history.close();

    // Rotate with a small keep (as a long history would at the default one): one write triggers the compaction.
    const { store } = await DurableStore.open(stateDir, { compactEvery: 1, archiveKeep: 4, archiveMargin: 4 });
    await store.transaction((tx) => tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('test_rotation', '1')"));
    await store.read(() => undefined);
    const hotTurns = await store.read((r) => countTurns(r).total);
    await store.close();
    assert.ok(hotTurns < 8, `most turns archived (${hotTurns} hot)`);

    history = await VersionHistory.open(repo);
    try {
      const contentBefore = contentInventory(repo);
      assert.deepEqual(await facadePicture(history, oids, turns[2].turnId), before);
      assert.equal(
        await contextOf(history).store.read((r) => getTurn(r, turns[2].turnId)),
        undefined,
        'a preview writes nothing: the archived turn it planned stays archived',
      );
      assert.equal(
        await rebuildFromTrailers(contextOf(history)),
        0,
        'rebuild finds every turn (hot or archived) already known',
      );

      await history.close();
      history = await VersionHistory.open(repo);
      const t = await history.beginTurn({ chatId: 'chat-0', prompt: 'One more', agent: 'claude-code' });
      write(repo, 'more.txt', 'more\n');
      await history.endTurn(t.turnId, 'completed');
      await history.status();
      await history.historyCounts();
      assert.equal(
        contextOf(history).store.archiveLoaded,
        false,
        'begin, end, status and the status bar counts never load the archive',
      );

      const oldest = turns[0];
      assert.equal(
        await contextOf(history).store.read((r) => getTurn(r, oldest.turnId)),
        undefined,
        'the oldest turn is archived',
      );
      const undone = await history.undo(oldest.turnId, { only: 'turn' });
      assert.equal(undone.result, 'restored');
      assert.equal(fs.existsSync(path.join(repo, 'f0.txt')), false, "the archived turn's own change is taken back");
      assert.ok(fs.existsSync(path.join(repo, 'f15.txt')), 'later work stays');
      const row = rowsOfView(await history.versionsView(100)).find((r) => r.turn?.id === oldest.turnId);
      assert.equal(row?.turn?.undone, true);
      assert.equal((await history.historyCounts()).undo, before.counts.undo + 1 - 1, 'one more turn, one undone');
      const redo = await history.redo();
      assert.equal(redo.result, 'restored');
      assert.equal(fs.readFileSync(path.join(repo, 'f0.txt'), 'utf8'), 'file 0\n');
      assertNothingLost(repo, contentBefore);
    } finally {
      await history.close();
    }
  });
});

function rowsOfView(view: VersionsView): VersionRow[] {
  return view.kind === 'versions' ? view.rows : [];
}
