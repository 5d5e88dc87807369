/**
 * File names are bytes to git and to the file system; ours are JavaScript strings. Names that are valid UTF-8
 * (nearly all) decode as usual; each byte of a name that is not becomes one lone surrogate U+DC80–U+DCFF (Python's
 * "surrogateescape", PEP 383), which no valid UTF-8 decodes to, so the bytes come back exactly when the string is
 * encoded here again. Git's output is decoded this way (spawnCollect.ts), its input encoded this way, and a name
 * is handed to `fs` as bytes when it needs them (fsPath): a secret whose name is not UTF-8 is read and judged like
 * any other instead of being opened under a name that does not exist (issue 25).
 */

const ESCAPED = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/;

/** `bytes` as a string, losslessly (see above). Pure. */
export function decodeBytes(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  // U+FFFD in the result: either a replaced invalid sequence or a real U+FFFD; the slow path tells them apart.
  if (!text.includes('\uFFFD')) return text;
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceLength(bytes, i);
    if (length > 0) {
      out += bytes.toString('utf8', i, i + length);
      i += length;
    } else {
      out += String.fromCharCode(0xdc00 + bytes[i]);
      i++;
    }
  }
  return out;
}

/** The bytes `text` stands for: UTF-8, with each escaped byte (decodeBytes) written back as itself. Pure. */
export function encodeBytes(text: string): Buffer {
  if (!ESCAPED.test(text)) return Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  let run = '';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if (ch.length === 1 && code >= 0xdc80 && code <= 0xdcff) {
      if (run) parts.push(Buffer.from(run, 'utf8'));
      run = '';
      parts.push(Buffer.from([code - 0xdc00]));
    } else run += ch;
  }
  if (run) parts.push(Buffer.from(run, 'utf8'));
  return Buffer.concat(parts);
}

/** Whether `text` holds bytes that are not UTF-8 (escaped by decodeBytes). */
export function hasEscapedBytes(text: string): boolean {
  return ESCAPED.test(text);
}

/** A path for `fs`: the string itself, or its bytes when it holds escaped ones (a name that is not UTF-8). */
export function fsPath(file: string): string | Buffer {
  return ESCAPED.test(file) ? encodeBytes(file) : file;
}

/** `name` for a message: escaped bytes written as `\xNN`, so a name that is not UTF-8 still reads as itself. */
export function printableName(name: string): string {
  if (!ESCAPED.test(name)) return name;
  let out = '';
  for (const ch of name) {
    const code = ch.charCodeAt(0);
    out +=
      ch.length === 1 && code >= 0xdc80 && code <= 0xdcff ? `\\x${(code - 0xdc00).toString(16).padStart(2, '0')}` : ch;
  }
  return out;
}

/** The length of the valid UTF-8 sequence starting at `i` (0 when the byte there starts none). */
function sequenceLength(bytes: Buffer, i: number): number {
  const lead = bytes[i];
  if (lead < 0x80) return 1;
  let length: number;
  let min: number;
  if (lead >= 0xc2 && lead <= 0xdf) [length, min] = [2, 0x80];
  else if (lead >= 0xe0 && lead <= 0xef) [length, min] = [3, 0x800];
  else if (lead >= 0xf0 && lead <= 0xf4) [length, min] = [4, 0x10000];
  else return 0;
  if (i + length > bytes.length) return 0;
  let code = lead & (0xff >> (length + 1));
  for (let k = 1; k < length; k++) {
    const next = bytes[i + k];
    if ((next & 0xc0) !== 0x80) return 0;
    code = (code << 6) | (next & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return length;
}
