/**
 * A completed key of the memory store, packed into one flat string: most of a week's keys are completed,
 * and an object per key (plus its fingerprint string) was half of a key's memory.
 *
 *   chars 0-4   when the record expires, in ms since the store first read its clock: 5 base-256 digits (34 years;
 *               a later expiry is kept as the last one that fits, so it never wraps to the past)
 *   chars 5-8   a 32-bit tag of the claim token that completed it: 4 base-256 digits
 *   chars 9-    the fingerprint
 *
 * Every char below 256 keeps it a one-byte string, 1 byte a char: with the core's 11-character
 * fingerprint a record is 20 characters, 40 bytes of heap, where the object and its string took 88.
 * `String.fromCharCode` with every code at once makes the string flat; concatenating parts would leave a
 * rope whose pieces all stay alive.
 */
export type CompletedRecord = string;

const HEADER = 9;
const MAX_EXPIRY = 2 ** 40 - 1;

/** Packs a completed record; see `CompletedRecord`. */
export function packRecord(expiresAt: number, tag: number, fingerprint: string): CompletedRecord {
  if (expiresAt > MAX_EXPIRY) expiresAt = MAX_EXPIRY;
  const hi = Math.floor(expiresAt / 2 ** 32);
  const e0 = expiresAt & 255;
  const e1 = (expiresAt >>> 8) & 255;
  const e2 = (expiresAt >>> 16) & 255;
  const e3 = (expiresAt >>> 24) & 255;
  const e4 = hi & 255;
  const t0 = tag & 255;
  const t1 = (tag >>> 8) & 255;
  const t2 = (tag >>> 16) & 255;
  const t3 = (tag >>> 24) & 255;
  if (fingerprint.length === 11) {
    // The core's fingerprint: one call, no array.
    const f = (i: number) => fingerprint.charCodeAt(i);
    return String.fromCharCode(
      e0,
      e1,
      e2,
      e3,
      e4,
      t0,
      t1,
      t2,
      t3,
      f(0),
      f(1),
      f(2),
      f(3),
      f(4),
      f(5),
      f(6),
      f(7),
      f(8),
      f(9),
      f(10),
    );
  }
  const codes = [e0, e1, e2, e3, e4, t0, t1, t2, t3];
  for (let i = 0; i < fingerprint.length; i++) codes.push(fingerprint.charCodeAt(i));
  return String.fromCharCode(...codes);
}

/** When the record expires (ms since the store first read its clock). */
export function expiryOf(record: CompletedRecord): number {
  return (
    record.charCodeAt(0) +
    record.charCodeAt(1) * 2 ** 8 +
    record.charCodeAt(2) * 2 ** 16 +
    record.charCodeAt(3) * 2 ** 24 +
    record.charCodeAt(4) * 2 ** 32
  );
}

/** The tag of the token that completed it (a signed 32-bit integer, as `tokenTag` makes it). */
export function tagOf(record: CompletedRecord): number {
  return (
    record.charCodeAt(5) | (record.charCodeAt(6) << 8) | (record.charCodeAt(7) << 16) | (record.charCodeAt(8) << 24)
  );
}

/** The fingerprint it was completed with. */
export function fingerprintOf(record: CompletedRecord): string {
  return record.slice(HEADER);
}

/**
 * A 32-bit tag of a claim token (FNV-1a): enough to tell a retried `complete` from another attempt's.
 *
 * Signed, not unsigned: an int32 is always a small integer to V8 on 64-bit Node, while an unsigned tag of
 * 2^31 or more is a heap number. Optimized on small tags, the function would be thrown back to the
 * interpreter by the first large one, at a moment that depends on the process's random token prefix, and
 * compiled again: about 4,400 instructions per delivery in the icount budget's count at N = 1,000.
 */
export function tokenTag(token: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), 0x01000193);
  return h;
}
