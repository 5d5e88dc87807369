/**
 * Starting git from a large process (docs/design.md): `child_process.spawn` blocks the calling thread while the
 * kernel copies the caller's memory map and git is exec'd, for a time that grows with the caller's memory
 * (measured here: 5 ms at 43 MB, 11 ms at 144 MB, 14 ms at 350 MB). The extension host is that large process
 * and is also the thread that runs every extension, so a long-lived host starts one small launcher process
 * (gitLauncherMain.ts) and the git client (gitClient.ts) sends it its commands. The launcher is only ever a faster way
 * to start the
 * same command: until it is ready, when it is gone, and in short-lived processes (the CLI), the client spawns
 * git itself. A command whose launcher died before answering fails like a git that was killed.
 */
import { ChildProcess, fork } from 'node:child_process';
import * as path from 'node:path';
import type { SpawnOutcome, SpawnRequest } from './spawnCollect';

export interface LaunchRequest extends SpawnRequest {
  id: number;
  git: string;
  args: string[];
}

/** What the launcher is sent: a command to start, or the id of one whose process to kill (its caller gave up). */
export type LaunchMessage = LaunchRequest | { cancel: number };

/** What the launcher sends: once 'ready', then one outcome of spawnCollect per request. */
export type LaunchReply = { id: number; kind: 'ready' } | ({ id: number } & SpawnOutcome);

export type LaunchOutcome = ({ id: number } & SpawnOutcome) | { id: number; kind: 'launcher-gone' };

/**
 * The launcher beside this module: dist/gitLauncher.js in the bundles (scripts/build.mjs), the tsc output otherwise.
 */
declare const AVH_GIT_LAUNCHER: string | undefined;
const LAUNCHER_FILE = typeof AVH_GIT_LAUNCHER === 'string' ? AVH_GIT_LAUNCHER : 'gitLauncherMain.js';

/** A launcher that keeps dying is not started again: git is then spawned directly, as in the CLI. */
const MAX_RESTARTS = 3;

interface Pending {
  settle: (outcome: LaunchOutcome) => void;
}

/**
 * The parent's side of one launcher process: what the git client (gitClient.ts) sends its commands to once it is ready.
 */
export class GitLauncher {
  private child: ChildProcess | undefined;
  private ready = false;
  private nextId = 1;
  private restarts = 0;
  private readonly pending = new Map<number, Pending>();
  private readyWaiters: Array<(ready: boolean) => void> = [];

  constructor(private readonly file: string = path.join(__dirname, LAUNCHER_FILE)) {}

  start(): void {
    if (this.child) return;
    const child = fork(this.file, [], {
      // ELECTRON_RUN_AS_NODE: under Electron, process.execPath is the app, which then runs as plain Node.
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    this.child = child;
    child.on('message', (message: LaunchReply) => {
      if (message.kind === 'ready') {
        this.ready = true;
        this.keepAliveWhileBusy();
        this.wakeReadyWaiters(true);
      } else {
        const entry = this.pending.get(message.id);
        this.pending.delete(message.id);
        this.keepAliveWhileBusy();
        entry?.settle(message);
      }
    });
    child.on('error', () => this.gone(child));
    child.on('exit', () => this.gone(child));
    // The launcher never keeps this process alive by itself; only commands waiting for an answer do.
    child.unref();
    this.keepAliveWhileBusy();
  }

  /**
   * Whether a command sent now is answered by a running launcher. A launcher that died is started again (a few times).
   */
  get available(): boolean {
    if (!this.child && this.restarts < MAX_RESTARTS) {
      this.restarts++;
      this.start();
    }
    return this.ready && this.child?.connected === true;
  }

  run(request: Omit<LaunchRequest, 'id'>, signal?: AbortSignal): Promise<LaunchOutcome> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, { settle: resolve });
      try {
        this.child!.send({ ...request, id });
      } catch {
        this.pending.delete(id);
        resolve({ id, kind: 'launcher-gone' });
      }
      // The launcher kills the command's git; its outcome still comes back (and the client reports it cancelled).
      signal?.addEventListener('abort', () => this.pending.has(id) && this.send({ cancel: id }), { once: true });
      this.keepAliveWhileBusy();
    });
  }

  private send(message: LaunchMessage): void {
    try {
      this.child?.send(message);
    } catch {
      /* gone: its pending commands are settled as such */
    }
  }

  stop(): void {
    const child = this.child;
    if (!child) return;
    this.gone(child);
    if (child.connected) child.disconnect();
  }

  private gone(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.ready = false;
    const waiting = [...this.pending.entries()];
    this.pending.clear();
    for (const [id, entry] of waiting) entry.settle({ id, kind: 'launcher-gone' });
    this.wakeReadyWaiters(false);
  }

  /** Resolves true once the launcher answers commands, false if it stopped first. */
  whenReady(): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    if (!this.child) return Promise.resolve(false);
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  private wakeReadyWaiters(ready: boolean): void {
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const wake of waiters) wake(ready);
  }

  private keepAliveWhileBusy(): void {
    const channel = this.child?.channel as { ref(): void; unref(): void } | undefined;
    if (!channel) return;
    if (this.pending.size > 0 || !this.ready) channel.ref();
    else channel.unref();
  }
}
