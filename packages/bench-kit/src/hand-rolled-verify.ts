import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The baseline every benchmark measures the SDK against: what a careful hand-written receiver does with the
 * raw bytes (HMAC-SHA256 over `<t>.<body>`, a constant-time compare, a 300 s window, `JSON.parse`). One
 * copy, imported openly by the core, adapter and store benchmarks, so every ratio has the same anchor.
 * Throws on a bad delivery.
 *
 * @example
 * ```ts
 * const event = handRolledVerify(req.body, req.headers['x-service-signature'], secret);
 * ```
 */
export function handRolledVerify(body: Buffer, header: string | string[] | undefined, secret: string): unknown {
  if (typeof header !== 'string') throw new Error('missing signature');
  const comma = header.indexOf(',');
  const t = header.slice(2, comma);
  const received = Buffer.from(header.slice(comma + 4), 'hex');
  const expected = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) throw new Error('bad signature');
  if (Math.abs(Date.now() / 1000 - Number(t)) > 300) throw new Error('stale');
  return JSON.parse(body.toString('utf8'));
}
