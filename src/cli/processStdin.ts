import { AvhError } from '../core/errors';

/** This process's stdin as text (empty on a terminal); more than 16 MiB is refused. */
export function readProcessStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    if (process.stdin.isTTY) return resolve('');
    const chunks: Buffer[] = [];
    let size = 0;
    process.stdin.on('data', (d: Buffer) => {
      size += d.length;
      if (size > 16 * 1024 * 1024) {
        reject(new AvhError('invalid-input', 'stdin is larger than 16 MiB.'));
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
