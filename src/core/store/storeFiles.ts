/**
 * The store's file-system seam and how its read failures are classified. Only proven damage (bytes that fail
 * validation) may quarantine the store; an error reading a file (EACCES, EMFILE, an antivirus's EBUSY, EIO…)
 * proves nothing about its content, so it is retried, then reported with nothing changed.
 */
import * as fs from 'node:fs';
import { AvhError } from '../errors';

/** The node:fs calls the store reads through. Tests substitute one that fails with chosen errnos. */
export type StoreFileSystem = Pick<typeof fs, 'readFileSync' | 'openSync' | 'fstatSync' | 'statSync' | 'readSync'>;

/** Damage found in the bytes on disk: `open` quarantines on it; a running store refuses further work. */
export class StoreDamage extends Error {
  constructor(
    readonly reason: 'corrupt' | 'unreadable',
    readonly what: string,
  ) {
    super(`state database ${reason}: ${what}`);
  }
}

/** A file could not be read (not damage): retried, then reported. */
export class StoreUnreadable extends Error {
  constructor(
    readonly what: string,
    readonly code: string,
  ) {
    super(`cannot read the state ${what} (${code})`);
  }
}

/** Waits between retries of a read that failed: ~0.75 s in all, enough for an antivirus scan or an fd spike. */
export const READ_RETRY_DELAYS_MS: readonly number[] = [25, 50, 100, 200, 400];

/** The errno code of a failed file operation (`ENOENT`…), or `unknown`: safe to show, never a path. */
export function errnoCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : 'unknown';
}

function unreadable(what: string, error: unknown): StoreUnreadable {
  return new StoreUnreadable(what, errnoCode(error));
}

/** The whole file, or null when it does not exist. */
export function readOrNull(files: StoreFileSystem, file: string, what: string): Buffer | null {
  try {
    return files.readFileSync(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw unreadable(what, error);
  }
}

/** The file's stat, or null when it does not exist; other failures are StoreUnreadable. */
export function statOrNull(files: StoreFileSystem, file: string, what: string): fs.Stats | null {
  try {
    return files.statSync(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw unreadable(what, error);
  }
}

/** Bytes [start, end) of an open file; shorter if the file ends first. */
export function readAt(files: StoreFileSystem, fd: number, start: number, end: number, what: string): Buffer {
  const buf = Buffer.alloc(end - start);
  let done = 0;
  try {
    while (done < buf.length) {
      const n = files.readSync(fd, buf, done, buf.length - done, start + done);
      if (n === 0) return buf.subarray(0, done);
      done += n;
    }
  } catch (error) {
    throw unreadable(what, error);
  }
  return buf;
}

/**
 * Runs `attempt` (synchronous work under the caller's lock), retrying while it fails with StoreUnreadable;
 * after the last retry reports "cannot read …, nothing changed". Other errors pass through unchanged.
 */
export async function retryUnreadable<T>(
  attempt: () => T,
  dir: string,
  delays: readonly number[] = READ_RETRY_DELAYS_MS,
): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return attempt();
    } catch (error) {
      if (!(error instanceof StoreUnreadable)) throw error;
      if (n >= delays.length) {
        throw new AvhError(
          'store-unavailable',
          `Cannot read the state ${error.what} (${error.code}); nothing changed. Try again; if it keeps failing, ` +
            `check the permissions of ${dir}.`,
          { what: error.what, code: error.code },
          { cause: error },
        );
      }
      await new Promise<void>((resolve) => setTimeout(resolve, delays[n]));
    }
  }
}
