import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cryptoBackend } from '../src/crypto/node.js';

/** The reference: node:crypto's own HMAC over `<t>.<body>`. */
const reference = (secret: string, t: string, body: string | Uint8Array) =>
  createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');

describe('node:crypto backend HMAC (one native hash over a reused scratch buffer, the outer block in JavaScript)', () => {
  it("equals createHmac's digest as secrets alternate (the scratch keeps one secret's pad at a time)", () => {
    // Signing and verifying both go through this function, so a pad left behind from the previous
    // secret would sign and verify alike and pass every round trip; only a reference catches it.
    const secrets = ['whsec_a', 'whsec_b', `whsec_${'long'.repeat(20)}`, 'whsec_a', 'whsec_b', 'whsec_a'];
    for (const [i, secret] of secrets.entries()) {
      const body = Buffer.from(`{"n":${i},"pad":"${'x'.repeat(i * 40)}"}`);
      expect(cryptoBackend.signPayloadHexSync(secret, String(1_763_720_000 + i), body)).toBe(
        reference(secret, String(1_763_720_000 + i), body),
      );
    }
  });

  it('equals it for string bodies, a body that outgrows the scratch, and the one after it', () => {
    const big = 'é'.repeat(20_000); // 40,000 UTF-8 bytes: a larger scratch is allocated
    expect(cryptoBackend.signPayloadHexSync('whsec_a', '1', big)).toBe(reference('whsec_a', '1', big));
    expect(cryptoBackend.signPayloadHexSync('whsec_a', '2', 'short')).toBe(reference('whsec_a', '2', 'short'));
    expect(cryptoBackend.signPayloadHexSync('whsec_b', '3', 'short')).toBe(reference('whsec_b', '3', 'short'));
  });

  it('signPayload is the digest as eight words, and digestMatches holds it to the received hex in any case, nothing else', () => {
    const body = '{"event":"payment.paid"}';
    const hex = reference('whsec_a', '7', body);
    const digest = cryptoBackend.signPayload('whsec_a', '7', body) as readonly number[];
    expect(hexOf(digest)).toBe(hex);
    const header = (v1: string) => `t=7,v1=${v1}`;
    expect(cryptoBackend.digestMatches(digest, header(hex), 7)).toBe(true);
    expect(cryptoBackend.digestMatches(digest, header(hex.toUpperCase()), 7)).toBe(true);
    // One digit off, anywhere; a non-hex character; too short; the right hex at the wrong offset.
    for (let i = 0; i < 64; i += 9) {
      const off = `${hex.slice(0, i)}${hex[i] === '0' ? '1' : '0'}${hex.slice(i + 1)}`;
      expect(cryptoBackend.digestMatches(digest, header(off), 7)).toBe(false);
    }
    expect(cryptoBackend.digestMatches(digest, header(`${hex.slice(0, 63)}g`), 7)).toBe(false);
    expect(cryptoBackend.digestMatches(digest, header(hex.slice(0, 62)), 7)).toBe(false);
    expect(cryptoBackend.digestMatches(digest, `x${header(hex)}`, 7)).toBe(false);
  });

  it('each call gives a digest of its own: a rotation compares several after computing them all', () => {
    const first = cryptoBackend.signPayload('whsec_a', '1', 'one') as readonly number[];
    const second = cryptoBackend.signPayload('whsec_b', '1', 'one') as readonly number[];
    expect(hexOf(first)).toBe(reference('whsec_a', '1', 'one'));
    expect(hexOf(second)).toBe(reference('whsec_b', '1', 'one'));
  });

  it("equals createHmac's for any secret (longer than a block too), timestamp and body, bytes or text", () => {
    fc.assert(
      fc.property(
        // Any text, multi-byte UTF-8 included: a secret of 100 characters can be 400 bytes (hashed first).
        fc.string({ minLength: 1, maxLength: 100, unit: 'grapheme' }),
        fc.stringMatching(/^[0-9]{1,12}$/),
        fc.oneof(fc.uint8Array({ maxLength: 1500 }), fc.string({ maxLength: 500, unit: 'grapheme' })),
        (secret, t, body) => {
          expect(hexOf(cryptoBackend.signPayload(secret, t, body) as readonly number[])).toBe(
            reference(secret, t, body),
          );
          expect(cryptoBackend.signPayloadHexSync(secret, t, body)).toBe(reference(secret, t, body));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('equals it for secrets at and around the block size (a key longer than 64 bytes is hashed first)', () => {
    for (const size of [1, 55, 63, 64, 65, 100, 128, 129]) {
      const secret = 'k'.repeat(size);
      expect(cryptoBackend.signPayloadHexSync(secret, '5', 'body')).toBe(reference(secret, '5', 'body'));
      // The same length in UTF-8 bytes, not characters: 'é' is two bytes.
      const wide = 'é'.repeat(Math.ceil(size / 2));
      expect(cryptoBackend.signPayloadHexSync(wide, '5', 'body')).toBe(reference(wide, '5', 'body'));
    }
  });

  it('equals it past the scratch, where the body is hashed by createHmac instead', () => {
    const huge = Buffer.alloc(1024 * 1024 + 1, 0x61);
    expect(hexOf(cryptoBackend.signPayload('whsec_a', '9', huge) as readonly number[])).toBe(
      reference('whsec_a', '9', huge),
    );
    expect(cryptoBackend.signPayloadHexSync('whsec_a', '10', 'after')).toBe(reference('whsec_a', '10', 'after'));
  });
});

/** The digest's words as hex, big-endian, as a signature header carries them. */
function hexOf(words: readonly number[]): string {
  return Array.from(words, (word) => (word >>> 0).toString(16).padStart(8, '0')).join('');
}
