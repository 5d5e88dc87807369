import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isAvhError } from '../../src/core/errors';
import { acquireLock, processStartTime, readLockHolder, tryAcquireLock } from '../../src/core/store/pidLock';
import { spawnWriter, type WriterProcess } from '../support/store/spawnWriter';

describe('pidLock', function () {
  this.timeout(60_000);
  let dir: string;
  let lockPath: string;
  const children: WriterProcess[] = [];

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-lock-'));
    lockPath = path.join(dir, 'state.lock');
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
      await child.exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('records the holder and excludes a second taker until released', () => {
    const lock = tryAcquireLock(lockPath, 'test');
    assert.ok(lock);
    const content = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as Record<string, unknown>;
    assert.equal(content.pid, process.pid);
    assert.equal(content.purpose, 'test');
    assert.equal(typeof content.acquiredAt, 'number');
    if (process.platform === 'linux') assert.equal(content.startTime, processStartTime(process.pid));
    assert.deepEqual(readLockHolder(lockPath), { pid: process.pid, purpose: 'test', alive: true });
    assert.equal(tryAcquireLock(lockPath, 'other'), null);
    lock.release();
    lock.release();
    assert.equal(readLockHolder(lockPath), null);
    const again = tryAcquireLock(lockPath, 'other');
    assert.ok(again);
    again.release();
  });

  it('release never deletes a lock that is no longer ours', () => {
    const lock = tryAcquireLock(lockPath, 'test');
    assert.ok(lock);
    const foreign = JSON.stringify({ pid: process.pid, startTime: null, purpose: 'foreign', acquiredAt: 1, token: 'x' });
    fs.writeFileSync(lockPath, foreign);
    lock.release();
    assert.equal(fs.readFileSync(lockPath, 'utf8'), foreign);
  });

  it('takes over a lock left by a SIGKILLed holder', async () => {
    const holder = spawnWriter(['hold', lockPath, 'holder']);
    children.push(holder);
    await holder.waitForLine(/^locked$/);
    assert.deepEqual(readLockHolder(lockPath), { pid: holder.proc.pid, purpose: 'holder', alive: true });
    holder.proc.kill('SIGKILL');
    await holder.exited;
    assert.equal(readLockHolder(lockPath)?.alive, false);
    const started = Date.now();
    const lock = await acquireLock(lockPath, { timeoutMs: 2_000, purpose: 'taker' });
    assert.ok(Date.now() - started < 1_000);
    assert.equal(readLockHolder(lockPath)?.purpose, 'taker');
    lock.release();
  });

  it('times out with lock-timeout while a live holder keeps the lock', async () => {
    const holder = spawnWriter(['hold', lockPath, 'holder']);
    children.push(holder);
    await holder.waitForLine(/^locked$/);
    const started = Date.now();
    await assert.rejects(
      acquireLock(lockPath, { timeoutMs: 300, purpose: 'waiter' }),
      (error) => isAvhError(error, 'lock-timeout') && error.details.holderPid === holder.proc.pid,
    );
    const waited = Date.now() - started;
    assert.ok(waited >= 300 && waited < 2_000, `waited ${waited} ms`);
    assert.equal(readLockHolder(lockPath)?.alive, true);
  });

  it('treats a live pid with a different start time as a reused pid (stale)', async function () {
    if (process.platform !== 'linux') this.skip();
    const other = spawnWriter(['hold', path.join(dir, 'other.lock'), 'other']);
    children.push(other);
    await other.waitForLine(/^locked$/);
    const pid = other.proc.pid as number;
    const startTime = processStartTime(pid) as number;
    fs.writeFileSync(lockPath, JSON.stringify({ pid, startTime: startTime + 1, purpose: 'ghost', acquiredAt: 1, token: 'g' }));
    assert.equal(readLockHolder(lockPath)?.alive, false);
    const lock = tryAcquireLock(lockPath, 'taker');
    assert.ok(lock, 'reused pid does not hold the lock');
    lock.release();
  });

  it('waits for a lock file that is being written, and breaks one abandoned unwritten', () => {
    fs.writeFileSync(lockPath, '');
    assert.equal(tryAcquireLock(lockPath, 'taker'), null, 'a fresh empty file may be mid-write');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lockPath, old, old);
    const lock = tryAcquireLock(lockPath, 'taker');
    assert.ok(lock);
    lock.release();
  });

  it('gives mutual exclusion to racing processes, starting from a stale lock', async () => {
    const counter = path.join(dir, 'counter');
    fs.writeFileSync(counter, '0');
    // A stale lock from a pid that cannot be alive (beyond pid_max).
    fs.writeFileSync(lockPath, JSON.stringify({ pid: 2 ** 22 + 1, startTime: 1, purpose: 'dead', acquiredAt: 1, token: 'd' }));
    const racers = Array.from({ length: 4 }, () => spawnWriter(['mutex', lockPath, counter, '150']));
    children.push(...racers);
    for (const racer of racers) assert.equal((await racer.exited).code, 0, racer.stderr());
    assert.equal(fs.readFileSync(counter, 'utf8'), String(4 * 150));
    assert.equal(readLockHolder(lockPath), null);
  });
});
