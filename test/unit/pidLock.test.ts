import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isAvhError } from '../../src/core/errors';
import {
  acquireLock,
  HEARTBEAT_CONFIRM_MS,
  HEARTBEAT_STALE_MS,
  linuxLiveness,
  portableLiveness,
  processStartTime,
  readLockHolder,
  setLockLiveness,
  tryAcquireLock,
  type LockLiveness,
} from '../../src/core/store/pidLock';
import { eventually } from '../support/eventually';
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
    const foreign = JSON.stringify({
      pid: process.pid,
      startTime: null,
      purpose: 'foreign',
      acquiredAt: 1,
      token: 'x',
    });
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
    // No wait: a single attempt (timeoutMs 0) takes it, the dead holder's lock broken.
    const lock = await acquireLock(lockPath, { timeoutMs: 0, purpose: 'taker' });
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
    fs.writeFileSync(
      lockPath,
      JSON.stringify({ pid, startTime: startTime + 1, purpose: 'ghost', acquiredAt: 1, token: 'g' }),
    );
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
    fs.writeFileSync(
      lockPath,
      JSON.stringify({ pid: 2 ** 22 + 1, startTime: 1, purpose: 'dead', acquiredAt: 1, token: 'd' }),
    );
    const racers = Array.from({ length: 4 }, () => spawnWriter(['mutex', lockPath, counter, '150']));
    children.push(...racers);
    for (const racer of racers) assert.equal((await racer.exited).code, 0, racer.stderr());
    assert.equal(fs.readFileSync(counter, 'utf8'), String(4 * 150));
    assert.equal(readLockHolder(lockPath), null);
  });
});

/**
 * Each staleness provider, run here whatever the platform (the interface is substituted): a lock from before
 * the last boot is stale; a live holder is not; a reused pid is stale (Linux: another start time; portable:
 * it never refreshes the heartbeat, confirmed over HEARTBEAT_CONFIRM_MS of this process's monotonic clock).
 */
describe('lock staleness providers', function () {
  this.timeout(60_000);
  let dir: string;
  let lockPath: string;
  let previous: LockLiveness | undefined;
  let fakeMonotonic = 0;
  const children: WriterProcess[] = [];
  const withClock = (p: LockLiveness): LockLiveness => ({ ...p, monotonicNow: () => fakeMonotonic });
  const ghost = (pid: number, fields: Record<string, unknown>) =>
    fs.writeFileSync(
      lockPath,
      JSON.stringify({
        pid,
        startTime: null,
        purpose: 'ghost',
        acquiredAt: Date.now(),
        token: `g-${Math.random()}`,
        ...fields,
      }),
    );
  const age = (file: string, ms: number) => {
    const then = new Date(Date.now() - ms);
    fs.utimesSync(file, then, then);
  };
  /** A real process that holds another lock: a live pid that does not hold ours. */
  async function livePid(provider?: string): Promise<{ pid: number; lock: string }> {
    const lock = path.join(dir, `held-${children.length}.lock`);
    const child = spawnWriter(['hold', lock, 'holder', ...(provider ? [provider] : [])]);
    children.push(child);
    await child.waitForLine(/^locked$/);
    return { pid: child.proc.pid as number, lock };
  }

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-liveness-'));
    lockPath = path.join(dir, 'state.lock');
    fakeMonotonic = 0;
  });
  afterEach(async () => {
    if (previous) setLockLiveness(previous);
    previous = undefined;
    for (const child of children.splice(0)) {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
      await child.exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('Linux provider (/proc start time, kernel boot id)', () => {
    beforeEach(function () {
      if (!fs.existsSync('/proc/sys/kernel/random/boot_id')) this.skip();
      previous = setLockLiveness(withClock(linuxLiveness()));
    });

    it('a live holder is not stale; its lock records start time and boot', async () => {
      const { pid, lock } = await livePid();
      const content = JSON.parse(fs.readFileSync(lock, 'utf8')) as { startTime: number; boot: string };
      assert.equal(content.startTime, processStartTime(pid));
      assert.equal(content.boot, fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
      age(lock, 3_600_000); // no heartbeat on Linux: age means nothing
      assert.deepEqual(readLockHolder(lock), { pid, purpose: 'holder', alive: true });
      assert.equal(tryAcquireLock(lock, 'taker'), null);
    });

    it('a lock from before the last boot is stale even when its pid and start time match a live process', async () => {
      const { pid } = await livePid();
      ghost(pid, { startTime: processStartTime(pid), boot: '00000000-0000-0000-0000-000000000000' });
      assert.equal(readLockHolder(lockPath)?.alive, false);
      const lock = tryAcquireLock(lockPath, 'taker');
      assert.ok(lock);
      lock.release();
    });

    it('a reused pid (another start time) is stale', async () => {
      const { pid } = await livePid();
      ghost(pid, { startTime: (processStartTime(pid) as number) + 1, boot: linuxLiveness().currentBoot() });
      assert.equal(readLockHolder(lockPath)?.alive, false);
    });
  });

  describe('portable provider (boot from uptime, holder heartbeat)', () => {
    beforeEach(() => {
      previous = setLockLiveness(withClock(portableLiveness()));
    });

    it('a live holder beats: an old mtime is refreshed and the lock stays alive past the confirmation time', async () => {
      const { pid, lock } = await livePid('portable');
      const content = JSON.parse(fs.readFileSync(lock, 'utf8')) as { startTime: unknown; boot: string };
      assert.equal(content.startTime, null);
      assert.ok(Math.abs(Number(content.boot) - (Date.now() - os.uptime() * 1000)) < 60_000, content.boot);
      age(lock, HEARTBEAT_STALE_MS * 2); // as if the machine had slept
      assert.equal(readLockHolder(lock)?.alive, true, 'first sight of a silent heartbeat only starts the confirmation');
      const old = fs.statSync(lock).mtimeMs;
      await eventually(
        'the holder to refresh its heartbeat',
        () => fs.statSync(lock).mtimeMs,
        (m) => m !== old,
        {
          timeoutMs: 10_000,
        },
      );
      fakeMonotonic += HEARTBEAT_CONFIRM_MS * 10;
      assert.deepEqual(readLockHolder(lock), { pid, purpose: 'holder', alive: true });
      assert.equal(tryAcquireLock(lock, 'taker'), null);
    });

    it('a lock from before the last boot is stale even when its pid is alive', async () => {
      const { pid } = await livePid('portable');
      ghost(pid, { boot: String(Date.now() - os.uptime() * 1000 - 3_600_000) });
      assert.equal(readLockHolder(lockPath)?.alive, false);
      const lock = tryAcquireLock(lockPath, 'taker');
      assert.ok(lock);
      lock.release();
    });

    it('a reused pid (alive, this boot, but silent) is stale only once the silence is confirmed', async () => {
      const { pid } = await livePid('portable');
      ghost(pid, { boot: portableLiveness().currentBoot() });
      assert.equal(readLockHolder(lockPath)?.alive, true, 'a fresh lock is alive');
      age(lockPath, HEARTBEAT_STALE_MS * 2);
      assert.equal(tryAcquireLock(lockPath, 'taker'), null, 'not broken at first sight');
      fakeMonotonic += HEARTBEAT_CONFIRM_MS - 1;
      assert.equal(readLockHolder(lockPath)?.alive, true);
      fakeMonotonic += 1;
      assert.equal(readLockHolder(lockPath)?.alive, false);
      const lock = tryAcquireLock(lockPath, 'taker');
      assert.ok(lock);
      lock.release();
    });

    it('a dead pid is stale at once', () => {
      ghost(2 ** 22 + 1, { boot: portableLiveness().currentBoot() });
      assert.equal(readLockHolder(lockPath)?.alive, false);
    });
  });
});
