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
});
