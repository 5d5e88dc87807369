import { execFileSync, spawnSync } from 'node:child_process';
import { waitUntil } from './agentProcess';

/**
 * An agent's interactive mode in a real terminal: a tmux server of its own (`tmux -L <socket>`, so parallel tests
 * and the user's tmux never meet), one window of a fixed size, keys sent as a user types them, the screen read back
 * as text. `kill()` ends the server and everything in it.
 */
export class TmuxSession {
  private static count = 0;

  private constructor(readonly socket: string) {}

  static start(command: string[], options: { cwd: string; env: NodeJS.ProcessEnv; width?: number; height?: number }) {
    const socket = `avh-agents-${process.pid}-${++TmuxSession.count}`;
    const session = new TmuxSession(socket);
    const envWords = Object.entries({ TERM: 'xterm-256color', ...options.env })
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${shellQuote(String(v))}`);
    const line = ['exec', 'env', '-i', ...envWords, ...command.map(shellQuote)].join(' ');
    session.tmux(
      'new-session',
      '-d',
      '-s',
      'agent',
      '-x',
      String(options.width ?? 160),
      '-y',
      String(options.height ?? 50),
      '-c',
      options.cwd,
      line,
    );
    return session;
  }

  /** Named keys (`Enter`, `Escape`, `C-c`, `Down`), as tmux send-keys takes them. */
  keys(...keys: string[]): void {
    this.tmux('send-keys', '-t', 'agent', ...keys);
  }

  /** Literal text (no key names), as a user types it. */
  type(text: string): void {
    this.tmux('send-keys', '-t', 'agent', '-l', text);
  }

  screen(): string {
    const r = spawnSync('tmux', ['-L', this.socket, 'capture-pane', '-p', '-t', 'agent'], { encoding: 'utf8' });
    return r.status === 0 ? r.stdout : '';
  }

  /** Whether the agent still runs (the session ends with its one process). */
  alive(): boolean {
    return spawnSync('tmux', ['-L', this.socket, 'has-session', '-t', 'agent']).status === 0;
  }

  async waitForScreen(pattern: RegExp, what: string, timeoutMs = 30_000): Promise<string> {
    let last = '';
    try {
      await waitUntil(() => pattern.test((last = this.screen())), what, timeoutMs);
    } catch (error) {
      throw new Error(`${(error as Error).message}; the screen was:\n${last}`);
    }
    return last;
  }

  async waitForExit(what: string, timeoutMs = 15_000): Promise<void> {
    await waitUntil(() => !this.alive(), what, timeoutMs);
  }

  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }

  private tmux(...args: string[]): void {
    execFileSync('tmux', ['-L', this.socket, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  }
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
