/**
 * Only proven damage quarantines the store. Transient read errors (EACCES, EMFILE, EBUSY, EIO), injected at the
 * store's file-system seam over real files, are retried and then reported with nothing changed: the snapshot
 * and journal stay byte for byte, and the recovery latch they hold survives. Real damage fails closed: the
 * rebuilt store requires a repository check before any restore.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAvhError } from '../../src/core/errors';
import { acceptCurrentVersion } from '../../src/core/recovery/recoveryActions';
import { readRecovery, setRecovery } from '../../src/core/operations/recoveryLatch';
import { DurableStore, JOURNAL_FILE, SNAPSHOT_FILE, type StoreFileSystem } from '../../src/core/store/durableStore';
import { STATE_REBUILT_REASON, VersionHistory } from '../../src/core/versionHistory';
import { expectReason } from '../support/assertions';
import { runCliProcess } from '../support/cliProcess';
import { assertNothingLost, cleanupTempDirs, contentInventory, makeRepo, tempDir, write } from '../support/gitFixtures';
import { contextOf } from '../../src/core/repoContextOf';

const TRANSIENT = ['EACCES', 'EMFILE', 'EBUSY', 'EIO'] as const;
type Target = 'snapshot' | 'journal';

/** A node:fs seam that fails reads of one store file with `code` while `failures` lasts (mock: the errno is injected). */
class FlakyFiles implements StoreFileSystem {
  failures = 0;
  calls = 0;
  constructor(
    private readonly code: string,
    private readonly target: Target,
  ) {}
  private hit(file: unknown): void {
    const name = typeof file === 'string' ? path.basename(file) : '';
    const wanted = this.target === 'snapshot' ? SNAPSHOT_FILE : JOURNAL_FILE;
    if (name !== wanted && !(typeof file === 'number' && this.target === 'journal')) return;
    this.calls++;
    if (this.failures === 0) return;
    this.failures--;
    throw Object.assign(new Error(`${this.code}: injected`), { code: this.code });
  }
  readFileSync = ((file: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
    this.hit(file);
    return (fs.readFileSync as (...a: unknown[]) => unknown)(file, ...rest);
  }) as StoreFileSystem['readFileSync'];
  openSync = ((file: fs.PathLike, ...rest: unknown[]) => {
    this.hit(file);
    return (fs.openSync as (...a: unknown[]) => number)(file, ...rest);
  }) as StoreFileSystem['openSync'];
  fstatSync = ((fd: number, ...rest: unknown[]) => {
    this.hit(fd);
    return (fs.fstatSync as (...a: unknown[]) => unknown)(fd, ...rest);
  }) as StoreFileSystem['fstatSync'];
  statSync = ((file: fs.PathLike, ...rest: unknown[]) => {
    this.hit(file);
    return (fs.statSync as (...a: unknown[]) => unknown)(file, ...rest);
  }) as StoreFileSystem['statSync'];
  readSync = ((fd: number, ...rest: unknown[]) => {
    this.hit(fd);
    return (fs.readSync as (...a: unknown[]) => number)(fd, ...rest);
  }) as StoreFileSystem['readSync'];
}

/** Bytes of every file in the state directory (the lock aside): what "nothing changed" means here. */
function stateFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort())
    if (name !== 'state.lock') out[name] = fs.readFileSync(path.join(dir, name)).toString('base64');
  return out;
}

/** A store with data in both the snapshot and the journal, and a recovery latch; returns the latch generation. */
async function seededStore(dir: string): Promise<number> {
  const { store } = await DurableStore.open(dir);
  try {
    await store.transaction((tx) =>
      tx.run('INSERT INTO chats (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)', ['c1', null, 1, 1]),
    );
    return await store.transaction((tx) => setRecovery(tx, 'op-1', 'ambiguous', 'update-worktree', 1));
  } finally {
    await store.close();
  }
}

const fast = [1, 1, 1];

describe('store: transient read errors never quarantine', function () {
  this.timeout(60_000);
  after(cleanupTempDirs);

  for (const code of TRANSIENT) {
    for (const target of ['snapshot', 'journal'] as const) {
      it(`${code} reading the ${target} at open: retried, then "cannot read …, nothing changed"; files and latch intact`, async () => {
        const dir = path.join(tempDir('avh-transient-'), 'agent-versions');
        const generation = await seededStore(dir);
        const before = stateFiles(dir);

        const files = new FlakyFiles(code, target);
        files.failures = Number.POSITIVE_INFINITY;
        await assert.rejects(DurableStore.open(dir, { files, readRetryDelaysMs: fast }), (error) => {
          assert.ok(isAvhError(error, 'store-unavailable'), String(error));
          assert.match(error.message, new RegExp(`^Cannot read the state ${target} \\(${code}\\); nothing changed`));
          return true;
        });
        assert.ok(files.calls >= fast.length + 1, 'retried');
        assert.deepEqual(stateFiles(dir), before, 'no file moved aside, rewritten or created');

        // A failure that clears within the retries is invisible.
        files.failures = fast.length;
        const { store, quarantined } = await DurableStore.open(dir, { files, readRetryDelaysMs: fast });
        try {
          assert.equal(quarantined, undefined);
          assert.equal((await store.read((r) => readRecovery(r)))?.generation, generation);
          assert.deepEqual(await store.read((r) => r.all('SELECT id FROM chats')), [{ id: 'c1' }]);
        } finally {
          await store.close();
        }
      });
    }

    it(`${code} while a running store catches up: reported, nothing changed, then it catches up`, async () => {
      const dir = path.join(tempDir('avh-transient-'), 'agent-versions');
      const generation = await seededStore(dir);
      const files = new FlakyFiles(code, 'journal');
      const { store } = await DurableStore.open(dir, { files, readRetryDelaysMs: fast });
      const other = (await DurableStore.open(dir)).store;
      try {
        await other.transaction((tx) =>
          tx.run('INSERT INTO chats (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)', ['c2', null, 2, 2]),
        );
        const before = stateFiles(dir);
        files.failures = Number.POSITIVE_INFINITY;
        await assert.rejects(
          store.transaction((tx) =>
            tx.run('INSERT INTO chats (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)', ['lost', null, 3, 3]),
          ),
          (error) =>
            isAvhError(error, 'store-unavailable') &&
            /^Cannot read the state journal .*nothing changed/.test(error.message),
        );
        assert.deepEqual(stateFiles(dir), before);
        files.failures = 0;
        assert.deepEqual(
          await store.read((r) => r.all<{ id: string }>('SELECT id FROM chats ORDER BY id').map((row) => row.id)),
          ['c1', 'c2'],
        );
        assert.equal((await store.read((r) => readRecovery(r)))?.generation, generation);
      } finally {
        await store.close();
        await other.close();
      }
      assert.deepEqual(
        fs.readdirSync(dir).filter((n) => n.includes('corrupt')),
        [],
      );
    });
  }
});

describe('store: real damage fails closed', function () {
  this.timeout(120_000);
  after(cleanupTempDirs);

  it('a damaged state file with a latch in it → moved aside, rebuilt, and a repository check required before any restore', async () => {
    const repo = makeRepo();
    const h1 = await VersionHistory.open(repo);
    try {
      const { turnId } = await h1.beginTurn({ chatId: 'c', prompt: 'agent work' });
      write(repo, 'a.txt', 'agent\n');
      await h1.endTurn(turnId, 'completed');
      await contextOf(h1).store.transaction((tx) => setRecovery(tx, 'op-x', 'ambiguous', 'update-worktree', 1));
    } finally {
      await h1.close();
    }
    const stateDir = path.join(repo, '.git', 'agent-versions');
    for (const name of [SNAPSHOT_FILE, JOURNAL_FILE])
      fs.writeFileSync(path.join(stateDir, name), 'damaged beyond reading');
    const before = contentInventory(repo);

    const h2 = await VersionHistory.open(repo);
    try {
      assert.equal(h2.notices[0]?.kind, 'state-rebuilt');
      assert.equal((await h2.status()).recovery?.reason, STATE_REBUILT_REASON);
      await expectReason(h2.undo(), 'recovery-required');
      await expectReason(h2.beginTurn({ chatId: 'c', prompt: 'next' }), 'recovery-required');
    } finally {
      await h2.close();
    }
    // The CLI sees the same latch and its check; accepting the (clean) repository clears it.
    const check = runCliProcess(['recover', 'check'], { cwd: repo });
    assert.equal(check.code, 0, check.stderr);
    assert.equal(runCliProcess(['undo'], { cwd: repo }).code, 3);
    const h3 = await VersionHistory.open(repo);
    try {
      assert.equal((await acceptCurrentVersion(contextOf(h3))).result, 'accepted');
      assert.equal((await h3.undo()).result, 'restored');
      assert.equal(fs.existsSync(path.join(repo, 'a.txt')), false);
    } finally {
      await h3.close();
    }
    assertNothingLost(repo, before);
  });
});
