import * as fs from 'node:fs';

/**
 * A random (version 4) UUID, as crypto.randomUUID makes one, from the operating system's random source
 * (/dev/urandom, which crypto.randomUUID draws from too). Written by hand because loading node:crypto costs a new
 * process ~5 ms, most of a hook event's budget above Node's start (docs/design.md, "Fast hook events"); where
 * there is no /dev/urandom (Windows) it is crypto.randomUUID itself.
 */
export function randomUuid(): string {
  const bytes = Buffer.alloc(16);
  let fd: number;
  try {
    fd = fs.openSync('/dev/urandom', 'r');
  } catch {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only where there is no /dev/urandom
    return (require('node:crypto') as typeof import('node:crypto')).randomUUID();
  }
  try {
    for (let done = 0; done < 16;) done += fs.readSync(fd, bytes, done, 16 - done, null);
  } finally {
    fs.closeSync(fd);
  }
  bytes[6] = (bytes[6] & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
