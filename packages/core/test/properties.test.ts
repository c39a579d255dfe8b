import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hmacSha256, sha256 } from '../src/crypto/sha256.js';
import { signWebhook, verifyWebhook, WebhookError } from '../src/index.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';

const SECRET = 'whsec_property_tests_secret';
const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}\u2800\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/u;
const T = 1_763_719_200;
const now = () => T * 1000;
const encoder = new TextEncoder();

async function outcome(rawBody: Uint8Array, headers: Record<string, string>): Promise<'verified' | WebhookError> {
  try {
    await verifyWebhook({ rawBody, headers }, { secret: SECRET, now });
    return 'verified';
  } catch (error) {
    if (!(error instanceof WebhookError)) throw new Error(`threw something other than WebhookError: ${String(error)}`);
    return error;
  }
}

describe('properties (fast-check)', () => {
  const event = samplePaymentPaidEvent();
  const signed = signWebhook({ event, secret: SECRET, timestamp: T });
  const body = encoder.encode(signed.body);

  it('the untouched delivery verifies', async () => {
    expect(await outcome(body, signed.headers)).toBe('verified');
  });

  it('changing any byte of the body never verifies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: body.length - 1 }), fc.integer({ min: 1, max: 255 }), async (at, flip) => {
        const tampered = new Uint8Array(body);
        tampered[at] = (tampered[at] as number) ^ flip;
        expect(await outcome(tampered, signed.headers)).not.toBe('verified');
      }),
      { numRuns: 300 },
    );
  });

  it('changing any character of the signature header never verifies', async () => {
    const header = signed.headers['x-service-signature'] as string;
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: header.length - 1 }), fc.integer({ min: 0x20, max: 0x7e }), async (at, code) => {
        const replaced = header.slice(0, at) + String.fromCharCode(code) + header.slice(at + 1);
        fc.pre(replaced.toLowerCase() !== header); // upper-casing a hex digit leaves the same signature
        expect(await outcome(body, { ...signed.headers, 'x-service-signature': replaced })).not.toBe('verified');
      }),
      { numRuns: 300 },
    );
  });

  it('truncating or extending the body never verifies', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: body.length - 1 }),
        fc.uint8Array({ minLength: 1, maxLength: 8 }),
        async (cut, extra) => {
          expect(await outcome(body.subarray(0, cut), signed.headers)).not.toBe('verified');
          const longer = new Uint8Array(body.length + extra.length);
          longer.set(body);
          longer.set(extra, body.length);
          expect(await outcome(longer, signed.headers)).not.toBe('verified');
        },
      ),
      { numRuns: 100 },
    );
  });

  it('arbitrary bodies and headers only ever produce a WebhookError', async () => {
    const headerValue = fc.oneof(
      fc.string(),
      fc.constantFrom(`t=${T},v1=${'a'.repeat(64)}`, `t=${T}`, 'v1=', ''),
      fc.array(fc.string(), { maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          fc.string().map((s) => encoder.encode(s)),
          fc.json().map((s) => encoder.encode(s)),
        ),
        fc.dictionary(
          fc.constantFrom(
            'x-service-signature',
            'x-service-event',
            'x-service-delivery',
            'X-Service-Signature',
            'content-type',
          ),
          headerValue,
        ),
        async (rawBody, headers) => {
          const result = await outcome(rawBody, headers as Record<string, string>);
          expect(result).toBeInstanceOf(WebhookError);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a correctly signed arbitrary body is never accepted unless it is a valid payment.paid', async () => {
    await fc.assert(
      fc.asyncProperty(fc.json(), async (text) => {
        const s = signWebhook({ event: text, secret: SECRET, timestamp: T });
        const result = await outcome(encoder.encode(s.body), s.headers);
        expect(result).toBeInstanceOf(WebhookError);
      }),
      { numRuns: 200 },
    );
  });

  it('the pure-JS SHA-256 and HMAC (web test signer) equal node:crypto on any input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 100 }), (data, key) => {
        expect(Buffer.from(sha256(data)).toString('hex')).toBe(createHash('sha256').update(data).digest('hex'));
        expect(Buffer.from(hmacSha256(key, data)).toString('hex')).toBe(
          createHmac('sha256', key).update(data).digest('hex'),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('signWebhook equals an independent createHmac over t.body for any body and secret', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme' }),
        // Any secret signing accepts: not blank, no whitespace around it, no invisible characters (nor
        // spaces other than the ASCII one).
        fc
          .string({ minLength: 1, unit: 'grapheme' })
          .filter((s) => s.trim() === s && s.length > 0 && !INVISIBLE.test(s) && s !== 'null' && s !== 'NaN'),
        fc.nat(),
        (text, secret, timestamp) => {
          const s = signWebhook({ event: text, secret, timestamp });
          const expected = createHmac('sha256', secret).update(`${timestamp}.${text}`).digest('hex');
          expect(s.headers['x-service-signature']).toBe(`t=${timestamp},v1=${expected}`);
        },
      ),
      { numRuns: 300 },
    );
  });
});
