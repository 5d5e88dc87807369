/**
 * Starting one git process and collecting what it printed: the one implementation both ways of starting git use
 * (the git client spawning it itself, and the git launcher process doing it for the client: gitClient.ts,
 * gitLauncherProcess.ts). Output is decoded and string input encoded losslessly (pathBytes.ts). No shell; a command
 * without input reads /dev/null instead of an empty pipe (a socket and its streams fewer per spawn); a timeout
 * SIGKILLs it. Decides nothing: the client maps the outcome to a result or a GitCommandError.
 */
import type * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * node:child_process, loaded when first needed: it brings Node's streams and sockets (~2 ms), which the CLI's entry
 * must not pay for a pre-tool event it answers without git (cli/hooks/toolShortcut.ts). A builtin's require is left
 * where it is by the bundler.
 */
function childProcessModule(): typeof childProcess {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('node:child_process') as typeof childProcess;
}
import { decodeBytes, encodeBytes } from './pathBytes';

export interface SpawnRequest {
  cwd: string;
  env: NodeJS.ProcessEnv;
  input?: string | Uint8Array;
  timeoutMs: number;
  /**
   * Collect stdout through an unlinked temporary file instead of a pipe, and drop stderr: no socket, stream or their
   * setup in this process (about 3 ms of a hook event's main thread here). For a short-lived process's first command,
   * with small output, whose failure needs no message (the hook's early status: a failure declines the fast path,
   * and the full path runs the status again). Never with input.
   */
  stdoutViaFile?: boolean;
  /** stdout is not wanted (a command run for its exit code and stderr): it goes nowhere, and `stdout` is empty. */
  stdoutIgnored?: boolean;
}

export type SpawnOutcome =
  | { kind: 'spawn-error'; code: string }
  | { kind: 'closed'; code: number; timedOut: boolean; stdout: string; stderr: string };

/** Runs `file args`; `onStarted` gets the child's pid right after the spawn (test crash points use it). */
export function spawnCollect(
  file: string,
  args: readonly string[],
  request: SpawnRequest,
  onStarted?: (pid: number | undefined) => void,
): Promise<SpawnOutcome> {
  if (request.stdoutViaFile && request.input === undefined) {
    const fd = openOutputFile();
    if (fd !== null) return spawnToFile(file, args, request, fd, onStarted);
  }
  return new Promise((resolve) => {
    const { input } = request;
    let child;
    try {
      child = childProcessModule().spawn(file, args as string[], {
        cwd: request.cwd,
        env: request.env,
        stdio: [input === undefined ? 'ignore' : 'pipe', request.stdoutIgnored ? 'ignore' : 'pipe', 'pipe'],
      });
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
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ kind: 'spawn-error', code: error.code ?? 'EINVAL' });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        kind: 'closed',
        code: code ?? -1,
        timedOut,
        // Decoded losslessly: a file name that is not UTF-8 keeps its bytes (pathBytes.ts).
        stdout: decodeBytes(Buffer.concat(out)),
        stderr: decodeBytes(Buffer.concat(err)),
      });
    });
    if (input !== undefined) {
      child.stdin!.on('error', () => {
        /* git may exit before reading its input; the exit code tells */
      });
      child.stdin!.end(typeof input === 'string' ? encodeBytes(input) : input);
    }
  });
}

let outputFiles = 0;

/**
 * A file for a child's stdout, created exclusively in the temporary folder (never through a link someone planted:
 * an existing name fails) and unlinked at once: it vanishes with the descriptor, whatever happens to this process.
 * Null when it cannot be made (a pipe then does).
 */
function openOutputFile(): number | null {
  const name = path.join(os.tmpdir(), `agent-versions-${process.pid}-${Date.now()}-${outputFiles++}.out`);
  let fd: number;
  try {
    fd = fs.openSync(name, 'wx+', 0o600);
  } catch {
    return null;
  }
  try {
    fs.unlinkSync(name);
  } catch {
    closeQuietly(fd);
    return null;
  }
  return fd;
}

function spawnToFile(
  file: string,
  args: readonly string[],
  request: SpawnRequest,
  out: number,
  onStarted?: (pid: number | undefined) => void,
): Promise<SpawnOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    // Once only: a failed start can report both 'error' and 'exit', and a descriptor closed twice could be another's by
    // then.
    const done = (outcome: SpawnOutcome) => {
      if (settled) return;
      settled = true;
      closeQuietly(out);
      resolve(outcome);
    };
    let child;
    try {
      child = childProcessModule().spawn(file, args as string[], {
        cwd: request.cwd,
        env: request.env,
        stdio: ['ignore', out, 'ignore'],
      });
    } catch (error) {
      done({ kind: 'spawn-error', code: (error as NodeJS.ErrnoException).code ?? 'EINVAL' });
      return;
    }
    onStarted?.(child.pid);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, request.timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done({ kind: 'spawn-error', code: error.code ?? 'EINVAL' });
    });
    // With no pipe, 'exit' is the end: everything the child wrote is in the file.
    child.on('exit', (code) => {
      clearTimeout(timer);
      try {
        done({ kind: 'closed', code: code ?? -1, timedOut, stdout: readAll(out), stderr: '' });
      } catch (error) {
        done({ kind: 'spawn-error', code: (error as NodeJS.ErrnoException).code ?? 'EIO' });
      }
    });
  });
}

function readAll(fd: number): string {
  const size = fs.fstatSync(fd).size;
  const buffer = Buffer.alloc(size);
  let read = 0;
  while (read < size) {
    const n = fs.readSync(fd, buffer, read, size - read, read);
    if (n === 0) break;
    read += n;
  }
  return decodeBytes(buffer.subarray(0, read));
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already closed
  }
}
