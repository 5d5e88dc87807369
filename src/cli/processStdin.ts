import * as fs from 'node:fs';
import type * as ttyModule from 'node:tty';
import { AvhError } from '../core/errors';

const MAX_STDIN_BYTES = 16 * 1024 * 1024;
const tooLarge = () => new AvhError('invalid-input', 'stdin is larger than 16 MiB.');

/**
 * This process's stdin as text (empty on a terminal); more than 16 MiB is refused. A hook's payload arrives on a
 * blocking pipe that the agent closes once written: it is read synchronously, without the stream machinery
 * `process.stdin` loads (~10 ms of a hook event here). A non-blocking stdin is read as a stream.
 */
export function readProcessStdin(): Promise<string> {
  if (isTerminal()) return Promise.resolve('');
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      const n = fs.readSync(0, chunk, 0, chunk.length, null);
      if (n === 0) return Promise.resolve(Buffer.concat(chunks).toString('utf8'));
      size += n;
      if (size > MAX_STDIN_BYTES) return Promise.reject(tooLarge());
      chunks.push(chunk.subarray(0, n));
    }
  } catch (error) {
    // EAGAIN: a non-blocking descriptor (what was read so far is kept); EOF-like errors of a closed stdin: empty.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EOF' || code === 'EBADF' || code === 'EINVAL')
      return Promise.resolve(Buffer.concat(chunks).toString('utf8'));
    if (code !== 'EAGAIN') return Promise.reject(error);
  }
  return readAsStream(chunks, size);
}

/**
 * Whether stdin is a terminal. node:tty (with Node's streams and sockets, ~2 ms) is loaded only for a character
 * device: a hook's stdin is a pipe, answered by one fstat.
 */
function isTerminal(): boolean {
  try {
    if (!fs.fstatSync(0).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('node:tty') as typeof ttyModule).isatty(0);
}

function readAsStream(chunks: Buffer[], already: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = already;
    process.stdin.on('data', (d: Buffer) => {
      size += d.length;
      if (size > MAX_STDIN_BYTES) {
        reject(tooLarge());
        process.stdin.destroy();
      } else chunks.push(d);
    });
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

/** readProcessStdin read at most once, when first asked (a hook's fast path and its full path share one read). */
export function stdinOnce(): () => Promise<string> {
  let read: Promise<string> | undefined;
  return () => (read ??= readProcessStdin());
}
