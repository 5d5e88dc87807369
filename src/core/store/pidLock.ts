/**
 * Cross-process lock files that name their holder. Written by hand rather than with proper-lockfile because
 * that library judges staleness by mtime alone (a holder paused longer than the stale time loses its lock),
 * while every holder here is a local process whose liveness we can check: pid plus process start time and the
 * boot it was taken in (Linux, exact), or pid plus boot plus a heartbeat elsewhere (see LockLiveness).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { AvhError } from '../errors';
import { randomUuid } from '../randomId';

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

/**
 * The platform-specific half of lock staleness, behind an interface so tests can run each provider anywhere.
 * A holder is alive when its pid exists, the lock was taken in this boot, and (where known) the pid's start
 * time is the recorded one; where start times are unknown, holders refresh the file's mtime (`heartbeat`).
 */
export interface LockLiveness {
  readonly name: string;
  pidExists(pid: number): boolean;
  /** This incarnation of `pid` (its start time), or null where the platform cannot tell cheaply. */
  startTime(pid: number): number | null;
  /** The current boot's identity, recorded in every lock; null where unknown. */
  currentBoot(): string | null;
  /** True only when `recorded` certainly names an earlier boot: every process of that boot is gone. */
  isEarlierBoot(recorded: string): boolean;
  /** Holders refresh the lock's mtime while they hold it; a waiter judges a silent holder dead. */
  readonly heartbeat: boolean;
  /** Monotonic milliseconds (stops during sleep), for confirming that a heartbeat really stopped. */
  monotonicNow(): number;
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
/** Boot times computed from the wall clock and the uptime wobble; only a larger gap means another boot. */
const BOOT_SLACK_MS = 5 * 60_000;

function pidExists(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reads field 22 (starttime) of /proc/<pid>/stat; null when not on Linux or the process is gone. */
export function processStartTime(pid: number): number | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may contain spaces and parentheses: count fields after its closing paren.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const value = Number(rest[22 - 3]);
  return Number.isFinite(value) ? value : null;
}

function readBootId(): string | null {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Linux: exact. Start times from /proc (clock ticks since boot), the kernel's random boot id. */
export function linuxLiveness(): LockLiveness {
  let boot: string | null | undefined;
  const current = () => (boot === undefined ? (boot = readBootId()) : boot);
  return {
    name: 'linux-proc',
    pidExists,
    startTime: processStartTime,
    currentBoot: current,
    isEarlierBoot: (recorded) => current() !== null && recorded !== current(),
    heartbeat: false,
    monotonicNow: () => performance.now(),
  };
}

/**
 * macOS, Windows and the rest: no cheap start time, so a pid reused after a crash is caught by the boot (taken
 * before the last boot → stale) or by the holder's heartbeat (a reused pid never refreshes our lock file).
 * The boot is named by its start on the wall clock (now − uptime).
 */
export function portableLiveness(
  clock: { now(): number; uptimeSeconds(): number } = { now: Date.now, uptimeSeconds: os.uptime },
): LockLiveness {
  const bootStart = () => clock.now() - clock.uptimeSeconds() * 1000;
  return {
    name: 'portable',
    pidExists,
    startTime: () => null,
    currentBoot: () => String(Math.round(bootStart())),
    isEarlierBoot: (recorded) => Number.isFinite(Number(recorded)) && Number(recorded) < bootStart() - BOOT_SLACK_MS,
    heartbeat: true,
    monotonicNow: () => performance.now(),
  };
}

function defaultLiveness(): LockLiveness {
  return process.platform === 'linux' && processStartTime(process.pid) !== null ? linuxLiveness() : portableLiveness();
}

let liveness: LockLiveness = defaultLiveness();
let ownStartTime: number | null | undefined;

/** Swaps the staleness provider (tests run each provider on any platform); returns the previous one. */
export function setLockLiveness(next: LockLiveness): LockLiveness {
  const previous = liveness;
  liveness = next;
  ownStartTime = undefined;
  silentSince.clear();
  return previous;
}

/** The staleness provider in use (others judge liveness of pids they recorded the same way locks do). */
export function currentLockLiveness(): LockLiveness {
  return liveness;
}

function selfStartTime(): number | null {
  if (ownStartTime === undefined) ownStartTime = liveness.startTime(process.pid);
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
  const now = liveness.monotonicNow();
  const seen = silentSince.get(content.token);
  if (seen === undefined || seen.mtimeMs !== mtimeMs) {
    silentSince.set(content.token, { since: now, mtimeMs });
    return false;
  }
  return now - seen.since >= HEARTBEAT_CONFIRM_MS;
}

function holderAlive(content: LockContent, mtimeMs: number): boolean {
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
  if (!liveness.heartbeat) return () => undefined;
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
    boot: liveness.currentBoot(),
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
