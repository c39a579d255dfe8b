/**
 * Constant-time comparison of a computed lowercase hex digest with a received value: the digest's length
 * in characters of `source` from `offset` (the caller knows the value has exactly that length there).
 * The value is read in place in the header, not sliced out: a slice is a V8 sliced string whose every
 * character is read through its parent, and comparing one cost about half as much again.
 *
 * Received uppercase A-F is accepted: `c | ((c >> 6) << 5)` ORs 0x20 into characters from 0x40 up (A-F
 * become a-f) and leaves everything below 0x40 alone (digits stay digits, and no control character can
 * fold into one). No branch depends on the data.
 */
export function timingSafeEqualHex(expectedLowercase: string, source: string, offset: number): boolean {
  const length = expectedLowercase.length;
  if (source.length - offset < length) return false;
  let diff = 0;
  for (let i = 0; i < length; i++) {
    const c = source.charCodeAt(offset + i);
    diff |= expectedLowercase.charCodeAt(i) ^ (c | ((c >> 6) << 5));
  }
  return diff === 0;
}
