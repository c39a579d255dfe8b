import type { WebhookErrorCode } from '../errors/error-codes.js';
import { WebhookError } from '../errors/webhook-error.js';

/**
 * Request headers as any runtime gives them: a fetch `Headers`, Node's `IncomingMessage.headers`, a plain
 * record, or a `Map`. Lookup is case-insensitive. Values of any other shape (numbers, nested objects, arrays
 * of several values) get a coded refusal, never a TypeError.
 *
 * @example
 * ```ts
 * const headers: HeadersInput = { 'content-type': 'application/json', 'x-service-signature': 't=1,v1=...' };
 * ```
 */
export type HeadersInput =
  | Headers
  | ReadonlyMap<string, unknown>
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** The lowercase names of the headers the service sends. */
export const HEADER = {
  signature: 'x-service-signature',
  event: 'x-service-event',
  delivery: 'x-service-delivery',
  contentType: 'content-type',
  contentLength: 'content-length',
  /**
   * Not the service's: `service-pay listen` marks the unsigned POST it sends at start to see whether the
   * webhook route is there. It is answered as any unsigned request (401) but logged at debug, so a
   * developer's log does not show a refused delivery that never was one. Only a request with no signature at
   * all is treated so: a signed request with the mark is refused and logged as any other.
   */
  probe: 'x-service-pay-probe',
} as const;

type HeaderCode = Extract<
  WebhookErrorCode,
  'MALFORMED_SIGNATURE' | 'EVENT_MISMATCH' | 'MISSING_DELIVERY_ID' | 'UNSUPPORTED_MEDIA_TYPE'
>;

/**
 * Reads one header by its lowercase name: `undefined` when absent (or null, or an empty list).
 *
 * A header that arrives twice is refused rather than joined or truncated: a second signature or delivery
 * id is either a proxy bug or an attack, and picking one of them would hide it.
 */
export function readHeader(headers: unknown, name: string, errorCode: HeaderCode): string | undefined {
  if (headers === null || typeof headers !== 'object') return undefined;
  if (headers instanceof Map) return headerValue(mapLookup(headers, name), name, errorCode);
  // `get` first: on a plain record it is undefined (or a header's text), and Object.getPrototypeOf is a
  // runtime call on every read (icount); a record whose `get` is a function is read as a record still.
  if (typeof (headers as Headers).get === 'function' && !isPlainRecord(headers)) {
    // A fetch Headers (or something shaped like it): already case-insensitive; repeated values are joined.
    return headerValue((headers as Headers).get(name), name, errorCode);
  }
  const record = headers as Readonly<Record<string, unknown>>;
  // Node lower-cases incoming header names, so the direct lookup almost always hits.
  let value = directLookup(record, name);
  if (value === undefined) {
    for (const key in record) {
      if (key.length === name.length && key.toLowerCase() === name) {
        value = record[key];
        break;
      }
    }
  }
  // An absent header (the probe mark, on every real delivery) answers here: called that rarely out of line,
  // headerValue reached its optimized tier only after thousands of deliveries.
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : headerValue(value, name, errorCode);
}

/**
 * `record[name]`, with a load site of its own for each header read on every delivery. One `record[name]`
 * shared by every name sees several keys and becomes a megamorphic keyed load, a stub-cache lookup per read
 * (icount: about 200 instructions each, three or four a delivery); a site with a constant name is a plain
 * property load where the headers objects share a shape.
 */
function directLookup(record: Readonly<Record<string, unknown>>, name: string): unknown {
  switch (name) {
    case HEADER.signature:
      return record['x-service-signature'];
    case HEADER.event:
      return record['x-service-event'];
    case HEADER.delivery:
      return record['x-service-delivery'];
    case HEADER.probe:
      return record['x-service-pay-probe'];
    default:
      return record[name];
  }
}

function mapLookup(map: ReadonlyMap<unknown, unknown>, name: string): unknown {
  if (map.has(name)) return map.get(name);
  for (const [key, value] of map) {
    if (typeof key === 'string' && key.length === name.length && key.toLowerCase() === name) return value;
  }
  return undefined;
}

function headerValue(value: unknown, name: string, errorCode: HeaderCode): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    if (value.length === 1 && typeof value[0] === 'string') return value[0];
    if (value.length > 1) {
      throw new WebhookError(errorCode, `The ${name} header was sent ${value.length} times; exactly one is allowed.`);
    }
  }
  throw new WebhookError(errorCode, `The ${name} header is not text (got ${describeType(value)}).`);
}

function describeType(value: unknown): string {
  return Array.isArray(value) ? 'a list holding something else' : typeof value;
}

function isPlainRecord(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
