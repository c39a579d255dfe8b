import { isUtf8 } from 'node:buffer';
import { type KeyObject, createHash, createHmac, createSecretKey, randomUUID, timingSafeEqual } from 'node:crypto';
import type { CryptoBackend } from './backend.js';

// Importing the key once per secret saves the per-call key setup inside createHmac.
const keyCache = new Map<string, KeyObject>();
function keyFor(secret: string): KeyObject {
  let key = keyCache.get(secret);
  if (key === undefined) {
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    // Secrets are few (rotation keeps two or three); the bound only guards against misuse.
    if (keyCache.size >= 64) keyCache.clear();
    keyCache.set(secret, key);
  }
  return key;
}

function hmac(secret: string, timestamp: string, body: Uint8Array | string) {
  const h = createHmac('sha256', keyFor(secret)).update(`${timestamp}.`);
  return typeof body === 'string' ? h.update(body, 'utf8') : h.update(body);
}

/** The node:crypto backend: everything synchronous, no copies of the body. */
export const cryptoBackend: CryptoBackend = {
  signPayload: (secret, timestamp, body) => hmac(secret, timestamp, body).digest(),
  signPayloadHexSync: (secret, timestamp, body) => hmac(secret, timestamp, body).digest('hex'),
  sha256Base64Url: (text) => createHash('sha256').update(text, 'utf8').digest('base64url'),
  timingSafeEqual: (a, b) => a.length === b.length && timingSafeEqual(a, b),
  decodeUtf8: (bytes) => {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return isUtf8(buf) ? buf.toString('utf8') : undefined;
  },
  hexToBytes: (hex) => Buffer.from(hex, 'hex'),
  randomToken: () => randomUUID(),
};
