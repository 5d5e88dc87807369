import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeBytes, fsPath } from './pathBytes';
import { objectFormatFromFiles, type GitRepository, type ObjectFormat } from './repository';

/**
 * Index entries git does not look at (issue 25): `--skip-worktree` and `--assume-unchanged` (which
 * `core.ignoreStat=true` sets on every entry git writes). `git status` and `git add` skip them, so a local edit
 * there is in no snapshot unless we look for them. Read straight from the index file, with no git process (about
 * a millisecond for 20,000 entries here; `git ls-files -v` costs 12–15 ms), and only their flags and paths.
 */

/** One flagged index entry: its path, git mode (octal, `100644`) and object id as the index holds them. */
export interface FlaggedEntry {
  path: string;
  mode: string;
  oid: string;
  /** The skip-worktree bit (a sparse checkout's files outside the cone, or a user's `--skip-worktree`). */
  skipWorktree: boolean;
  /** The assume-unchanged bit (a user's `--assume-unchanged`, or every entry git writes under core.ignoreStat). */
  assumeUnchanged: boolean;
}

const CE_VALID = 0x8000;
const CE_EXTENDED = 0x4000;
const CE_NAMEMASK = 0x0fff;
const CE_SKIP_WORKTREE = 0x4000;
/** Fixed fields before the object id: ctime, mtime (seconds and nanoseconds), dev, ino, mode, uid, gid, size. */
const STAT_BYTES = 40;
const OID_BYTES: Readonly<Record<ObjectFormat, number>> = { sha1: 20, sha256: 32 };

/**
 * The flagged entries of the index file `file` (empty lists when it does not exist). Null when the file is one this
 * reader does not take apart (a split index, an unknown version, anything malformed): the caller then asks git.
 */
export function readFlaggedEntries(file: string, format: ObjectFormat): FlaggedEntry[] | null {
  let data: Buffer;
  try {
    data = readIndexFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    return null;
  }
  try {
    return parsedIndex(data, OID_BYTES[format])?.flagged.slice() ?? null;
  } catch {
    return null;
  }
}

/**
 * The root of the index file's cache tree (its TREE extension) when it is valid: the tree `git write-tree` prints for
 * this index without computing anything, provided that tree object exists (the caller checks). Null when there is
 * none to trust — the root invalidated by a change since, unmerged entries (write-tree refuses them), a file this
 * reader does not take apart (a split index): the caller then runs `git write-tree`.
 */
export function readCachedIndexTree(file: string, format: ObjectFormat): string | null {
  try {
    return parsedIndex(readIndexFile(file), OID_BYTES[format])?.cachedTree ?? null;
  } catch {
    return null;
  }
}

/**
 * A buffer the index reads of this module share (each read's view is valid until the next one): a hook event reads
 * the index, and its copies, two or three times, and at 250,000 files each fresh buffer was 25 MB more of the
 * process's peak memory (issue 36). Let go a second after the last read, so a long-lived process (the extension
 * host) does not keep it.
 */
let scratch: Buffer | null = null;
let scratchTimer: NodeJS.Timeout | null = null;

function readIndexFile(file: string): Buffer {
  return readIndexTail(file, Number.MAX_SAFE_INTEGER);
}

/**
 * The last `maxBytes` of the index file `file` (all of it when smaller), in the shared buffer: valid until the next
 * read of this module. Throws what opening the file throws.
 */
export function readIndexTail(file: string, maxBytes: number): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const fileSize = fs.fstatSync(fd).size;
    const size = Math.min(fileSize, maxBytes);
    if (!scratch || scratch.length < size) scratch = Buffer.allocUnsafe(size);
    let at = 0;
    while (at < size) {
      const read = fs.readSync(fd, scratch, at, size - at, fileSize - size + at);
      if (read === 0) break;
      at += read;
    }
    if (scratchTimer) clearTimeout(scratchTimer);
    scratchTimer = setTimeout(() => (scratch = null), 1000);
    scratchTimer.unref();
    return scratch.subarray(0, at);
  } finally {
    fs.closeSync(fd);
  }
}

const CE_STAGEMASK = 0x3000;

/** The root entry of a TREE extension: an empty path, its entry count (-1: invalid), subtree count, then its id. */
function cachedRoot(data: Buffer, at: number, size: number, oidBytes: number): string | null {
  if (size < 1 || data[at] !== 0) return null;
  const end = data.indexOf(0x0a, at + 1);
  if (end < 0 || end > at + size) return null;
  const match = /^(-?\d+) (\d+)$/.exec(data.toString('latin1', at + 1, end));
  if (!match || Number(match[1]) < 0 || end + 1 + oidBytes > at + size) return null;
  return data.toString('hex', end + 1, end + 1 + oidBytes);
}

type ParsedIndex = { flagged: readonly FlaggedEntry[]; cachedTree: string | null } | null;

/**
 * The last index parsed, by content: a hook event's probe reads the index, then its commit reads a copy of it twice
 * (the cache tree, the flagged entries) — the same bytes, parsed once.
 */
let lastParsed: { data: Buffer; oidBytes: number; parsed: ParsedIndex } | null = null;
const MEMO_MAX_BYTES = 4 << 20;

function parsedIndex(data: Buffer, oidBytes: number): ParsedIndex {
  if (lastParsed && lastParsed.oidBytes === oidBytes && lastParsed.data.equals(data)) return lastParsed.parsed;
  const parsed = parseIndex(data, oidBytes);
  // Kept only while small: a long-lived process (the extension host) holds it. A copy: `data` is the shared buffer.
  lastParsed = data.length <= MEMO_MAX_BYTES ? { data: Buffer.from(data), oidBytes, parsed } : null;
  return parsed;
}

function parseIndex(data: Buffer, oidBytes: number): { flagged: FlaggedEntry[]; cachedTree: string | null } | null {
  if (data.length < 12 || data.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = data.readUInt32BE(8);
  const found: FlaggedEntry[] = [];
  let unmerged = false;
  let offset = 12;
  // Index v4: the previous entry's name, rebuilt in place (names are prefix-compressed).
  let previous: Buffer = Buffer.alloc(4096);
  let previousLength = 0;
  // Per entry only its flags are read (a hook event parses the whole index in a fresh process, where this loop runs
  // interpreted): its mode, name and id only when it is flagged.
  for (let i = 0; i < count; i++) {
    const start = offset;
    const flagsAt = start + STAT_BYTES + oidBytes;
    if (flagsAt + 2 > data.length) return null;
    const flags = (data[flagsAt] << 8) | data[flagsAt + 1];
    if (flags & CE_STAGEMASK) unmerged = true;
    offset = flagsAt + 2;
    let extended = 0;
    if (flags & CE_EXTENDED) {
      if (version < 3 || offset + 2 > data.length) return null;
      extended = (data[offset] << 8) | data[offset + 1];
      offset += 2;
    }
    const skipWorktree = (extended & CE_SKIP_WORKTREE) !== 0;
    const assumeUnchanged = (flags & CE_VALID) !== 0;
    let nameStart = offset;
    let nameEnd: number;
    if (version === 4) {
      // The name is the previous one minus N trailing bytes (a varint), then a NUL-terminated suffix; no padding.
      let strip = 0;
      let byte: number;
      let first = true;
      do {
        byte = data[offset++];
        strip = first ? byte & 0x7f : ((strip + 1) << 7) | (byte & 0x7f);
        first = false;
      } while (byte & 0x80);
      const end = data.indexOf(0, offset);
      if (end < 0 || strip > previousLength) return null;
      const kept = previousLength - strip;
      if (kept + end - offset > previous.length) previous = grow(previous, kept + end - offset);
      data.copy(previous, kept, offset, end);
      previousLength = kept + end - offset;
      nameStart = 0;
      nameEnd = previousLength;
      offset = end + 1;
    } else {
      const length = flags & CE_NAMEMASK;
      const end = length < CE_NAMEMASK ? offset + length : data.indexOf(0, offset);
      if (end < 0 || end > data.length || data[end] !== 0) return null;
      nameEnd = end;
      // Entries are padded with 1–8 NUL bytes to a multiple of 8 from their start.
      offset = start + ((end - start + 8) & ~7);
    }
    if (!skipWorktree && !assumeUnchanged) continue;
    const mode = data.readUInt32BE(start + 24);
    // A sparse index's directory entries (mode 040000) stand for folders outside the cone, not files.
    if ((mode & 0o170000) === 0o040000) continue;
    found.push({
      path: decodeBytes((version === 4 ? previous : data).subarray(nameStart, nameEnd)),
      mode: mode.toString(8),
      oid: data.toString('hex', start + STAT_BYTES, start + STAT_BYTES + oidBytes),
      skipWorktree,
      assumeUnchanged,
    });
  }
  if (offset > data.length) return null;
  // A split index keeps most entries (and their flags) in a shared file: not read here.
  let cachedTree: string | null = null;
  for (let at = offset; at + 8 <= data.length - oidBytes;) {
    const signature = data.toString('latin1', at, at + 4);
    const size = data.readUInt32BE(at + 4);
    if (signature === 'link') return null;
    if (signature === 'TREE' && at + 8 + size <= data.length - oidBytes)
      cachedTree = cachedRoot(data, at + 8, size, oidBytes);
    at += 8 + size;
  }
  return { flagged: found, cachedTree: unmerged ? null : cachedTree };
}

function grow(buffer: Buffer, size: number): Buffer {
  const next = Buffer.alloc(Math.max(size, buffer.length * 2));
  buffer.copy(next);
  return next;
}

/**
 * `git ls-files -v -s -z` output as flagged entries (what readFlaggedEntries gives when it cannot read the file
 * itself): the tag `S` is skip-worktree, a lower-case tag assume-unchanged (`s` both). Pure.
 */
export function flaggedFromLsFiles(stdout: string): FlaggedEntry[] {
  const found: FlaggedEntry[] = [];
  for (const record of stdout.split('\0')) {
    const match = /^(\S) (\d+) ([0-9a-f]+) \d\t([\s\S]+)$/.exec(record);
    if (!match) continue;
    const tag = match[1];
    const skipWorktree = tag === 'S' || tag === 's';
    const assumeUnchanged = tag !== tag.toUpperCase();
    if (skipWorktree || assumeUnchanged)
      found.push({ path: match[4], mode: match[2], oid: match[3], skipWorktree, assumeUnchanged });
  }
  return found;
}

/**
 * Which of `paths` (relative, `/`-separated) exist in the working tree at `root`: a missing folder settles every
 * path below it with one lstat (a sparse checkout's files outside the cone are absent folder by folder).
 */
export function existingPaths(root: string, paths: readonly string[]): string[] {
  const folders = new Map<string, boolean>();
  const folderExists = (dir: string): boolean => {
    if (dir === '' || dir === '.') return true;
    const known = folders.get(dir);
    if (known !== undefined) return known;
    const exists = folderExists(path.posix.dirname(dir)) && fs.existsSync(fsPath(path.join(root, dir)));
    folders.set(dir, exists);
    return exists;
  };
  return paths.filter((p) => folderExists(path.posix.dirname(p)) && lexists(fsPath(path.join(root, p))));
}

function lexists(file: string | Buffer): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * How many index entries of `repo` hide changes from `git status` (flagged, file present), for the probe; read from
 * the index file with no git process. A file this reader cannot take apart (a split index) counts as one.
 */
export function hiddenEntryCount(repo: Pick<GitRepository, 'root' | 'gitDir' | 'objectFormat'>): number {
  const flagged = readFlaggedEntries(path.join(repo.gitDir, 'index'), objectFormatFromFiles(repo));
  if (flagged === null) return 1;
  if (flagged.length === 0) return 0;
  return existingPaths(
    repo.root,
    flagged.map((e) => e.path),
  ).length;
}
