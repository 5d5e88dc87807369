/**
 * The write-ahead journal beside the snapshot: a header naming the snapshot sequence it continues from,
 * then self-validating records, one per acknowledged transaction.
 *
 *   header (48 bytes):  "AVHJ" | format u32 | baseSeq u64 | lineage (16 bytes) | snapshot length u64
 *                       | snapshot crc32 | crc32(previous 44 bytes)
 *   record (20 + n):    "AVHR" | n u32 | seq u64 | crc32(n, seq, payload) | payload (n bytes of JSON)
 *
 * The lineage is a random id fixed when a database is created (meta 'lineage'): it tells a journal started
 * after a quarantine apart from one that merely continues at the same sequence number. The snapshot length
 * and checksum seal the snapshot written with this journal: checking them at open costs a fraction of
 * `PRAGMA quick_check` (measured ~6x faster at 100k turns).
 * All integers little-endian. A record that is short or fails its checksum at the end of the file is a torn
 * append from a crash (never acknowledged); one followed by a valid record is corruption.
 */

export type SqlValue = string | number | null | Uint8Array;
export type SqlParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

export interface JournalStatement {
  sql: string;
  params?: SqlParams;
}

export interface JournalRecord {
  seq: number;
  statements: JournalStatement[];
}

export const JOURNAL_HEADER_SIZE = 48;
export const RECORD_HEADER_SIZE = 20;
const FILE_MAGIC = Buffer.from('AVHJ', 'latin1');
const RECORD_MAGIC = Buffer.from('AVHR', 'latin1');
const FORMAT_VERSION = 1;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32Js(data: Uint8Array, value = 0): number {
  let crc = (value ^ 0xffffffff) >>> 0;
  for (let i = 0; i < data.length; i++) crc = CRC_TABLE[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * Below this size the table is as fast as zlib, and a process that writes one record (a hook event) never loads zlib.
 */
const ZLIB_FROM_BYTES = 64 * 1024;
let zlibCrc32: ((data: Uint8Array, value?: number) => number) | null | undefined;

// zlib.crc32 exists from Node 20.15; older Node 20 runtimes (the CLI) fall back to the table.
function crc32(data: Uint8Array, value = 0): number {
  if (data.length < ZLIB_FROM_BYTES) return crc32Js(data, value);
  if (zlibCrc32 === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see ZLIB_FROM_BYTES
    const zlib = require('node:zlib') as typeof import('node:zlib');
    zlibCrc32 = typeof zlib.crc32 === 'function' ? (d, v) => zlib.crc32(d, v) : null;
  }
  return zlibCrc32 ? zlibCrc32(data, value) : crc32Js(data, value);
}

function writeU64(buf: Buffer, value: number, offset: number): void {
  buf.writeUInt32LE(value % 0x1_0000_0000, offset);
  buf.writeUInt32LE(Math.floor(value / 0x1_0000_0000), offset + 4);
}

function readU64(buf: Buffer, offset: number): number {
  return buf.readUInt32LE(offset) + buf.readUInt32LE(offset + 4) * 0x1_0000_0000;
}

export interface JournalHeader {
  baseSeq: number;
  /** 32 hex digits, or '' for a database not yet migrated (no lineage yet). */
  lineage: string;
  /** Length and crc32 of the snapshot written together with this journal; length 0 when there is none. */
  snapshotLength: number;
  snapshotCrc: number;
}

/** The CRC-32 journal headers and records are checked with. Pure. */
export function checksum(data: Uint8Array): number {
  return crc32(data);
}

function lineageBytes(lineage: string): Buffer {
  const hex = lineage.replace(/-/g, '');
  if (hex === '') return Buffer.alloc(16);
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error('invalid lineage');
  return Buffer.from(hex, 'hex');
}

/** The journal's fixed-size header, as decodeJournalHeader reads it. Pure. */
export function encodeJournalHeader(header: JournalHeader): Buffer {
  const buf = Buffer.alloc(JOURNAL_HEADER_SIZE);
  FILE_MAGIC.copy(buf, 0);
  buf.writeUInt32LE(FORMAT_VERSION, 4);
  writeU64(buf, header.baseSeq, 8);
  lineageBytes(header.lineage).copy(buf, 16);
  writeU64(buf, header.snapshotLength, 32);
  buf.writeUInt32LE(header.snapshotCrc >>> 0, 40);
  buf.writeUInt32LE(crc32(buf.subarray(0, 44)), 44);
  return buf;
}

/** The header of a journal, or null when the bytes are not a valid header. */
export function decodeJournalHeader(buf: Buffer): JournalHeader | null {
  if (buf.length < JOURNAL_HEADER_SIZE) return null;
  if (!buf.subarray(0, 4).equals(FILE_MAGIC)) return null;
  if (buf.readUInt32LE(4) !== FORMAT_VERSION) return null;
  if (crc32(buf.subarray(0, 44)) !== buf.readUInt32LE(44)) return null;
  return {
    baseSeq: readU64(buf, 8),
    lineage: buf
      .subarray(16, 32)
      .toString('hex')
      .replace(/^0{32}$/, ''),
    snapshotLength: readU64(buf, 32),
    snapshotCrc: buf.readUInt32LE(40),
  };
}

// Blobs and non-finite numbers have no JSON form: they are tagged objects in the payload. Tags are only
// read back where a value is expected, so a named parameter called "$b" cannot be mistaken for one.
type EncodedValue = string | number | null | { b: string } | { f: 'Infinity' | '-Infinity' | 'NaN' };

function encodeValue(value: SqlValue): EncodedValue {
  if (value instanceof Uint8Array)
    return { b: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
  if (typeof value === 'number' && !Number.isFinite(value))
    return { f: String(value) as 'Infinity' | '-Infinity' | 'NaN' };
  return value;
}

function decodeValue(value: unknown): SqlValue {
  if (value === null || typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.b === 'string') return new Uint8Array(Buffer.from(v.b, 'base64'));
    if (v.f === 'Infinity' || v.f === '-Infinity' || v.f === 'NaN') return Number(v.f);
  }
  throw new Error('invalid journal value');
}

function encodeParams(params: SqlParams): EncodedValue[] | Record<string, EncodedValue> {
  if (Array.isArray(params)) return (params as readonly SqlValue[]).map(encodeValue);
  const out: Record<string, EncodedValue> = {};
  for (const [key, value] of Object.entries(params)) out[key] = encodeValue(value);
  return out;
}

function decodeParams(params: unknown): SqlParams {
  if (Array.isArray(params)) return params.map(decodeValue);
  if (typeof params === 'object' && params !== null) {
    const out: Record<string, SqlValue> = {};
    for (const [key, value] of Object.entries(params)) out[key] = decodeValue(value);
    return out;
  }
  throw new Error('invalid journal params');
}

/** One journal record (its sequence and statements, checksummed), as readRecordAt decodes it. Pure. */
export function encodeRecord(record: JournalRecord): Buffer {
  const payload = Buffer.from(
    JSON.stringify(record.statements.map((s) => (s.params === undefined ? [s.sql] : [s.sql, encodeParams(s.params)]))),
    'utf8',
  );
  const buf = Buffer.alloc(RECORD_HEADER_SIZE + payload.length);
  RECORD_MAGIC.copy(buf, 0);
  buf.writeUInt32LE(payload.length, 4);
  writeU64(buf, record.seq, 8);
  payload.copy(buf, RECORD_HEADER_SIZE);
  buf.writeUInt32LE(crc32(payload, crc32(buf.subarray(4, 16))), 16);
  return buf;
}

function decodePayload(payload: Buffer): JournalStatement[] {
  const value: unknown = JSON.parse(payload.toString('utf8'));
  if (!Array.isArray(value)) throw new Error('invalid journal payload');
  return value.map((entry: unknown) => {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || entry.length > 2)
      throw new Error('invalid journal statement');
    return entry.length === 2 ? { sql: entry[0], params: decodeParams(entry[1]) } : { sql: entry[0] };
  });
}

export type RecordScan =
  { kind: 'record'; record: JournalRecord; next: number } | { kind: 'end' } | { kind: 'invalid' };

/** Reads the record starting at `offset` of `buf` (a window of the journal). */
export function readRecordAt(buf: Buffer, offset: number): RecordScan {
  if (offset === buf.length) return { kind: 'end' };
  if (buf.length - offset < RECORD_HEADER_SIZE) return { kind: 'invalid' };
  if (!buf.subarray(offset, offset + 4).equals(RECORD_MAGIC)) return { kind: 'invalid' };
  const length = buf.readUInt32LE(offset + 4);
  const end = offset + RECORD_HEADER_SIZE + length;
  if (end > buf.length) return { kind: 'invalid' };
  const payload = buf.subarray(offset + RECORD_HEADER_SIZE, end);
  if (crc32(payload, crc32(buf.subarray(offset + 4, offset + 16))) !== buf.readUInt32LE(offset + 16))
    return { kind: 'invalid' };
  let statements: JournalStatement[];
  try {
    statements = decodePayload(payload);
  } catch {
    return { kind: 'invalid' };
  }
  return { kind: 'record', record: { seq: readU64(buf, offset + 8), statements }, next: end };
}

/**
 * True when a checksum-valid record starts anywhere after `offset`: bad bytes before it are corruption, not a torn
 * tail.
 */
export function hasValidRecordAfter(buf: Buffer, offset: number): boolean {
  for (let at = buf.indexOf(RECORD_MAGIC, offset + 1); at !== -1; at = buf.indexOf(RECORD_MAGIC, at + 1)) {
    if (readRecordAt(buf, at).kind === 'record') return true;
  }
  return false;
}
