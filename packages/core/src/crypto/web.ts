import type { CryptoBackend } from './backend.js';
import { bytesToHex } from './encoding.js';
import { hmacSha256 } from './sha256.js';
import { timingSafeEqualHex } from './timing-safe-equal-hex.js';

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// importKey is the slow part of a Web Crypto HMAC; a secret is imported once.
const keyCache = new Map<string, Promise<CryptoKey>>();
function keyFor(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret);
  if (key === undefined) {
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    if (keyCache.size >= 64) keyCache.clear();
    keyCache.set(secret, key);
  }
  return key;
}

function signedBytes(timestamp: string, body: Uint8Array | string): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${timestamp}.`);
  const bodyBytes = typeof body === 'string' ? encoder.encode(body) : body;
  const out = new Uint8Array(prefix.length + bodyBytes.length);
  out.set(prefix);
  out.set(bodyBytes, prefix.length);
  return out;
}

/** What this backend's `signPayload` gives: the HMAC as lowercase hex. */
export type Digest = string;

/** The Web Crypto backend for Edge runtimes, Workers, Deno and Bun. Uses only web-standard globals. */
export const cryptoBackend: CryptoBackend<Digest> = {
  signPayload: async (secret, timestamp, body) => {
    const signature = await crypto.subtle.sign('HMAC', await keyFor(secret), signedBytes(timestamp, body));
    return bytesToHex(new Uint8Array(signature));
  },
  digestMatches: timingSafeEqualHex,
  signPayloadHexSync: (secret, timestamp, body) =>
    bytesToHex(hmacSha256(encoder.encode(secret), signedBytes(timestamp, body))),
  decodeUtf8: (bytes) => {
    try {
      return strictDecoder.decode(bytes);
    } catch {
      return undefined;
    }
  },
  // No vectorised check here: a loop would cost what the per-field checks it spares cost.
  randomToken: () => crypto.randomUUID(),
};
