/**
 * The git launcher process (dist/gitLauncher.js; docs/design.md, "Starting git from a large process"): a small
 * Node process the extension host forks once. It starts each git command it is sent exactly as the git client
 * would (spawnCollect, with the resolved executable, arguments, folder, environment, input and timeout the client
 * chose) and sends back what git printed and how it exited. Starting a process blocks the starting thread for a time
 * that grows with that process's memory; from this ~40 MB process it costs a fraction of what it costs the
 * extension host. It reads nothing else and decides nothing: every check stays in the process that sent the request.
 */
import type { LaunchMessage, LaunchReply } from './gitLauncherProcess';
import { spawnCollect } from './spawnCollect';

/** Only as the forked launcher (a parent with an IPC channel); importing this module does nothing. */
if (typeof process.send === 'function') {
  const send = process.send.bind(process);
  const reply = (message: LaunchReply) => {
    // The parent is gone: nothing is left to answer to (its git commands finish on their own, as they would have).
    try {
      send(message);
    } catch {
      process.exit(0);
    }
  };
  /** The git process of each command still running, so a cancelled one can be killed. */
  const running = new Map<number, number>();
  process.on('message', (message: LaunchMessage) => {
    if ('cancel' in message) {
      const pid = running.get(message.cancel);
      if (pid !== undefined) killQuietly(pid);
      return;
    }
    const { id } = message;
    void spawnCollect(message.git, message.args, message, (pid) => pid && running.set(id, pid)).then((outcome) => {
      running.delete(id);
      reply({ id, ...outcome });
    });
  });
  // The parent exited or closed the channel (deactivation): nothing more will be asked.
  process.on('disconnect', () => process.exit(0));
  reply({ id: 0, kind: 'ready' });
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already finished */
  }
}
