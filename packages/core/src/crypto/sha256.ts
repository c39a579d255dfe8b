/**
 * A small synchronous SHA-256 and HMAC-SHA256 in plain JavaScript, for runtimes without node:crypto.
 *
 * Web Crypto only offers async digests. Verification uses it, but `signWebhook` (a test signer that
 * returns `{ body, headers }`) must be synchronous by contract. It signs a few hundred bytes, where this is
 * fast enough. It is checked against node:crypto by a property test.
 */

import { compress } from './sha256-compress.js';

/** SHA-256's initial state (FIPS 180-4, 5.3.3); every hash starts from a copy. */
export const INITIAL_STATE: Readonly<Int32Array> = Int32Array.of(
  0x6a09e667,
  0xbb67ae85 | 0,
  0x3c6ef372,
  0xa54ff53a | 0,
  0x510e527f,
  0x9b05688c | 0,
  0x1f83d9ab,
  0x5be0cd19,
);

/** SHA-256 of the concatenation of `parts`. */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  // Message + 0x80 + zero padding + 8-byte big-endian bit length, rounded up to 64-byte blocks.
  const padded = new Uint8Array(Math.ceil((length + 9) / 64) * 64);
  let offset = 0;
  for (const p of parts) {
    padded.set(p, offset);
    offset += p.length;
  }
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  view.setUint32(padded.length - 4, (length * 8) >>> 0);

  const state = INITIAL_STATE.slice();
  const words = new Int32Array(16);
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) words[i] = view.getInt32(block + i * 4);
    compress(state, words, state);
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setInt32(i * 4, state[i] as number);
  return out;
}

/** HMAC-SHA256 (RFC 2104) of the concatenation of `parts`. */
export function hmacSha256(key: Uint8Array, ...parts: Uint8Array[]): Uint8Array {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = block.map((x) => x ^ 0x36);
  const outer = block.map((x) => x ^ 0x5c);
  return sha256(outer, sha256(inner, ...parts));
}
