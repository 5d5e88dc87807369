/**
 * The git launcher process (dist/gitLauncher.js; docs/design.md, "Starting git from a large process"): a small
 * Node process the extension host forks once. It starts each git command it is sent exactly as runGit would
 * (the same resolved executable, arguments, folder, environment, input and timeout) and sends back what git
 * printed and how it exited. Starting a process blocks the starting thread for a time that grows with that
 * process's memory; from this ~40 MB process it costs a fraction of what it costs the extension host.
 * It reads nothing else and decides nothing: every check stays in the process that sent the request.
 */
import { spawn } from 'node:child_process';
import type { LaunchReply, LaunchRequest } from './gitLauncher';

function run(request: LaunchRequest, reply: (message: LaunchReply) => void): void {
  const { id, input } = request;
  let child;
  try {
    child = spawn(request.git, request.args, { cwd: request.cwd, env: request.env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  } catch (error) {
    reply({ id, kind: 'spawn-error', code: (error as NodeJS.ErrnoException).code ?? 'EINVAL' });
    return;
  }
  reply({ id, kind: 'started', pid: child.pid ?? -1 });
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
    reply({ id, kind: 'spawn-error', code: error.code ?? 'EINVAL' });
  });
  child.on('close', (code) => {
    clearTimeout(timer);
    reply({ id, kind: 'closed', code: code ?? -1, timedOut, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
  });
  if (input !== undefined) {
    child.stdin!.on('error', () => { /* git may exit before reading its input; the exit code tells */ });
    child.stdin!.end(typeof input === 'string' ? input : Buffer.from(input));
  }
}

/** Only as the forked launcher (a parent with an IPC channel); importing this module does nothing. */
if (typeof process.send === 'function') {
  const send = process.send.bind(process);
  const reply = (message: LaunchReply) => {
    // The parent is gone: nothing is left to answer to (its git commands finish on their own, as they would have).
    try { send(message); } catch { process.exit(0); }
  };
  process.on('message', (message: LaunchRequest) => run(message, reply));
  // The parent exited or closed the channel (deactivation): nothing more will be asked.
  process.on('disconnect', () => process.exit(0));
  reply({ id: 0, kind: 'ready', pid: process.pid });
}
