const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Lowercase hex of bytes. */
export function bytesToHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += HEX[b];
  return out;
}

/** base64url without padding. */
export function bytesToBase64Url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += `${BASE64URL[n >> 18]}${BASE64URL[(n >> 12) & 63]}${BASE64URL[(n >> 6) & 63]}${BASE64URL[n & 63]}`;
  }
  const rest = bytes.length - i;
  if (rest > 0) {
    const n = ((bytes[i] as number) << 16) | (rest === 2 ? (bytes[i + 1] as number) << 8 : 0);
    out += `${BASE64URL[n >> 18]}${BASE64URL[(n >> 12) & 63]}`;
    if (rest === 2) out += BASE64URL[(n >> 6) & 63];
  }
  return out;
}
