/**
 * Whether the process a lock file (or a file named after its creator) records is still running: the platform's
 * provider, behind an interface so tests can run each provider anywhere. One provider is current per process;
 * the lock files (pidLock.ts) and the git layer's temporary files (through the git client) judge by it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';

/**
 * File-system timestamps can trail Date.now() by their granularity; a file this much older than a process's start
 * still counts as written by it (stale git locks, a conversation's session file).
 */
export const FS_CLOCK_SLACK_MS = 2_000;

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

// Chosen on first use, not at load: the CLI's entry bundle carries this module and may never judge a process.
let liveness: LockLiveness | undefined;

/** The staleness provider in use (others judge liveness of pids they recorded the same way locks do). */
export function currentLockLiveness(): LockLiveness {
  return (liveness ??= defaultLiveness());
}

/** Makes `next` the provider in use and returns the previous one; pidLock's setLockLiveness also resets its caches. */
export function useLockLiveness(next: LockLiveness): LockLiveness {
  const previous = currentLockLiveness();
  liveness = next;
  return previous;
}
