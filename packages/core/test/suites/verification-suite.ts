// The verification suite, run twice: against the node:crypto backend (verify.test.ts) and against the Web
// Crypto backend with node:crypto made unavailable (verify.web.test.ts). It must not import node:crypto.
import { describe, expect, it } from 'vitest';
import { type PaymentPaidEvent, signWebhook, verifyWebhook, WebhookError } from '../../src/index.js';
import { samplePaymentPaidEvent } from '../../src/testing/index.js';

export const SECRET = 'whsec_test_4eC39HqLyjWDarjtT1zdp7dc';
const T = 1_763_719_200; // 2025-11-21T10:00:00Z
const atT =
  (offsetSec = 0) =>
  () =>
    (T + offsetSec) * 1000;
const encoder = new TextEncoder();

function signed(event: PaymentPaidEvent | string = samplePaymentPaidEvent(), secret = SECRET, timestamp = T) {
  return signWebhook({ event, secret, timestamp });
}

async function rejection(promise: Promise<unknown>): Promise<WebhookError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookError);
    return error as WebhookError;
  }
  throw new Error('expected a WebhookError');
}

function withSignature(headers: Record<string, string>, signature: string | string[] | null | undefined) {
  return { ...headers, 'x-service-signature': signature } as Record<string, string | string[] | undefined>;
}

const v1Of = (headers: Record<string, string>) => (headers['x-service-signature'] as string).split('v1=')[1] as string;

export function verificationSuite(): void {
  describe('hardening against crafted bodies and headers: text fields, reserved keys, the delivery id', () => {
    const bodyWith = (fields: Record<string, unknown>) => JSON.stringify({ ...samplePaymentPaidEvent(), ...fields });

    it.each([
      ['a lone high surrogate in paymentId', { paymentId: 'p_a\ud800' }],
      ['a lone low surrogate in paymentId', { paymentId: 'p_a\udc00b' }],
      ['a NUL in paymentId', { paymentId: 'p_a\u0000' }],
      ['a newline in orderNo', { orderNo: 'order\nforged log line' }],
      ['an escape sequence in tokenSymbol', { tokenSymbol: 'USDT\u001b[31m' }],
      ['a C1 control in txId', { txId: '0xabc\u0085' }],
    ])('400 INVALID_PAYLOAD for %s (every store would key it differently)', async (_, fields) => {
      const { body, headers } = signed(bodyWith(fields));
      const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() }));
      expect(error.code).toBe('INVALID_PAYLOAD');
      expect(error.message).toMatch(/well-formed Unicode without control characters/);
    });

    it('keeps well-formed text: emoji (surrogate pairs), CJK, accents', async () => {
      const { body, headers } = signed(bodyWith({ orderNo: '订单-🎉-café' }));
      const { event } = await verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() });
      expect(event.orderNo).toBe('订单-🎉-café');
    });

    it('drops __proto__ and constructor keys, written plainly or with escapes; other extra fields stay', async () => {
      const base = JSON.stringify(samplePaymentPaidEvent()).slice(0, -1);
      for (const extra of [
        '"__proto__":{"isAdmin":true}',
        '"\\u005f_proto__":{"isAdmin":true}',
        '"constructor":{"prototype":{"x":1}}',
        '"nested":{"__proto__":{"isAdmin":true}}',
      ]) {
        const { body, headers } = signed(`${base},${extra},"futureField":"kept"}`);
        const { event } = await verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() });
        const record = event as unknown as Record<string, unknown>;
        expect(Object.hasOwn(record, '__proto__'), extra).toBe(false);
        expect(Object.hasOwn(record, 'constructor'), extra).toBe(false);
        expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
        expect((record as { isAdmin?: unknown }).isAdmin).toBeUndefined();
        expect(record.futureField).toBe('kept');
        if (extra.startsWith('"nested"')) expect(Object.hasOwn(record.nested as object, '__proto__')).toBe(false);
      }
    });

    it('holds the unsigned delivery id to dl_ and A-Z a-z 0-9 _ - . : (128 at most)', async () => {
      for (const deliveryId of ['dl_1', 'dl_0a1B2c.3:4-5_6', `dl_${'a'.repeat(125)}`]) {
        const { body, headers } = signWebhook({
          event: samplePaymentPaidEvent(),
          secret: SECRET,
          timestamp: T,
          deliveryId,
        });
        await expect(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() })).resolves.toMatchObject({
          deliveryId,
        });
      }
      for (const deliveryId of ['dl_', 'dl_<script>', 'dl_a"b', "dl_a'b", 'dl_a b', `dl_${'a'.repeat(126)}`, 'dl_é']) {
        const { body, headers } = signWebhook({
          event: samplePaymentPaidEvent(),
          secret: SECRET,
          timestamp: T,
          deliveryId,
        });
        const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() }));
        expect([deliveryId, error.code]).toEqual([deliveryId, 'MISSING_DELIVERY_ID']);
      }
    });
  });

  describe('signature', () => {
    it('matches a vector computed independently with openssl', async () => {
      const body =
        '{"event":"payment.paid","paymentId":"p_vector1","orderNo":"订单-€-1","txId":"0xabc","tokenSymbol":"USDT","paymentNetwork":"TRON","amount":"12.50","amountRaw":"12500000","blockNum":"61234567","confirmations":20,"paidAt":"2026-11-21T10:00:00.000Z"}';
      const expected = 'f9b873d6320ba1c47f7baa47e139bde531f0237c5cce813af1325a6f0ba39c57';
      const { headers } = signWebhook({ event: body, secret: 'whsec_vector_secret', timestamp: T });
      expect(headers['x-service-signature']).toBe(`t=${T},v1=${expected}`);
      const verified = await verifyWebhook(
        { rawBody: encoder.encode(body), headers: { ...headers, 'x-service-signature': `t=${T},v1=${expected}` } },
        { secret: 'whsec_vector_secret', now: atT() },
      );
      expect(verified.event.orderNo).toBe('订单-€-1');
    });

    it.each([
      ['string', (body: string) => body],
      ['Buffer-like Uint8Array', (body: string) => encoder.encode(body)],
      [
        'Uint8Array view into a larger buffer',
        (body: string) => {
          const bytes = encoder.encode(`xx${body}yy`);
          return bytes.subarray(2, bytes.length - 2);
        },
      ],
      ['ArrayBuffer', (body: string) => encoder.encode(body).buffer],
      ['DataView', (body: string) => new DataView(encoder.encode(body).buffer) as unknown as Uint8Array],
    ])('accepts the payload as a %s', async (_, as) => {
      const event = samplePaymentPaidEvent();
      const { body, headers } = signed(event);
      const verified = await verifyWebhook({ rawBody: as(body), headers }, { secret: SECRET, now: atT() });
      expect(verified.event).toEqual(event);
      expect(verified.deliveryId).toBe(headers['x-service-delivery']);
      expect(verified.timestamp).toBe(T);
    });

    it('accepts fetch Headers and header names in any case', async () => {
      const { body, headers } = signed();
      await expect(
        verifyWebhook({ rawBody: body, headers: new Headers(headers) }, { secret: SECRET, now: atT() }),
      ).resolves.toBeDefined();
      const shouting = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
      await expect(
        verifyWebhook({ rawBody: body, headers: shouting }, { secret: SECRET, now: atT() }),
      ).resolves.toBeDefined();
    });

    it('rejects a header given twice (array) but accepts an array of one', async () => {
      const { body, headers } = signed();
      const sig = headers['x-service-signature'] as string;
      const twice = await rejection(
        verifyWebhook({ rawBody: body, headers: withSignature(headers, [sig, sig]) }, { secret: SECRET, now: atT() }),
      );
      expect(twice.code).toBe('MALFORMED_SIGNATURE');
      expect(twice.message).toMatch(/2 times/);
      await expect(
        verifyWebhook({ rawBody: body, headers: withSignature(headers, [sig]) }, { secret: SECRET, now: atT() }),
      ).resolves.toBeDefined();
    });

    it.each([
      ['missing', undefined, 'MISSING_SIGNATURE'],
      ['empty', '', 'MISSING_SIGNATURE'],
      ['null', null, 'MISSING_SIGNATURE'],
      ['blank', '   ', 'MALFORMED_SIGNATURE'],
      ['space after the comma (Stripe: malformed)', `t=${T}, v1=${'a'.repeat(64)}`, 'MALFORMED_SIGNATURE'],
      ['space before the comma', `t=${T} ,v1=${'a'.repeat(64)}`, 'MALFORMED_SIGNATURE'],
      ['a leading space', ` t=${T},v1=${'a'.repeat(64)}`, 'MALFORMED_SIGNATURE'],
      ['a tab inside', `t=${T},v1=\t${'a'.repeat(64)}`, 'MALFORMED_SIGNATURE'],
      ['junk', 'i am not a signature', 'MALFORMED_SIGNATURE'],
      ['only other schemes', `t=${T},v0=${'a'.repeat(64)},v2=${'b'.repeat(64)}`, 'MALFORMED_SIGNATURE'],
      ['no t', `v1=${'a'.repeat(64)}`, 'MALFORMED_SIGNATURE'],
      ['duplicate t', `t=${T},t=${T},v1=${'a'.repeat(64)}`, 'MALFORMED_SIGNATURE'],
      ['t with letters', `t=12abc,v1=${'a'.repeat(64)}`, 'MALFORMED_SIGNATURE'],
      ['negative t', `t=-${T},v1=${'a'.repeat(64)}`, 'MALFORMED_SIGNATURE'],
      ['short hex', `t=${T},v1=${'a'.repeat(63)}`, 'MALFORMED_SIGNATURE'],
      ['long hex', `t=${T},v1=${'a'.repeat(65)}`, 'MALFORMED_SIGNATURE'],
      ['non-hex v1', `t=${T},v1=${'g'.repeat(64)}`, 'MALFORMED_SIGNATURE'],
      ['empty item', `t=${T},,v1=${'a'.repeat(64)}`, 'MALFORMED_SIGNATURE'],
      ['trailing comma', `t=${T},v1=${'a'.repeat(64)},`, 'MALFORMED_SIGNATURE'],
      ['nine v1 items', `t=${T}${`,v1=${'a'.repeat(64)}`.repeat(9)}`, 'MALFORMED_SIGNATURE'],
      ['a huge header', `t=${T},v1=${'a'.repeat(64)},x=${'y'.repeat(5000)}`, 'MALFORMED_SIGNATURE'],
      ['a well-formed but wrong v1', `t=${T},v1=${'a'.repeat(64)}`, 'SIGNATURE_MISMATCH'],
    ])('refuses a %s header', async (_, header, code) => {
      const { body, headers } = signed();
      const error = await rejection(
        verifyWebhook({ rawBody: body, headers: withSignature(headers, header) }, { secret: SECRET, now: atT() }),
      );
      expect(error.code).toBe(code);
      expect(error.status).toBe(401);
    });

    it('names the other schemes it found when there is no v1', async () => {
      const { body, headers } = signed();
      const error = await rejection(
        verifyWebhook(
          { rawBody: body, headers: withSignature(headers, `t=${T},v0=${'a'.repeat(64)}`) },
          { secret: SECRET, now: atT() },
        ),
      );
      expect(error.message).toContain('v0');
    });

    it('regression: a correct signature behind a space after the comma is still malformed (no whitespace skipped)', async () => {
      const { body, headers } = signed();
      const error = await rejection(
        verifyWebhook(
          { rawBody: body, headers: withSignature(headers, `t=${T}, v1=${v1Of(headers)}`) },
          { secret: SECRET, now: atT() },
        ),
      );
      expect(error.code).toBe('MALFORMED_SIGNATURE');
      expect(error.message).toMatch(/whitespace/);
    });

    it('passes when one valid v1 stands among invalid ones, in any position, beside other schemes', async () => {
      const { body, headers } = signed();
      const good = v1Of(headers);
      const bad = 'f'.repeat(64);
      for (const header of [
        `t=${T},v1=${bad},v1=${good}`,
        `v1=${good},t=${T},v1=${bad}`,
        `t=${T},v1=${bad},v1=${good},v2=zz`,
      ]) {
        await expect(
          verifyWebhook({ rawBody: body, headers: withSignature(headers, header) }, { secret: SECRET, now: atT() }),
        ).resolves.toBeDefined();
      }
    });

    it('accepts uppercase hex (same digest, other case)', async () => {
      const { body, headers } = signed();
      const header = `t=${T},v1=${v1Of(headers).toUpperCase()}`;
      await expect(
        verifyWebhook({ rawBody: body, headers: withSignature(headers, header) }, { secret: SECRET, now: atT() }),
      ).resolves.toBeDefined();
    });

    it('refuses a v1 where a control character stands for a digit (no case folding into digits)', async () => {
      const { body, headers } = signed();
      const v1 = v1Of(headers);
      const at = v1.search(/[0-9]/);
      // 0x10-0x19 OR 0x20 would be the digits 0x30-0x39: folding must never make them equal.
      const disguised = v1.slice(0, at) + String.fromCharCode(v1.charCodeAt(at) - 0x20) + v1.slice(at + 1);
      const error = await rejection(
        verifyWebhook(
          { rawBody: body, headers: withSignature(headers, `t=${T},v1=${disguised}`) },
          { secret: SECRET, now: atT() },
        ),
      );
      expect(error.code).toBe('MALFORMED_SIGNATURE');
    });

    it('rejects a signature made with another secret, and the t it was made for', async () => {
      const { body, headers } = signed(undefined, 'whsec_other');
      expect((await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() }))).code).toBe(
        'SIGNATURE_MISMATCH',
      );
      const original = signed();
      const movedT = `t=${T + 1},v1=${v1Of(original.headers)}`;
      const moved = await rejection(
        verifyWebhook(
          { rawBody: original.body, headers: withSignature(original.headers, movedT) },
          { secret: SECRET, now: atT() },
        ),
      );
      expect(moved.code).toBe('SIGNATURE_MISMATCH');
    });

    it('verifies the exact bytes: re-serialized JSON with other spacing fails', async () => {
      const event = samplePaymentPaidEvent();
      const { body, headers } = signed(JSON.stringify(event, null, 2));
      await expect(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() })).resolves.toBeDefined();
      const reserialized = JSON.stringify(JSON.parse(body));
      const error = await rejection(verifyWebhook({ rawBody: reserialized, headers }, { secret: SECRET, now: atT() }));
      expect(error.code).toBe('SIGNATURE_MISMATCH');
      expect(error.message).toMatch(/exactly as received/);
    });

    it('accepts any of several secrets (rotation)', async () => {
      const old = signed(undefined, 'whsec_old_rotation_secret');
      const current = signed(undefined, 'whsec_new_rotation_secret');
      const options = { secret: ['whsec_new_rotation_secret', 'whsec_old_rotation_secret'], now: atT() };
      await expect(verifyWebhook({ rawBody: old.body, headers: old.headers }, options)).resolves.toBeDefined();
      await expect(verifyWebhook({ rawBody: current.body, headers: current.headers }, options)).resolves.toBeDefined();
      const neither = signed(undefined, 'whsec_retired_rotation_secret');
      expect((await rejection(verifyWebhook({ rawBody: neither.body, headers: neither.headers }, options))).code).toBe(
        'SIGNATURE_MISMATCH',
      );
    });

    it('a rotation list that matched early still checks the timestamp, the payload and the headers', async () => {
      const secret = ['whsec_new_rotation_secret', 'whsec_old_rotation_secret'];
      for (const signer of secret) {
        const stale = signed(undefined, signer);
        expect(
          (await rejection(verifyWebhook({ rawBody: stale.body, headers: stale.headers }, { secret, now: atT(301) })))
            .code,
        ).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
        const noEvent = signed('{"paymentId":"p_1"}', signer);
        expect(
          (await rejection(verifyWebhook({ rawBody: noEvent.body, headers: noEvent.headers }, { secret, now: atT() })))
            .code,
        ).toBe('INVALID_PAYLOAD');
        const wrongHeader = signed(undefined, signer);
        const headers = { ...wrongHeader.headers, 'x-service-event': 'payment.refunded' };
        expect(
          (await rejection(verifyWebhook({ rawBody: wrongHeader.body, headers }, { secret, now: atT() }))).code,
        ).toBe('EVENT_MISMATCH');
      }
    });

    it('handles a secret longer than the HMAC block (hashed first, per RFC 2104)', async () => {
      const longSecret = `whsec_${'0123456789abcdef'.repeat(7)}`; // 118 characters
      const { body, headers } = signed(undefined, longSecret);
      await expect(
        verifyWebhook({ rawBody: body, headers }, { secret: longSecret, now: atT() }),
      ).resolves.toBeDefined();
    });

    it('refuses a configured secret with whitespace around it, saying so (never using it as a key)', async () => {
      const { body, headers } = signed();
      const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret: `${SECRET}\n`, now: atT() }));
      expect(error.code).toBe('INVALID_OPTIONS');
      expect(error.message).toMatch(/leading or trailing whitespace/);
      expect(error.message).not.toContain(SECRET);
    });

    it('hints that a secret shaped like an API secret is the wrong one', async () => {
      const { body, headers } = signed();
      const error = await rejection(
        verifyWebhook({ rawBody: body, headers }, { secret: 'sk_test_api_0123456789abcdef', now: atT() }),
      );
      expect(error.code).toBe('SIGNATURE_MISMATCH');
      expect(error.message).toMatch(/looks like an API secret/);
    });

    it('never puts the secret, the signature or the body in a message', async () => {
      const event = samplePaymentPaidEvent({ orderNo: 'ORDER-SENSITIVE-42' });
      const { body, headers } = signed(event);
      const v1 = v1Of(headers);
      const attempts = [
        () => verifyWebhook({ rawBody: body, headers }, { secret: 'whsec_wrong_secret_value', now: atT() }),
        () => verifyWebhook({ rawBody: `${body} `, headers }, { secret: SECRET, now: atT() }),
        () => verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT(10_000) }),
        () =>
          verifyWebhook(
            { rawBody: body, headers: withSignature(headers, `t=${T},v1=${v1.slice(1)}`) },
            { secret: SECRET, now: atT() },
          ),
        () => verifyWebhook({ rawBody: body, headers: withSignature(headers, v1) }, { secret: SECRET, now: atT() }),
        () =>
          verifyWebhook(
            { rawBody: body, headers: withSignature(headers, `t=${T},${v1}=v1`) },
            { secret: SECRET, now: atT() },
          ),
        () =>
          verifyWebhook(
            { rawBody: body, headers: { ...headers, 'x-service-event': v1 } },
            { secret: SECRET, now: atT() },
          ),
      ];
      // No 12-character run of the signature, and nothing of the secret or the body, may appear.
      const v1Windows = Array.from({ length: v1.length - 11 }, (_, i) => v1.slice(i, i + 12));
      for (const attempt of attempts) {
        const error = await rejection(attempt());
        for (const secretThing of [SECRET, 'wrong_secret', 'ORDER-SENSITIVE-42', ...v1Windows]) {
          expect(error.message).not.toContain(secretThing);
        }
      }
    });
  });

  describe('timestamp tolerance (injected clock)', () => {
    it.each([
      [0, true],
      [299, true],
      [-299, true],
      [300, true],
      [-300, true],
      [301, false],
      [-301, false],
      [86_400, false],
    ])('now = t %+d s -> accepted: %s', async (offset, accepted) => {
      const { body, headers } = signed();
      const attempt = verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT(offset) });
      if (accepted) await expect(attempt).resolves.toBeDefined();
      else expect((await rejection(attempt)).code).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    });

    it('honours a custom toleranceSec', async () => {
      const { body, headers } = signed();
      await expect(
        verifyWebhook({ rawBody: body, headers }, { secret: SECRET, toleranceSec: 10, now: atT(9) }),
      ).resolves.toBeDefined();
      const error = await rejection(
        verifyWebhook({ rawBody: body, headers }, { secret: SECRET, toleranceSec: 10, now: atT(11) }),
      );
      expect(error.code).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    });

    it('checks the signature before the timestamp', async () => {
      const { body, headers } = signed(undefined, 'whsec_other');
      const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT(10_000) }));
      expect(error.code).toBe('SIGNATURE_MISMATCH');
    });
  });

  describe('payload', () => {
    it('keeps multibyte UTF-8 intact, as a string and as bytes', async () => {
      const event = samplePaymentPaidEvent({ orderNo: '订单-€-😀-ñ', tokenSymbol: 'USDŦ' });
      const { body, headers } = signed(event);
      for (const rawBody of [body, encoder.encode(body)]) {
        const verified = await verifyWebhook({ rawBody, headers }, { secret: SECRET, now: atT() });
        expect(verified.event.orderNo).toBe('订单-€-😀-ñ');
      }
    });

    it('refuses signed bytes that are not valid UTF-8', async () => {
      const event = samplePaymentPaidEvent();
      const json = encoder.encode(JSON.stringify(event));
      // Put a lone continuation byte inside the orderNo string.
      const at = new TextDecoder().decode(json).indexOf(event.orderNo);
      const bytes = new Uint8Array(json);
      bytes[at] = 0x80;
      const headers = signWebhook({ event: 'x', secret: SECRET, timestamp: T }).headers;
      headers['x-service-event'] = 'payment.paid';
      headers['x-service-signature'] = await signBytes(bytes);
      const error = await rejection(verifyWebhook({ rawBody: bytes, headers }, { secret: SECRET, now: atT() }));
      expect(error.code).toBe('INVALID_PAYLOAD');
      expect(error.message).toMatch(/UTF-8/);
    });

    it('keeps unknown extra fields (forward compatible)', async () => {
      const event = { ...samplePaymentPaidEvent(), fee: '0.1', memo: { a: 1 } };
      const { body, headers } = signed(event as PaymentPaidEvent);
      const verified = await verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() });
      expect((verified.event as unknown as Record<string, unknown>).fee).toBe('0.1');
    });

    it('accepts null blockNum and confirmations (no on-chain record)', async () => {
      const { body, headers } = signed(samplePaymentPaidEvent({ blockNum: null, confirmations: null }));
      await expect(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() })).resolves.toBeDefined();
    });

    it.each([
      ['paymentId', 'x_123'],
      ['paymentId', 'p_'],
      ['paymentId', 42],
      ['orderNo', ''],
      ['orderNo', 'o'.repeat(257)],
      ['txId', null],
      ['tokenSymbol', undefined],
      ['paymentNetwork', 7],
      ['amount', 12.5],
      ['amount', '1e5'],
      ['amount', '-1'],
      ['amount', '.5'],
      ['amount', '1.'],
      ['amount', ' 1'],
      ['amountRaw', '12.5'],
      ['amountRaw', '-5'],
      ['amountRaw', 125],
      ['blockNum', 61234567],
      ['blockNum', '0x1f'],
      ['confirmations', -1],
      ['confirmations', 1.5],
      ['confirmations', '20'],
      ['paidAt', '2026-11-21T10:00:00Z'],
      ['paidAt', '2026-11-21T10:00:00.000+01:00'],
      ['paidAt', '2026-13-01T10:00:00.000Z'],
      ['paidAt', '2026-02-30T10:00:00.000Z'],
      ['paidAt', '2025-02-29T10:00:00.000Z'],
      ['paidAt', '2026-11-21T24:00:00.000Z'],
      ['paidAt', 1763719200000],
    ])('refuses %s = %j', async (field, value) => {
      const event = { ...samplePaymentPaidEvent(), [field]: value };
      const { body, headers } = signed(event as PaymentPaidEvent);
      const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() }));
      expect(error.code).toBe('INVALID_PAYLOAD');
      expect(error.status).toBe(400);
      expect(error.message).toContain(field);
    });

    it('accepts a leap day in a leap year', async () => {
      const { body, headers } = signed(samplePaymentPaidEvent({ paidAt: '2028-02-29T23:59:59.999Z' }));
      await expect(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() })).resolves.toBeDefined();
    });

    it('reports every invalid field at once', async () => {
      const event = { ...samplePaymentPaidEvent(), amount: 1, amountRaw: 'x', paidAt: 'yesterday' };
      const { body, headers } = signed(event as unknown as PaymentPaidEvent);
      const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() }));
      expect(error.message).toMatch(/amount .*amountRaw .*paidAt/);
    });

    it.each([
      ['not JSON', 'not json at all'],
      ['a JSON array', '[1,2,3]'],
      ['JSON null', 'null'],
      ['a JSON string', '"payment.paid"'],
      ['an object without event', '{"paymentId":"p_1"}'],
      ['an empty body', ''],
    ])('refuses a signed body that is %s', async (_, body) => {
      const { headers } = signed(body);
      headers['x-service-event'] = 'payment.paid';
      const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() }));
      expect(error.code).toBe('INVALID_PAYLOAD');
    });

    it('refuses a header event that disagrees with the body, or is missing', async () => {
      const { body, headers } = signed();
      const other = await rejection(
        verifyWebhook(
          { rawBody: body, headers: { ...headers, 'x-service-event': 'payment.refunded' } },
          { secret: SECRET, now: atT() },
        ),
      );
      expect(other.code).toBe('EVENT_MISMATCH');
      const { 'x-service-event': _, ...without } = headers;
      const missing = await rejection(
        verifyWebhook({ rawBody: body, headers: without }, { secret: SECRET, now: atT() }),
      );
      expect(missing.code).toBe('EVENT_MISMATCH');
    });

    it.each([
      ['missing', undefined],
      ['without dl_', 'abc123'],
      ['bare prefix', 'dl_'],
      ['with spaces', 'dl_a b'],
    ])('refuses a delivery id that is %s', async (_, id) => {
      const { body, headers } = signed();
      const error = await rejection(
        verifyWebhook(
          { rawBody: body, headers: { ...headers, 'x-service-delivery': id } as Record<string, string> },
          { secret: SECRET, now: atT() },
        ),
      );
      expect(error.code).toBe('MISSING_DELIVERY_ID');
      expect(error.status).toBe(400);
    });

    it('acknowledges an authentic event of another type with UNSUPPORTED_EVENT (status 200)', async () => {
      const { body, headers } = signed(JSON.stringify({ event: 'payment.expired', paymentId: 'p_1' }));
      expect(headers['x-service-event']).toBe('payment.expired');
      const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() }));
      expect(error.code).toBe('UNSUPPORTED_EVENT');
      expect(error.status).toBe(200);
    });

    it('makes that answer without a stack trace, and leaves the process its own trace limit', async () => {
      const { body, headers } = signed(JSON.stringify({ event: 'payment.expired', paymentId: 'p_1' }));
      const before = Error.stackTraceLimit;
      Error.stackTraceLimit = 37;
      try {
        const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() }));
        expect(error.code).toBe('UNSUPPORTED_EVENT');
        expect(error.stack).toMatch(/^WebhookError: Event type "payment.expired" is not handled/);
        expect(error.stack).not.toMatch(/\n\s+at /);
        expect(Error.stackTraceLimit).toBe(37);
        expect(new Error('next').stack).toMatch(/\n\s+at /);
      } finally {
        Error.stackTraceLimit = before;
      }
    });

    it('still answers UNSUPPORTED_EVENT where the trace limit cannot be changed (frozen intrinsics)', async () => {
      const { body, headers } = signed(JSON.stringify({ event: 'payment.expired', paymentId: 'p_1' }));
      const descriptor = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
      Object.defineProperty(Error, 'stackTraceLimit', { value: 10, writable: false, configurable: true });
      try {
        const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: atT() }));
        expect(error.code).toBe('UNSUPPORTED_EVENT');
        expect(Error.stackTraceLimit).toBe(10);
      } finally {
        if (descriptor === undefined) Reflect.deleteProperty(Error, 'stackTraceLimit');
        else Object.defineProperty(Error, 'stackTraceLimit', descriptor);
      }
    });
  });

  describe('bad input to the function itself', () => {
    it.each([
      ['a parsed object', { event: 'payment.paid' }],
      ['null', null],
      ['undefined', undefined],
      ['a number', 42],
    ])('refuses %s as the body with RAW_BODY_UNAVAILABLE and says how to fix it', async (_, rawBody) => {
      const { headers } = signed();
      const error = await rejection(
        verifyWebhook({ rawBody: rawBody as unknown as string, headers }, { secret: SECRET, now: atT() }),
      );
      expect(error.code).toBe('RAW_BODY_UNAVAILABLE');
      expect(error.message).toMatch(/raw request body/);
    });

    it.each([
      ['no secret', {}],
      ['an empty secret', { secret: '' }],
      ['an empty secret list', { secret: [] }],
      ['a list with an empty secret', { secret: ['a', ''] }],
      ['a whitespace-only secret', { secret: ' ' }],
      ['a newline secret', { secret: '\n' }],
      ['a list with a blank slot', { secret: ['whsec_ok', '  '] }],
      ['a secret that is not a string', { secret: 42 }],
      ['a list holding a non-string', { secret: ['whsec_ok', null] }],
      ['a negative tolerance', { secret: SECRET, toleranceSec: -1 }],
      ['a NaN tolerance', { secret: SECRET, toleranceSec: Number.NaN }],
    ])('refuses options with %s', async (_, options) => {
      const { body, headers } = signed();
      const error = await rejection(verifyWebhook({ rawBody: body, headers }, options as never));
      expect(error.code).toBe('INVALID_OPTIONS');
    });

    it.each([
      ['one character', 'a', /is 1 characters; a webhook secret has at least 16/],
      ['15 characters', 'whsec_123456789', /is 15 characters/],
      ['a zero-width space', '\u200b', /invisible character \(U\+200B at index 0\)/],
      ['a NUL', '\u0000', /invisible character \(U\+0000 at index 0\)/],
      ['a zero-width space inside', 'whsec_abc\u200bdefghijklmnop', /U\+200B at index 9/],
      ['a byte order mark in front', '\ufeffwhsec_0123456789abcdef', /leading or trailing whitespace/],
      ['the text "undefined"', 'undefined', /is the text "undefined"/],
      ['the text "null" in a rotation list', [SECRET, 'null'], /secret\[1\] is the text "null"/],
      // Invisible characters that are neither control nor format characters (the second review).
      ['16 Hangul fillers', '\u3164'.repeat(16), /invisible character \(U\+3164 at index 0\)/],
      ['a Hangul choseong filler inside', 'whsec_abc\u115Fdefghijklmnop', /U\+115F at index 9/],
      ['a Hangul jungseong filler inside', 'whsec_abc\u1160defghijklmnop', /U\+1160 at index 9/],
      ['a halfwidth Hangul filler inside', 'whsec_abc\uFFA0defghijklmnop', /U\+FFA0 at index 9/],
      ['a braille blank inside', 'whsec_abc\u2800defghijklmnop', /U\+2800 at index 9/],
      ['a combining grapheme joiner inside', 'whsec_abc\u034Fdefghijklmnop', /U\+034F at index 9/],
      ['a variation selector inside', 'whsec_abc\uFE0Fdefghijklmnop', /U\+FE0F at index 9/],
      ['a supplementary variation selector', 'whsec_abc\u{E0100}defghijklmnop', /U\+E0100 at index 9/],
      ['an em space inside', 'whsec_abc\u2003defghijklmnop', /U\+2003 at index 9/],
      ['a no-break space inside', 'whsec_abc\u00A0defghijklmnop', /U\+00A0 at index 9/],
      // Too few distinct characters: a placeholder, not a generated secret.
      ['one letter, 40 times', 'a'.repeat(40), /fewer than 7 distinct characters in 40/],
      ['whsec_ and one letter', `whsec_${'a'.repeat(40)}`, /fewer than 8 distinct characters in 46/],
      ['two characters alternating', 'ab'.repeat(8), /fewer than 4 distinct characters in 16/],
      ['zeros in a rotation list', [SECRET, '0'.repeat(32)], /secret\[1\] has fewer than 6 distinct/],
    ])('regression: refuses a weak secret, %s, naming the problem and never the secret', async (_, secret, message) => {
      const { body, headers } = signed();
      const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret, now: atT() }));
      expect(error.code).toBe('INVALID_OPTIONS');
      expect(error.message).toMatch(message);
      // (The text "undefined" is named: it is what the value became, not a secret.)
      if (typeof secret === 'string' && secret.length > 9) expect(error.message).not.toContain(secret);
    });

    it('checks an options object once, and again whenever it changed: a secret swapped or pushed, a blank one put in', async () => {
      const { body, headers } = signed();
      const other = signed(samplePaymentPaidEvent(), 'whsec_rotated_secret_0123456789');
      const options: { secret: string | string[]; now: () => number; toleranceSec?: number } = {
        secret: SECRET,
        now: atT(),
      };
      await expect(verifyWebhook({ rawBody: body, headers }, options)).resolves.toBeDefined();
      // A secret replaced on the same object is the one verified with from then on.
      options.secret = 'whsec_rotated_secret_0123456789';
      expect((await rejection(verifyWebhook({ rawBody: body, headers }, options))).code).toBe('SIGNATURE_MISMATCH');
      await expect(verifyWebhook({ rawBody: other.body, headers: other.headers }, options)).resolves.toBeDefined();
      // A list changed in place (a secret pushed, then one replaced) is read again, checks included.
      const list = [SECRET];
      options.secret = list;
      await expect(verifyWebhook({ rawBody: body, headers }, options)).resolves.toBeDefined();
      list.push('whsec_rotated_secret_0123456789');
      await expect(verifyWebhook({ rawBody: other.body, headers: other.headers }, options)).resolves.toBeDefined();
      list[1] = ' ';
      const blank = await rejection(verifyWebhook({ rawBody: body, headers }, options));
      expect(blank.code).toBe('INVALID_OPTIONS');
      expect(blank.message).toMatch(/secret\[1\] is only whitespace/);
      list[1] = 'whsec_rotated_secret_0123456789';
      options.toleranceSec = -1;
      expect((await rejection(verifyWebhook({ rawBody: body, headers }, options))).code).toBe('INVALID_OPTIONS');
      options.toleranceSec = 300;
      await expect(verifyWebhook({ rawBody: body, headers }, options)).resolves.toBeDefined();
    });

    it('options written inline on every call: a known secret is served from what was checked, anything else checked again', async () => {
      const { body, headers } = signed();
      const other = signed(samplePaymentPaidEvent(), 'whsec_rotated_secret_0123456789');
      const now = atT();
      for (let i = 0; i < 3; i++) {
        await expect(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now })).resolves.toBeDefined();
        // A fresh rotation list each call, the old secret (which signed) second.
        await expect(
          verifyWebhook({ rawBody: body, headers }, { secret: ['whsec_rotated_secret_0123456789', SECRET], now }),
        ).resolves.toBeDefined();
      }
      // The same first secret, but a list that goes on with a blank, a short or a missing value.
      for (const [tail, message] of [
        ['  ', /secret\[1\] is only whitespace/],
        ['short', /secret\[1\] is 5 characters/],
        [undefined, /secret\[1\] is undefined/],
      ] as const) {
        const error = await rejection(
          verifyWebhook({ rawBody: body, headers }, { secret: [SECRET, tail as never], now }),
        );
        expect(error.code).toBe('INVALID_OPTIONS');
        expect(error.message).toMatch(message);
      }
      // A list that holds only the known first secret verifies with that one alone, not with the cached pair.
      const alone = await rejection(
        verifyWebhook({ rawBody: body, headers }, { secret: ['whsec_rotated_secret_0123456789'], now }),
      );
      expect(alone.code).toBe('SIGNATURE_MISMATCH');
      await expect(
        verifyWebhook(
          { rawBody: other.body, headers: other.headers },
          { secret: ['whsec_rotated_secret_0123456789'], now },
        ),
      ).resolves.toBeDefined();
      // The known secret with another tolerance or clock is checked with them.
      expect(
        (await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now, toleranceSec: 0 }))).code,
      ).toBe('INVALID_OPTIONS');
      const broken = await rejection(
        verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: 'soon' as never }),
      );
      expect(broken.code).toBe('INVALID_OPTIONS');
    });

    it('regression: a secret list or getter that answers differently on a second read never makes a blank key', async () => {
      const { body, headers } = signed();
      const now = atT();
      // The same delivery signed with a one-space key, as an attacker could sign it.
      const key = await crypto.subtle.importKey('raw', encoder.encode(' '), { name: 'HMAC', hash: 'SHA-256' }, false, [
        'sign',
      ]);
      const mac = await crypto.subtle.sign('HMAC', key, encoder.encode(`${T}.${body}`));
      const hex = [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, '0')).join('');
      const blankSigned = withSignature(headers as Record<string, string>, `t=${T},v1=${hex}`);
      // Each slot valid on its first read, blank on every later one.
      const reads = new Map<PropertyKey, number>();
      const shifty = new Proxy([SECRET, 'whsec_rotated_secret_0123456789'], {
        get(target, property, receiver) {
          const seen = reads.get(property) ?? 0;
          reads.set(property, seen + 1);
          return (property === '0' || property === '1') && seen > 0 ? ' ' : Reflect.get(target, property, receiver);
        },
      });
      let calls = 0;
      const getter = {
        get secret() {
          return ++calls === 1 ? SECRET : ' ';
        },
        now,
      };
      for (const options of [{ secret: shifty, now }, getter]) {
        for (let i = 0; i < 3; i++) {
          const outcome = await verifyWebhook({ rawBody: body, headers: blankSigned }, options).then(
            () => 'verified',
            (error: WebhookError) => error.code,
          );
          expect(['SIGNATURE_MISMATCH', 'INVALID_OPTIONS']).toContain(outcome);
        }
      }
    });

    it('refuses bad options on every call, not only the first (a failed check is not remembered as passed)', async () => {
      const { body, headers } = signed();
      const options = { secret: 'changeme', now: atT() };
      for (let i = 0; i < 3; i++) {
        const error = await rejection(verifyWebhook({ rawBody: body, headers }, options));
        expect(error.code).toBe('INVALID_OPTIONS');
      }
    });

    it('takes a 16-character secret, one with a space inside (it is visible), and few but enough distinct characters', async () => {
      for (const secret of [
        '0123456789abcdef',
        'whsec_with space_inside',
        '0123'.repeat(4),
        'whsec_ünïcødé_€_secret',
      ]) {
        const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret, timestamp: T });
        await expect(verifyWebhook({ rawBody: body, headers }, { secret, now: atT() })).resolves.toBeDefined();
      }
    });

    it('regression: a clock that returns anything but a finite number fails closed', async () => {
      const { body, headers } = signed();
      for (const now of [() => Number.NaN, () => Number.POSITIVE_INFINITY, () => '1763719200000', () => undefined]) {
        const error = await rejection(verifyWebhook({ rawBody: body, headers }, { secret: SECRET, now: now as never }));
        expect(error.code).toBe('INVALID_OPTIONS');
        expect(error.message).toMatch(/options\.now\(\)/);
      }
    });

    it('regression: headers of any shape (Map, non-string values, nested lists) get a coded refusal, never a TypeError', async () => {
      const { body, headers } = signed();
      const sig = headers['x-service-signature'] as string;
      const shapes: Array<[unknown, string]> = [
        [new Map<string, unknown>([['x-service-signature', 42]]), 'MALFORMED_SIGNATURE'],
        [new Map<string, unknown>([['x-service-signature', { v1: 'x' }]]), 'MALFORMED_SIGNATURE'],
        [new Map<string, unknown>([['x-service-signature', null]]), 'MISSING_SIGNATURE'],
        [{ ...headers, 'x-service-signature': 12345 }, 'MALFORMED_SIGNATURE'],
        [{ ...headers, 'x-service-signature': [[sig]] }, 'MALFORMED_SIGNATURE'],
        [{ ...headers, 'x-service-signature': [] }, 'MISSING_SIGNATURE'],
        [{ ...headers, 'x-service-delivery': ['dl_1', 'dl_2'] }, 'MISSING_DELIVERY_ID'],
        [{ ...headers, 'x-service-event': 7 }, 'EVENT_MISMATCH'],
        ['a string', 'MISSING_SIGNATURE'],
        [42, 'MISSING_SIGNATURE'],
      ];
      for (const [shape, code] of shapes) {
        const error = await rejection(
          verifyWebhook({ rawBody: body, headers: shape as never }, { secret: SECRET, now: atT() }),
        );
        expect(error.code).toBe(code);
      }
      // A Map is read case-insensitively, like every other shape.
      const map = new Map(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
      await expect(
        verifyWebhook({ rawBody: body, headers: map }, { secret: SECRET, now: atT() }),
      ).resolves.toBeDefined();
    });

    it('refuses missing headers without throwing anything but WebhookError', async () => {
      const error = await rejection(verifyWebhook({ rawBody: '{}', headers: undefined as never }, { secret: SECRET }));
      expect(error.code).toBe('MISSING_SIGNATURE');
    });
  });
}

/** Signs arbitrary bytes with the library's own signer (already pinned to openssl by the vector test). */
async function signBytes(bytes: Uint8Array): Promise<string> {
  // signWebhook signs text; for non-UTF-8 bytes compute the HMAC with Web Crypto, which both runtimes have.
  const key = await crypto.subtle.importKey('raw', encoder.encode(SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const prefix = encoder.encode(`${T}.`);
  const message = new Uint8Array(prefix.length + bytes.length);
  message.set(prefix);
  message.set(bytes, prefix.length);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, message));
  return `t=${T},v1=${Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}
