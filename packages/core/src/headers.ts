import { WebhookError } from './errors.js';

/**
 * Request headers as any runtime gives them: a fetch `Headers`, or a plain record such as Node's
 * `IncomingMessage.headers`. Lookup is case-insensitive.
 */
export type HeadersInput = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** The lowercase names of the headers the service sends. */
export const HEADER = {
  signature: 'x-service-signature',
  event: 'x-service-event',
  delivery: 'x-service-delivery',
  contentType: 'content-type',
} as const;

/**
 * Reads one header by its lowercase name. `undefined` when absent.
 *
 * A header that arrives twice is refused rather than joined or truncated: a second signature or delivery
 * id is either a proxy bug or an attack, and picking one of them would hide it.
 */
export function readHeader(
  headers: HeadersInput,
  name: string,
  errorCode: 'MALFORMED_SIGNATURE' | 'EVENT_MISMATCH' | 'MISSING_DELIVERY_ID' | 'UNSUPPORTED_MEDIA_TYPE',
): string | undefined {
  if (typeof (headers as Headers).get === 'function' && !isPlainRecord(headers)) {
    return (headers as Headers).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  // Node lower-cases incoming header names, so the direct lookup almost always hits.
  let value = record[name];
  if (value === undefined) {
    for (const key in record) {
      if (key.length === name.length && key.toLowerCase() === name) {
        value = record[key];
        break;
      }
    }
  }
  if (value === undefined || typeof value === 'string') return value;
  if (Array.isArray(value)) {
    if (value.length === 1 && typeof value[0] === 'string') return value[0];
    throw new WebhookError(errorCode, `The ${name} header was sent ${value.length} times; exactly one is allowed.`);
  }
  throw new WebhookError(errorCode, `The ${name} header is not a string.`);
}

function isPlainRecord(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
