import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Flushes a directory's entries (new names, renames) to disk. Windows cannot open a directory for fsync,
 * and its rename is already durable through NTFS's journal, so it is skipped there.
 */
export function fsyncDirectory(dir: string): void {
  if (process.platform === 'win32') return;
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } catch (error) {
    // Some file systems (certain network and FUSE mounts) cannot fsync a directory: best effort there.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EISDIR') throw error;
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes all of `data` to an open descriptor, looping over short writes. */
export function writeAll(fd: number, data: Uint8Array): void {
  let done = 0;
  while (done < data.length) {
    done += fs.writeSync(fd, data, done, data.length - done);
  }
}

/**
 * Replaces `target` so that after a crash it holds either the old or the new content, never a mix:
 * temp file beside the target, fsync, rename, fsync the directory. The temp name carries the pid so
 * concurrent writers in different processes never share one.
 */
export function writeFileAtomic(target: string, data: Uint8Array | string): void {
  const tmp = `${target}.tmp-${process.pid}`;
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    writeAll(fd, bytes);
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(tmp, target);
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
  fsyncDirectory(path.dirname(target));
}
