/**
 * Starting one git process and collecting what it printed: the one implementation both ways of starting git use
 * (runGit spawning it itself, and the git launcher process doing it for runGit: gitLauncher.ts). No shell; a
 * command without input reads /dev/null instead of an empty pipe (a socket and its streams fewer per spawn); a
 * timeout SIGKILLs it. Decides nothing: runGit maps the outcome to a result or a GitCommandError.
 */
import { spawn } from 'node:child_process';

export interface SpawnRequest {
  cwd: string;
  env: NodeJS.ProcessEnv;
  input?: string | Uint8Array;
  timeoutMs: number;
}

export type SpawnOutcome =
  | { kind: 'spawn-error'; code: string }
  | { kind: 'closed'; code: number; timedOut: boolean; stdout: string; stderr: string };

/** Runs `file args`; `onStarted` gets the child's pid right after the spawn (test crash points use it). */
export function spawnCollect(file: string, args: readonly string[], request: SpawnRequest, onStarted?: (pid: number | undefined) => void): Promise<SpawnOutcome> {
  return new Promise((resolve) => {
    const { input } = request;
    let child;
    try {
      child = spawn(file, args as string[], { cwd: request.cwd, env: request.env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    } catch (error) {
      resolve({ kind: 'spawn-error', code: (error as NodeJS.ErrnoException).code ?? 'EINVAL' });
      return;
    }
    onStarted?.(child.pid);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, request.timeoutMs);
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ kind: 'spawn-error', code: error.code ?? 'EINVAL' });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ kind: 'closed', code: code ?? -1, timedOut, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    if (input !== undefined) {
      child.stdin!.on('error', () => { /* git may exit before reading its input; the exit code tells */ });
      child.stdin!.end(input);
    }
  });
}
