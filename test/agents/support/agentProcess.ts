import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';

/**
 * A real agent run as a child process (print / exec mode). Spawned asynchronously: the model mock answers from
 * this very process, so a synchronous spawn would deadlock it. Killed (its whole process group) on timeout and by
 * `stop()`, so no agent outlives its test.
 */

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
}

export interface AgentRun {
  child: ChildProcess;
  startedAt: number;
  exited: Promise<AgentExit>;
  /** Sends `signal` to the agent itself (as a terminal's Ctrl+C reaches the foreground process). */
  signal(signal: NodeJS.Signals): void;
  /** Kills the agent's whole process group (its shells and hooks too) and waits for it to exit. */
  stop(): Promise<AgentExit>;
}

const running = new Set<AgentRun>();

export function startAgent(
  bin: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number; stdin?: string },
): AgentRun {
  const startedAt = Date.now();
  const child = spawn(bin, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true, // its own process group: stop() reaches the hooks and shells it started
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  child.stdin!.end(options.stdin ?? '');
  let timedOut = false;
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup('SIGKILL');
  }, options.timeoutMs ?? 60_000);
  const exited = new Promise<AgentExit>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(run);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - startedAt, timedOut });
    });
  });
  const run: AgentRun = {
    child,
    startedAt,
    exited,
    signal: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    stop: async () => {
      killGroup('SIGKILL');
      return exited;
    },
  };
  running.add(run);
  return run;
}

/** Kills every agent still running (an afterEach safety net). */
export async function stopAllAgents(): Promise<void> {
  await Promise.all([...running].map((r) => r.stop()));
}

/**
 * The processes that belong to a test's own temp folder `root`: their command line names it or they run inside it
 * (an agent's hooks and shells run in the repository). A print-mode agent can exit before its hooks have: Claude
 * Code does not wait for StopFailure hooks, which run on after it exits.
 */
export function processesUnder(root: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const cwd = fs.readlinkSync(`/proc/${entry}/cwd`);
      if (cmdline.includes(root) || cwd === root || cwd.startsWith(`${root}/`)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** Waits until nothing runs under `root` any more (the hooks an exited agent left have finished). */
export async function settled(root: string, timeoutMs = 15_000): Promise<void> {
  await waitUntil(() => processesUnder(root).length === 0, `the hooks under ${root} to finish`, timeoutMs);
}

/** Kills (by pid) what still runs under `root` (a daemon, a hook); returns how many, so a test can report them. */
export function killProcessesUnder(root: string): number {
  const pids = processesUnder(root);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return pids.length;
}

/**
 * Kills what a test's agents left running (every process under `root`, by pid), until none is left, so the test's
 * temp folder can be removed; returns how many there were.
 */
export async function sweepProcesses(root: string, timeoutMs = 10_000): Promise<number> {
  let killed = 0;
  await waitUntil(
    () => {
      const n = killProcessesUnder(root);
      killed += n;
      return n === 0;
    },
    `processes under ${root} to exit`,
    timeoutMs,
  );
  return killed;
}

/** Polls `condition` every 50 ms until it holds, or fails with `what` after timeoutMs. */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
