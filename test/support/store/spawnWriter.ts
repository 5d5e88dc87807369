import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

export const WRITER = path.join(__dirname, 'writer.js');

export interface WriterProcess {
  readonly proc: ChildProcess;
  /** Complete stdout lines so far. */
  readonly lines: string[];
  readonly stderr: () => string;
  /** Resolves with the first line matching `pattern` (already seen or yet to come). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Acknowledged transaction numbers ("ack <n> <counter>"). */
  acked(): number[];
}

/** Spawns test/support/store/writer.js (compiled) with the running Node. */
export function spawnWriter(args: string[], env: Record<string, string> = {}): WriterProcess {
  const proc = spawn(process.execPath, [WRITER, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let partial = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  proc.stdout?.setEncoding('utf8');
  proc.stdout?.on('data', (chunk: string) => {
    partial += chunk;
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.pattern.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (chunk: string) => (err += chunk));
  // 'close' (not 'exit') so every stdout line has been read when it resolves.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    proc,
    lines,
    stderr: () => err,
    exited,
    waitForLine(pattern, timeoutMs = 20_000) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no line ${pattern} within ${timeoutMs} ms; stderr: ${err}`)),
          timeoutMs,
        );
        const waiter = {
          pattern,
          resolve: (line: string) => {
            clearTimeout(timer);
            resolve(line);
          },
        };
        waiters.push(waiter);
        void exited.then(() => {
          if (waiters.includes(waiter)) {
            clearTimeout(timer);
            reject(new Error(`writer exited before ${pattern}; stderr: ${err}`));
          }
        });
      });
    },
    acked: () => lines.filter((l) => l.startsWith('ack ')).map((l) => Number(l.split(' ')[1])),
  };
}
