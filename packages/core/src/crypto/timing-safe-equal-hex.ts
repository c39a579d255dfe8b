/**
 * Constant-time comparison of a computed lowercase hex digest with a received one of the same length
 * whose characters were already checked to be hex digits. Received uppercase is accepted: OR-ing 0x20
 * lower-cases A-F and leaves 0-9 unchanged, so no branch depends on the data.
 */
export function timingSafeEqualHex(expectedLowercase: string, received: string): boolean {
  if (expectedLowercase.length !== received.length) return false;
  let diff = 0;
  for (let i = 0; i < received.length; i++) {
    diff |= expectedLowercase.charCodeAt(i) ^ (received.charCodeAt(i) | 0x20);
  }
  return diff === 0;
}
