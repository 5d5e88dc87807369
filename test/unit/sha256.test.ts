/** The hand-written SHA-256 (src/core/sha256.ts) gives node:crypto's digest for every length around the block edges. */
import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import { sha256Hex } from '../../src/core/sha256';

describe('sha256Hex (plain JavaScript, for the hook fast path) equals node:crypto', () => {
  it('for the empty input, the FIPS example and every length 0–300 of random bytes', () => {
    const digest = (data: string | Uint8Array) => crypto.createHash('sha256').update(data).digest('hex');
    assert.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    for (let n = 0; n <= 300; n++) {
      const bytes = crypto.randomBytes(n);
      assert.equal(sha256Hex(bytes), digest(bytes), `length ${n}`);
    }
    for (const text of ['claude-code:d9b49c66-aaaa-4edb-b5e7-f35f493e58ea', 'chat ü ✓ 漢字', 'x'.repeat(1000)])
      assert.equal(sha256Hex(text), digest(text));
  });
});
