import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cryptoBackend } from '../src/crypto/node.js';

/** The reference: node:crypto's own HMAC over `<t>.<body>`. */
const reference = (secret: string, t: string, body: string | Uint8Array) =>
  createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');

describe('node:crypto backend HMAC (one-shot hashes over a reused scratch buffer)', () => {
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

  it('signPayload is the raw digest, and digestMatches holds it to the received hex in any case, nothing else', () => {
    const body = '{"event":"payment.paid"}';
    const hex = reference('whsec_a', '7', body);
    const raw = cryptoBackend.signPayload('whsec_a', '7', body) as string;
    expect(Buffer.from(raw, 'latin1').toString('hex')).toBe(hex);
    const header = (v1: string) => `t=7,v1=${v1}`;
    expect(cryptoBackend.digestMatches(raw, header(hex), 7)).toBe(true);
    expect(cryptoBackend.digestMatches(raw, header(hex.toUpperCase()), 7)).toBe(true);
    // One digit off, anywhere; a non-hex character; too short; the right hex at the wrong offset.
    for (let i = 0; i < 64; i += 9) {
      const off = `${hex.slice(0, i)}${hex[i] === '0' ? '1' : '0'}${hex.slice(i + 1)}`;
      expect(cryptoBackend.digestMatches(raw, header(off), 7)).toBe(false);
    }
    expect(cryptoBackend.digestMatches(raw, header(`${hex.slice(0, 63)}g`), 7)).toBe(false);
    expect(cryptoBackend.digestMatches(raw, header(hex.slice(0, 62)), 7)).toBe(false);
    expect(cryptoBackend.digestMatches(raw, `x${header(hex)}`, 7)).toBe(false);
  });
});
