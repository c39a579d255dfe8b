/**
 * What the core needs from a crypto implementation. Two exist: `node.ts` (node:crypto, the fast path on
 * Node) and `web.ts` (Web Crypto plus a small pure-JS SHA-256 for the synchronous test signer). The build
 * picks one per package export condition, so no runtime ever probes for `require('crypto')`.
 */
export interface CryptoBackend<Digest> {
  /**
   * HMAC-SHA256 keyed with `secret` over `${timestamp}.` followed by the body, in the backend's own form
   * (only `digestMatches` reads it): hex from Web Crypto, SHA-256's state words from node:crypto. A promise
   * only where the HMAC is asynchronous (Web Crypto).
   */
  signPayload(secret: string, timestamp: string, body: Uint8Array | string): Digest | Promise<Digest>;
  /**
   * Whether the received hex signature at `offset` of `source` (64 characters there, upper or lower case)
   * is `digest`, as `signPayload` returned it, in constant time.
   */
  digestMatches(digest: Digest, source: string, offset: number): boolean;
  /** The same, always synchronously. Used by the test signer. */
  signPayloadHexSync(secret: string, timestamp: string, body: Uint8Array | string): string;
  /** Strict UTF-8 decode; `undefined` when the bytes are not valid UTF-8. */
  decodeUtf8(bytes: Uint8Array): string | undefined;
  /** A random, unguessable token for claim fencing. */
  randomToken(): string;
}
