/**
 * Constant-time comparison of a computed lowercase hex digest with a received value of the same length.
 *
 * Received uppercase A-F is accepted: `c | ((c >> 6) << 5)` ORs 0x20 into characters from 0x40 up (A-F
 * become a-f) and leaves everything below 0x40 alone (digits stay digits, and no control character can
 * fold into one). No branch depends on the data.
 */
export function timingSafeEqualHex(expectedLowercase: string, received: string): boolean {
  if (expectedLowercase.length !== received.length) return false;
  let diff = 0;
  for (let i = 0; i < received.length; i++) {
    const c = received.charCodeAt(i);
    diff |= expectedLowercase.charCodeAt(i) ^ (c | ((c >> 6) << 5));
  }
  return diff === 0;
}
