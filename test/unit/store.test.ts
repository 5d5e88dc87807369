import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { isAvhError } from '../../src/core/errors';
import { writeFileAtomic } from '../../src/core/store/atomicWrite';
import { DurableStore, JOURNAL_FILE, SNAPSHOT_FILE, type StoreTx } from '../../src/core/store/durableStore';
import { JOURNAL_HEADER_SIZE, encodeRecord } from '../../src/core/store/journal';
import { SCHEMA_VERSION } from '../../src/core/store/schema';
import { loadSqlJs } from '../../src/core/store/sqlJsLoader';
import { spawnWriter } from '../support/store/spawnWriter';

const tmpDirs: string[] = [];
function tmpStoreDir(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-store-'));
  tmpDirs.push(root);
  return path.join(root, 'agent-versions');
}

const insertChat = 'INSERT INTO chats (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)';

async function chatIds(store: DurableStore): Promise<string[]> {
  return store.read((r) => r.all<{ id: string }>('SELECT id FROM chats ORDER BY id').map((row) => row.id));
}

async function withStore<T>(dir: string, fn: (store: DurableStore) => Promise<T>, options = {}): Promise<T> {
  const { store } = await DurableStore.open(dir, options);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

describe('DurableStore', function () {
  this.timeout(60_000);

  after(() => {
    for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('creates the directory, migrates to the current schema and seals the snapshot', async () => {
    const dir = tmpStoreDir();
    const { store, quarantined } = await DurableStore.open(dir);
    assert.equal(quarantined, undefined);
    assert.equal(store.path, path.join(dir, SNAPSHOT_FILE));
    const version = await store.read((r) => r.get<{ user_version: number }>('PRAGMA user_version'));
    assert.equal(version?.user_version, SCHEMA_VERSION);
    const tables = await store.read((r) =>
      r.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'"),
    );
    assert.ok(tables.some((t) => t.name === 'turns'));
    await store.close();
    assert.ok(
      fs.statSync(path.join(dir, SNAPSHOT_FILE)).size > 0,
      'migration leaves the new schema in the snapshot file',
    );
    assert.equal(fs.statSync(path.join(dir, JOURNAL_FILE)).size, JOURNAL_HEADER_SIZE);
  });

  it('keeps an acknowledged transaction across a new process', async () => {
    const dir = tmpStoreDir();
    await withStore(dir, (store) => store.transaction((tx) => tx.run(insertChat, ['parent-1', 'from parent', 1, 1])));
    const child = spawnWriter(['store', dir, 'child', '3']);
    assert.deepEqual(await child.exited, { code: 0, signal: null });
    assert.deepEqual(child.acked(), [0, 1, 2]);
    const ids = await withStore(dir, chatIds);
    assert.deepEqual(ids, ['child-0', 'child-1', 'child-2', 'parent-1']);
  });

  it('rolls back and journals nothing when the callback throws, propagating the same error', async () => {
    const dir = tmpStoreDir();
    await withStore(dir, async (store) => {
      await store.transaction((tx) => tx.run(insertChat, ['keep', null, 1, 1]));
      const journalSize = fs.statSync(path.join(dir, JOURNAL_FILE)).size;
      const thrown = new Error('caller failure');
      await assert.rejects(
        store.transaction((tx) => {
          tx.run(insertChat, ['gone', null, 1, 1]);
          throw thrown;
        }),
        (error) => error === thrown,
      );
      assert.deepEqual(await chatIds(store), ['keep']);
      assert.equal(fs.statSync(path.join(dir, JOURNAL_FILE)).size, journalSize);
    });
    assert.deepEqual(await withStore(dir, chatIds), ['keep']);
  });

  it('rejects an async callback and rolls back what it ran before its first await', async () => {
    const dir = tmpStoreDir();
    await withStore(dir, async (store) => {
      await assert.rejects(
        store.transaction(async (tx) => {
          tx.run(insertChat, ['async', null, 1, 1]);
        }),
        (error) => isAvhError(error, 'invalid-input') && /synchronous/.test(error.message),
      );
      assert.deepEqual(await chatIds(store), []);
    });
  });

  it('refuses a write made through a read method', async () => {
    const dir = tmpStoreDir();
    await withStore(dir, async (store) => {
      await assert.rejects(
        store.transaction((tx) => tx.get(`${insertChat} RETURNING id`, ['sneaky', null, 1, 1])),
        (error) => isAvhError(error, 'invalid-input'),
      );
      assert.deepEqual(await chatIds(store), []);
    });
  });

  it('replays blobs, named parameters, non-finite numbers and reused parameter arrays exactly', async () => {
    const dir = tmpStoreDir();
    const blob = new Uint8Array([0, 1, 2, 255, 254]);
    await withStore(dir, (store) =>
      store.transaction((tx) => {
        tx.run('CREATE TABLE t (k TEXT, v)');
        tx.run('INSERT INTO t (k, v) VALUES ($k, $v)', { $k: 'blob', $v: blob });
        tx.run('INSERT INTO t (k, v) VALUES (?, ?)', ['inf', Number.POSITIVE_INFINITY]);
        tx.run('INSERT INTO t (k, v) VALUES (?, ?)', ['$b', '{"b":"AAAA"}']);
        const params: (string | number)[] = ['loop', 0];
        for (let i = 1; i <= 3; i++) {
          params[1] = i;
          tx.run('INSERT INTO t (k, v) VALUES (?, ?)', params);
        }
      }),
    );
    // A fresh open replays the journal record (no compaction happened).
    const rows = await withStore(dir, (store) =>
      store.read((r) => r.all<{ k: string; v: unknown }>('SELECT k, v FROM t ORDER BY rowid')),
    );
    assert.deepEqual(rows[0], { k: 'blob', v: blob });
    assert.equal(rows[1].v, Number.POSITIVE_INFINITY);
    assert.equal(rows[2].v, '{"b":"AAAA"}');
    assert.deepEqual(
      rows.slice(3).map((r) => r.v),
      [1, 2, 3],
    );
  });

  for (const compactEvery of [1000, 3]) {
    it(`read() sees writes another process acknowledged (${compactEvery === 3 ? 'across its compactions' : 'appended to the journal'})`, async () => {
      const dir = tmpStoreDir();
      const { store } = await DurableStore.open(dir);
      try {
        assert.deepEqual(await chatIds(store), []);
        const child = spawnWriter(['store', dir, 'w', '7'], { AVH_STORE_COMPACT_EVERY: String(compactEvery) });
        assert.equal((await child.exited).code, 0, child.stderr());
        const ids = await chatIds(store);
        assert.equal(ids.length, 7);
        const counter = await store.read((r) =>
          r.get<{ value: string }>("SELECT value FROM meta WHERE key = 'counter'"),
        );
        assert.equal(counter?.value, '7');
        // And our next write lands on top of theirs.
        await store.transaction((tx) => tx.run(insertChat, ['mine', null, 1, 1]));
      } finally {
        await store.close();
      }
      assert.equal((await withStore(dir, chatIds)).length, 8);
    });
  }

  it("two stores in one process writing concurrently stay exact, adopting each other's compactions", async () => {
    const dir = tmpStoreDir();
    const events: string[] = [];
    const log = { info: (event: string) => events.push(event), warn: () => undefined, error: () => undefined };
    const a = (await DurableStore.open(dir, { compactEvery: 3, log })).store;
    const b = (await DurableStore.open(dir, { compactEvery: 4, log })).store;
    const bump = (id: string) => (tx: StoreTx) => {
      tx.run(insertChat, [id, null, 1, 1]);
      const row = tx.get<{ value: string }>("SELECT value FROM meta WHERE key = 'counter'");
      tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('counter', ?)", [String(Number(row?.value ?? 0) + 1)]);
    };
    try {
      await Promise.all(
        [a, b].map(async (store, s) => {
          for (let i = 0; i < 60; i++) await store.transaction(bump(`${s}-${i}`));
        }),
      );
      for (const store of [a, b]) {
        assert.equal((await chatIds(store)).length, 120);
        assert.equal(
          (await store.read((r) => r.get<{ value: string }>("SELECT value FROM meta WHERE key = 'counter'")))?.value,
          '120',
        );
      }
    } finally {
      await a.close();
      await b.close();
    }
    assert.ok(events.includes('store.compacted'));
    assert.ok(events.includes('store.journal.adopted'), 'a compaction at our position is adopted without a reload');
    assert.equal((await withStore(dir, chatIds)).length, 120);
  });

  it('two processes doing 500 interleaved read-modify-write transactions each lose nothing', async () => {
    const dir = tmpStoreDir();
    await withStore(dir, async () => undefined);
    const a = spawnWriter(['store', dir, 'a', '500', '2'], { AVH_STORE_COMPACT_EVERY: '97' });
    const b = spawnWriter(['store', dir, 'b', '500', '2'], { AVH_STORE_COMPACT_EVERY: '89' });
    const [ea, eb] = await Promise.all([a.exited, b.exited]);
    assert.equal(ea.code, 0, a.stderr());
    assert.equal(eb.code, 0, b.stderr());
    const { chats, counter } = await withStore(dir, (store) =>
      store.read((r) => ({
        chats: r.get<{ n: number }>('SELECT count(*) AS n FROM chats')?.n,
        counter: r.get<{ value: string }>("SELECT value FROM meta WHERE key = 'counter'")?.value,
      })),
    );
    assert.equal(chats, 1000);
    assert.equal(counter, '1000');
    // Each process saw the other's increments between its own: the writes really interleaved.
    const countersOf = (w: typeof a) => w.lines.filter((l) => l.startsWith('ack ')).map((l) => Number(l.split(' ')[2]));
    const jumps = (values: number[]) => values.filter((v, i) => i > 0 && v !== values[i - 1] + 1).length;
    assert.ok(jumps(countersOf(a)) > 10 && jumps(countersOf(b)) > 10, 'writers interleaved');
    assert.deepEqual(
      [...countersOf(a), ...countersOf(b)].sort((x, y) => x - y),
      Array.from({ length: 1000 }, (_, i) => i + 1),
    );
  });

  it('ignores a torn journal tail and truncates it before the next write', async () => {
    const dir = tmpStoreDir();
    await withStore(dir, (store) => store.transaction((tx) => tx.run(insertChat, ['acked', null, 1, 1])));
    const journal = path.join(dir, JOURNAL_FILE);
    const cleanSize = fs.statSync(journal).size;
    const torn = encodeRecord({ seq: 3, statements: [{ sql: insertChat, params: ['never-acked', null, 1, 1] }] });
    fs.appendFileSync(journal, torn.subarray(0, torn.length - 5));
    await withStore(dir, async (store) => {
      assert.deepEqual(await chatIds(store), ['acked']);
      assert.equal(fs.statSync(journal).size, cleanSize, 'torn tail truncated');
      await store.transaction((tx) => tx.run(insertChat, ['after', null, 1, 1]));
    });
    assert.deepEqual(await withStore(dir, chatIds), ['acked', 'after']);
  });

  it('quarantines a journal damaged in the middle', async () => {
    const dir = tmpStoreDir();
    await withStore(dir, async (store) => {
      for (const id of ['one', 'two', 'three']) await store.transaction((tx) => tx.run(insertChat, [id, null, 1, 1]));
    });
    const journal = path.join(dir, JOURNAL_FILE);
    const bytes = fs.readFileSync(journal);
    bytes[JOURNAL_HEADER_SIZE + 30] ^= 0xff; // inside the first record's payload
    fs.writeFileSync(journal, bytes);
    const { store, quarantined } = await DurableStore.open(dir);
    try {
      assert.equal(quarantined?.reason, 'corrupt');
      assert.deepEqual(await chatIds(store), []);
      const moved = fs.readdirSync(dir).filter((n) => n.startsWith(`${JOURNAL_FILE}.corrupt-`));
      assert.equal(moved.length, 1);
      assert.deepEqual(fs.readFileSync(path.join(dir, moved[0])), bytes);
    } finally {
      await store.close();
    }
  });

  for (const damage of ['garbage', 'truncated'] as const) {
    it(`moves a ${damage} snapshot aside unchanged and opens a fresh store`, async () => {
      const dir = tmpStoreDir();
      await withStore(dir, (store) => store.transaction((tx) => tx.run(insertChat, ['old', null, 1, 1])), {
        compactEvery: 1,
      });
      const snapshot = path.join(dir, SNAPSHOT_FILE);
      const original = fs.readFileSync(snapshot);
      const damaged =
        damage === 'garbage'
          ? Buffer.from('this is not a database '.repeat(200))
          : original.subarray(0, Math.floor(original.length / 2));
      fs.writeFileSync(snapshot, damaged);
      const { store, quarantined } = await DurableStore.open(dir);
      try {
        assert.equal(quarantined?.reason, 'corrupt');
        assert.ok(quarantined.movedTo.startsWith(`${snapshot}.corrupt-`));
        assert.deepEqual(fs.readFileSync(quarantined.movedTo), damaged, 'moved aside byte for byte');
        assert.deepEqual(await chatIds(store), []);
        await store.transaction((tx) => tx.run(insertChat, ['new', null, 1, 1]));
      } finally {
        await store.close();
      }
      const reopened = await DurableStore.open(dir);
      assert.equal(reopened.quarantined, undefined);
      assert.deepEqual(await chatIds(reopened.store), ['new']);
      await reopened.store.close();
    });
  }

  it('refuses (and leaves alone) a database from a newer schema', async () => {
    const dir = tmpStoreDir();
    fs.mkdirSync(dir, { recursive: true });
    const SQL = await loadSqlJs();
    const db = new SQL.Database();
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    const bytes = Buffer.from(db.export());
    db.close();
    fs.writeFileSync(path.join(dir, SNAPSHOT_FILE), bytes);
    await assert.rejects(
      DurableStore.open(dir),
      (error) => isAvhError(error, 'store-unavailable') && /newer version/.test(error.message),
    );
    assert.deepEqual(fs.readFileSync(path.join(dir, SNAPSHOT_FILE)), bytes);
    assert.deepEqual(
      fs.readdirSync(dir).filter((n) => n.includes('corrupt')),
      [],
    );
  });

  it('never applies a record twice after a crash between the snapshot and journal renames', async () => {
    const dir = tmpStoreDir();
    const journal = path.join(dir, JOURNAL_FILE);
    const bump = (tx: { run(sql: string, p?: string[]): void; get<T>(sql: string): T | undefined }) => {
      const row = tx.get<{ value: string }>("SELECT value FROM meta WHERE key = 'counter'");
      tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('counter', ?)", [String(Number(row?.value ?? 0) + 1)]);
    };
    const { store } = await DurableStore.open(dir, { compactEvery: 5 });
    for (let i = 0; i < 4; i++) await store.transaction(bump);
    const oldJournal = fs.readFileSync(journal);
    await store.transaction(bump); // the 5th record triggers a compaction
    await store.close();
    assert.equal(fs.statSync(journal).size, JOURNAL_HEADER_SIZE, 'compacted');
    // Simulate dying after the snapshot rename but before the journal was replaced: the old journal holds
    // records 2..5 (seq 1 is the migration) that the snapshot (seq 6) already contains, then a torn append.
    const sixth = encodeRecord({
      seq: 7,
      statements: [{ sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('counter', '999')" }],
    });
    fs.writeFileSync(journal, Buffer.concat([oldJournal, sixth.subarray(0, 10)]));
    const reopened = await DurableStore.open(dir);
    const counter = await reopened.store.read((r) =>
      r.get<{ value: string }>("SELECT value FROM meta WHERE key = 'counter'"),
    );
    assert.equal(counter?.value, '5');
    assert.equal(reopened.quarantined, undefined);
    await reopened.store.close();
    assert.equal(fs.statSync(journal).size, JOURNAL_HEADER_SIZE, 'the unsealed snapshot was sealed again');
  });

  it('rejects a transaction whose journal fsync fails and forgets it', async () => {
    const dir = tmpStoreDir();
    // The store imports node:fs through a live binding, so patching the module object reaches it.
    const fsModule = createRequire(__filename)('node:fs') as typeof fs;
    const original = fsModule.fdatasyncSync;
    await withStore(dir, async (store) => {
      await store.transaction((tx) => tx.run(insertChat, ['before', null, 1, 1]));
      fsModule.fdatasyncSync = () => {
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      };
      try {
        await assert.rejects(
          store.transaction((tx) => tx.run(insertChat, ['lost', 'secret prompt', 1, 1])),
          (error) =>
            isAvhError(error, 'store-unavailable') && /EIO/.test(error.message) && !/secret/.test(error.message),
        );
      } finally {
        fsModule.fdatasyncSync = original;
      }
      assert.deepEqual(await chatIds(store), ['before']);
      await store.transaction((tx) => tx.run(insertChat, ['after', null, 1, 1]));
    });
    assert.deepEqual(await withStore(dir, chatIds), ['after', 'before']);
  });
});

describe('writeFileAtomic', () => {
  it('replaces the target whole and leaves no temp file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-atomic-'));
    try {
      const target = path.join(dir, 'file.bin');
      writeFileAtomic(target, 'first');
      writeFileAtomic(target, new Uint8Array([1, 2, 3]));
      assert.deepEqual(fs.readFileSync(target), Buffer.from([1, 2, 3]));
      assert.deepEqual(fs.readdirSync(dir), ['file.bin']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
