/**
 * Cross-process lock files that name their holder. Written by hand rather than with proper-lockfile because
 * that library judges staleness by mtime alone (a holder paused longer than the stale time loses its lock),
 * while every holder here is a local process whose liveness we can check: pid plus process start time and the
 * boot it was taken in (Linux, exact), or pid plus boot plus a heartbeat elsewhere (see LockLiveness).
 */
import * as fs from 'node:fs';
import { AvhError } from '../errors';
import { randomUuid } from '../randomId';
import { currentLockLiveness, useLockLiveness, type LockLiveness } from './lockLiveness';

export { currentLockLiveness, linuxLiveness, portableLiveness, processStartTime } from './lockLiveness';
export type { LockLiveness } from './lockLiveness';

export interface LockHandle {
  readonly path: string;
  /** Deletes the lock file if it is still ours. Safe to call more than once. */
  release(): void;
}

export interface LockHolder {
  pid: number;
  purpose: string;
  alive: boolean;
}

export interface AcquireLockOptions {
  timeoutMs: number;
  purpose: string;
  /** First poll interval; it grows to at most MAX_POLL_MS. */
  pollMs?: number;
}

interface LockContent {
  pid: number;
  /** Process start time as the liveness provider reports it; null where unknown. */
  startTime: number | null;
  /** The boot the lock was taken in, as the liveness provider names it; null in locks from older versions. */
  boot: string | null;
  purpose: string;
  acquiredAt: number;
  token: string;
}

const MAX_POLL_MS = 20;
/** A lock file that is empty or unparsable this long was left by a creator that died before writing it. */
const UNREADABLE_GRACE_MS = 5_000;
/** How often holders refresh the lock's mtime where the platform has no process start times. */
export const HEARTBEAT_MS = 2_000;
/** A heartbeat older than this looks stopped... */
export const HEARTBEAT_STALE_MS = 30_000;
/** ...and must stay unchanged while this waiter watches this long (monotonic), so a machine waking from sleep
 * (every holder paused, every mtime old) gives live holders time to beat again before anyone breaks their lock. */
export const HEARTBEAT_CONFIRM_MS = 3 * HEARTBEAT_MS;

let ownStartTime: number | null | undefined;

/** Swaps the staleness provider (tests run each provider on any platform); returns the previous one. */
export function setLockLiveness(next: LockLiveness): LockLiveness {
  const previous = useLockLiveness(next);
  ownStartTime = undefined;
  silentSince.clear();
  return previous;
}

function selfStartTime(): number | null {
  if (ownStartTime === undefined) ownStartTime = currentLockLiveness().startTime(process.pid);
  return ownStartTime;
}

function parseContent(text: string): LockContent | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return null;
    const v = value as Record<string, unknown>;
    if (typeof v.pid !== 'number' || !Number.isInteger(v.pid) || v.pid <= 0) return null;
    return {
      pid: v.pid,
      startTime: typeof v.startTime === 'number' ? v.startTime : null,
      boot: typeof v.boot === 'string' ? v.boot : null,
      purpose: typeof v.purpose === 'string' ? v.purpose : 'unknown',
      acquiredAt: typeof v.acquiredAt === 'number' ? v.acquiredAt : 0,
      token: typeof v.token === 'string' ? v.token : '',
    };
  } catch {
    return null;
  }
}

/** Per lock (token): when, on this process's monotonic clock, its heartbeat was first seen stopped at this mtime. */
const silentSince = new Map<string, { since: number; mtimeMs: number }>();

function heartbeatStopped(content: LockContent, mtimeMs: number): boolean {
  if (Date.now() - mtimeMs < HEARTBEAT_STALE_MS) {
    silentSince.delete(content.token);
    return false;
  }
  const now = currentLockLiveness().monotonicNow();
  const seen = silentSince.get(content.token);
  if (seen === undefined || seen.mtimeMs !== mtimeMs) {
    silentSince.set(content.token, { since: now, mtimeMs });
    return false;
  }
  return now - seen.since >= HEARTBEAT_CONFIRM_MS;
}

function holderAlive(content: LockContent, mtimeMs: number): boolean {
  const liveness = currentLockLiveness();
  if (!liveness.pidExists(content.pid)) return false;
  // Taken before the last boot: whatever runs under that pid now is another process.
  if (content.boot !== null && liveness.isEarlierBoot(content.boot)) return false;
  if (content.startTime !== null) {
    const current = content.pid === process.pid ? selfStartTime() : liveness.startTime(content.pid);
    // A different start time means the pid was reused by an unrelated process.
    if (current !== null) return current === content.startTime;
  }
  if (!liveness.heartbeat || content.pid === process.pid) return true;
  return !heartbeatStopped(content, mtimeMs);
}

function readRaw(lockPath: string): { text: string; mtimeMs: number } | null {
  try {
    const text = fs.readFileSync(lockPath, 'utf8');
    let mtimeMs = Date.now();
    try {
      mtimeMs = fs.statSync(lockPath).mtimeMs;
    } catch {
      // vanished between the two calls: treat as fresh, the next poll sees it gone
    }
    return { text, mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Stale = its holder is dead, or the file stayed unreadable past the grace period. */
function isStale(raw: { text: string; mtimeMs: number }): boolean {
  const content = parseContent(raw.text);
  if (content === null) return Date.now() - raw.mtimeMs > UNREADABLE_GRACE_MS;
  return !holderAlive(content, raw.mtimeMs);
}

/** Refreshes the lock's mtime while it is still ours, where the provider relies on heartbeats. */
function startHeartbeat(lockPath: string, text: string): () => void {
  if (!currentLockLiveness().heartbeat) return () => undefined;
  const timer = setInterval(() => {
    try {
      if (fs.readFileSync(lockPath, 'utf8') !== text) return;
      const now = new Date();
      fs.utimesSync(lockPath, now, now);
    } catch {
      // gone or unreadable for a moment: the next beat tries again
    }
  }, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

function createExclusive(lockPath: string, purpose: string): LockHandle | null {
  const content: LockContent = {
    pid: process.pid,
    startTime: selfStartTime(),
    boot: currentLockLiveness().currentBoot(),
    purpose,
    acquiredAt: Date.now(),
    token: randomUuid(),
  };
  const text = JSON.stringify(content);
  let fd: number;
  try {
    fd = fs.openSync(lockPath, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw error;
  }
  try {
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
  let released = false;
  const stopHeartbeat = startHeartbeat(lockPath, text);
  return {
    path: lockPath,
    release() {
      if (released) return;
      released = true;
      stopHeartbeat();
      const raw = readRaw(lockPath);
      if (raw !== null && raw.text === text) fs.rmSync(lockPath, { force: true });
    },
  };
}

/**
 * Removes a stale lock whose content we saw as `observed`. Breakers serialize on a short-lived
 * `<lock>.break` file and re-read the lock under it, so a waiter never deletes a lock that another waiter
 * has just created after breaking the same stale one.
 */
function breakStale(lockPath: string, observed: string): void {
  const breakerPath = `${lockPath}.break`;
  const breaker = createExclusive(breakerPath, 'break-stale-lock');
  if (breaker === null) {
    // A breaker whose holder died mid-break would block everyone: remove it if it is still the dead one.
    const raw = readRaw(breakerPath);
    if (raw !== null && isStale(raw)) {
      const again = readRaw(breakerPath);
      if (again !== null && again.text === raw.text) fs.rmSync(breakerPath, { force: true });
    }
    return;
  }
  try {
    const current = readRaw(lockPath);
    if (current !== null && current.text === observed && isStale(current)) {
      fs.rmSync(lockPath, { force: true });
      const token = parseContent(observed)?.token;
      if (token) silentSince.delete(token);
    }
  } finally {
    breaker.release();
  }
}

/** One attempt: takes the lock if free (or held by a dead process), else returns null without waiting. */
export function tryAcquireLock(lockPath: string, purpose: string): LockHandle | null {
  const handle = createExclusive(lockPath, purpose);
  if (handle !== null) return handle;
  const raw = readRaw(lockPath);
  if (raw === null) return createExclusive(lockPath, purpose);
  if (!isStale(raw)) return null;
  breakStale(lockPath, raw.text);
  return createExclusive(lockPath, purpose);
}

/** Who holds the lock, or null if nobody does. */
export function readLockHolder(lockPath: string): LockHolder | null {
  const raw = readRaw(lockPath);
  if (raw === null) return null;
  const content = parseContent(raw.text);
  if (content === null) return { pid: 0, purpose: 'unknown', alive: !isStale(raw) };
  return { pid: content.pid, purpose: content.purpose, alive: holderAlive(content, raw.mtimeMs) };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits (polling, never spinning) until the lock is ours; rejects with 'lock-timeout' after timeoutMs. */
export async function acquireLock(lockPath: string, options: AcquireLockOptions): Promise<LockHandle> {
  const deadline = Date.now() + options.timeoutMs;
  let delay = Math.max(1, options.pollMs ?? 1);
  for (;;) {
    const handle = tryAcquireLock(lockPath, options.purpose);
    if (handle !== null) return handle;
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      const holder = readLockHolder(lockPath);
      throw new AvhError(
        'lock-timeout',
        `Timed out after ${options.timeoutMs} ms waiting for the ${options.purpose} lock` +
          (holder ? ` held by process ${holder.pid} (${holder.purpose})` : ''),
        {
          lockPath,
          holderPid: holder?.pid ?? null,
          holderPurpose: holder?.purpose ?? null,
          timeoutMs: options.timeoutMs,
        },
      );
    }
    await sleep(Math.min(delay, remaining));
    delay = Math.min(delay * 1.5, Math.max(MAX_POLL_MS, options.pollMs ?? 0));
  }
}
