import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ARCHIVE_FILE, DurableStore } from '../../src/core/store/durableStore';

const MODULE = path.join(__dirname, '..', '..', 'src', 'core', 'store', 'durableStore.js');
const KEEP = { archiveKeep: 40, archiveMargin: 20 };

/**
 * A real process that writes `count` turns (ids turn-<from>…) in one acknowledged transaction, prints "ack", then
 * lets its compaction rotate the archive; AVH_FAILPOINT SIGKILLs it at the named point of the rotation.
 */
const WRITER = `
  const [modulePath, dir, from, count] = process.argv.slice(1);
  const { DurableStore } = require(modulePath);
  DurableStore.open(dir, { compactEvery: 1, archiveKeep: 40, archiveMargin: 20 }).then(async ({ store }) => {
    await store.transaction((tx) => {
      if (!tx.get("SELECT 1 AS x FROM chats WHERE id = 'chat-0'")) tx.run("INSERT INTO chats (id, created_at, updated_at) VALUES ('chat-0', 1, 1)");
      for (let i = Number(from); i < Number(from) + Number(count); i++) {
        tx.run("INSERT INTO turns (id, chat_id, seq, prompt, recovery, terminal_outcome, branch, base_commit, created_at, ended_at) VALUES (?, 'chat-0', ?, 'p', 'terminal', 'completed', 'main', ?, ?, ?)",
          ['turn-' + String(i).padStart(6, '0'), i + 1, 'b' + i, 1700000000000 + i * 1000, 1700000000000 + i * 1000]);
      }
    });
    process.stdout.write('ack\\n');
    await store.close();
  });`;

function runWriter(
  dir: string,
  from: number,
  count: number,
  failpoint?: string,
): { acked: boolean; signal: NodeJS.Signals | null } {
  const env = { ...process.env };
  delete env.AVH_FAILPOINT;
  if (failpoint) env.AVH_FAILPOINT = failpoint;
  const result = spawnSync(process.execPath, ['-e', WRITER, MODULE, dir, String(from), String(count)], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { acked: result.stdout.includes('ack'), signal: result.signal };
}

async function historyIds(dir: string): Promise<string[]> {
  const { store } = await DurableStore.open(dir, KEEP);
  try {
    return await store.read((r) => r.all<{ id: string }>('SELECT id FROM turns ORDER BY id').map((t) => t.id), {
      history: true,
    });
  } finally {
    await store.close();
  }
}

const expectedIds = (n: number) => Array.from({ length: n }, (_, i) => `turn-${String(i).padStart(6, '0')}`);

describe('History archive rotation under SIGKILL', function () {
  this.timeout(120_000);
  let root: string;
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-archive-crash-'));
  });
  after(() => fs.rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));

  // First rotation (no archive yet) and a later one (the new archive is a superset of an existing file).
  for (const point of ['archive-before-rename', 'archive-after-rename', 'archive-during-delete']) {
    for (const existing of [false, true]) {
      it(`killed at ${point}${existing ? ' with an archive already there' : ''}: reopen → no turn lost, none duplicated, the next rotation completes`, async () => {
        const dir = path.join(root, `${point}-${existing}`);
        let total = 0;
        if (existing) {
          assert.equal(runWriter(dir, 0, 200).acked, true);
          total = 200;
          assert.ok(fs.existsSync(path.join(dir, ARCHIVE_FILE)));
        }
        const archiveBefore = existing ? fs.readFileSync(path.join(dir, ARCHIVE_FILE)) : null;
        const killed = runWriter(dir, total, 200, point);
        assert.equal(killed.acked, true, 'the write was acknowledged before the rotation');
        assert.equal(killed.signal, 'SIGKILL', `the writer died at ${point}`);
        total += 200;
        if (point === 'archive-before-rename' && archiveBefore)
          assert.deepEqual(fs.readFileSync(path.join(dir, ARCHIVE_FILE)), archiveBefore, 'the old archive untouched');

        const ids = await historyIds(dir);
        assert.deepEqual(ids, expectedIds(total), 'every acknowledged turn, each once');
        // A later writer rotates over whatever the crash left, and still nothing is lost or doubled.
        assert.equal(runWriter(dir, total, 100).acked, true);
        total += 100;
        assert.deepEqual(await historyIds(dir), expectedIds(total));
        const { store } = await DurableStore.open(dir, KEEP);
        const hot = await store.read((r) => r.get<{ n: number }>('SELECT COUNT(*) AS n FROM turns')?.n ?? 0);
        await store.close();
        assert.ok(hot < 100, `the hot table was rotated again (${hot} rows)`);
        assert.equal(
          fs.readdirSync(dir).filter((n) => n.includes('.tmp-') || n.includes('.corrupt-')).length,
          0,
          'no temp or quarantined file left',
        );
      });
    }
  }
});
