import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type ClaimOutcome,
  createWebhookHandler,
  type DedupeStore,
  type HandlerOptions,
  MemoryDedupeStore,
  type PaymentPaidContext,
  type PaymentPaidEvent,
  PaymentRejectedError,
  signWebhook,
  WebhookError,
  type WebhookResponse,
} from '../src/index.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';
import { recordingLogger } from './support/recording-logger.js';

const SECRET = 'whsec_handler_test';

function delivery(
  event: PaymentPaidEvent | string = samplePaymentPaidEvent(),
  overrides: Record<string, string | undefined> = {},
) {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  return { method: 'POST', rawBody: body, headers: { ...headers, ...overrides } as Record<string, string> };
}

function setup(options: Partial<HandlerOptions> = {}) {
  const calls: Array<{ event: PaymentPaidEvent; ctx: PaymentPaidContext }> = [];
  const logger = recordingLogger();
  const handle = createWebhookHandler({
    secret: SECRET,
    logger,
    onPaymentPaid: (event, ctx) => {
      calls.push({ event, ctx });
    },
    ...options,
  });
  return { handle, calls, logger };
}

const json = (res: WebhookResponse) => JSON.parse(res.body) as Record<string, unknown>;

function expectError(res: WebhookResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = json(res);
  expect(body.error).toBe(code);
  expect(typeof body.message).toBe('string');
  expect((body.message as string).length).toBeGreaterThan(10);
}

/** A store that answers through the memory store but can be told to fail or stall. */
class FaultyStore implements DedupeStore {
  readonly inner = new MemoryDedupeStore();
  failClaim: Error | 'hang' | undefined;
  failComplete: Error | false | undefined;
  failRelease: Error | undefined;
  extendAnswer: boolean | undefined;
  claim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome> {
    if (this.failClaim === 'hang') return new Promise(() => {});
    if (this.failClaim) return Promise.reject(this.failClaim);
    return this.inner.claim(key, token, fingerprint, leaseMs);
  }
  complete(key: string, token: string, retainMs: number): Promise<boolean> {
    if (this.failComplete === false) return Promise.resolve(false);
    if (this.failComplete) return Promise.reject(this.failComplete);
    return this.inner.complete(key, token, retainMs);
  }
  release(key: string, token: string): Promise<boolean> {
    if (this.failRelease) return Promise.reject(this.failRelease);
    return this.inner.release(key, token);
  }
  extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    if (this.extendAnswer !== undefined) return Promise.resolve(this.extendAnswer);
    return this.inner.extend(key, token, leaseMs);
  }
}

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

afterEach(() => {
  vi.useRealTimers();
});

describe('the status table (design.md section 4)', () => {
  it('wrong method -> 405 METHOD_NOT_ALLOWED with Allow: POST; handler not run', async () => {
    const { handle, calls } = setup();
    for (const method of ['GET', 'PUT', 'post']) {
      const res = await handle({ ...delivery(), method });
      expectError(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow).toBe('POST');
    }
    expect(calls).toHaveLength(0);
  });

  it('content type not JSON -> 415 UNSUPPORTED_MEDIA_TYPE; JSON with parameters is fine', async () => {
    const { handle, calls } = setup();
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonp', undefined]) {
      expectError(await handle(delivery(undefined, { 'content-type': type })), 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    expect(calls).toHaveLength(0);
    expect((await handle(delivery(undefined, { 'content-type': 'Application/JSON; charset=UTF-8' }))).status).toBe(200);
    expect(calls).toHaveLength(1);
  });

  it('body over maxBodyBytes -> 413 BODY_TOO_LARGE, by declared length, bytes or multibyte text', async () => {
    const { handle, calls } = setup({ maxBodyBytes: 1024 });
    const big = delivery(samplePaymentPaidEvent({ orderNo: 'x'.repeat(2000) }));
    expectError(await handle(big), 413, 'BODY_TOO_LARGE');
    expectError(await handle({ ...big, rawBody: new TextEncoder().encode(big.rawBody) }), 413, 'BODY_TOO_LARGE');
    // 400 characters of 3-byte UTF-8: under the limit in characters, over it in bytes.
    const multibyte = delivery(samplePaymentPaidEvent({ orderNo: '€'.repeat(240) }));
    expect(multibyte.rawBody.length).toBeLessThan(1024);
    expectError(await handle(multibyte), 413, 'BODY_TOO_LARGE');
    // A declared Content-Length over the limit is refused before the body is read at all.
    const reader = vi.fn(async () => '{}');
    expectError(
      await handle({ ...delivery(), headers: { ...delivery().headers, 'content-length': '5000' }, rawBody: reader }),
      413,
      'BODY_TOO_LARGE',
    );
    expect(reader).not.toHaveBeenCalled();
    expect(calls).toHaveLength(0);
  });

  it('hands a body reader the byte limit and only calls it for a POST with a JSON content type', async () => {
    const { handle } = setup({ maxBodyBytes: 4096 });
    const d = delivery();
    const reader = vi.fn(async (limit: number) => {
      expect(limit).toBe(4096);
      return d.rawBody;
    });
    expect((await handle({ ...d, rawBody: reader })).status).toBe(200);
    expect(reader).toHaveBeenCalledTimes(1);
    await handle({ ...d, method: 'GET', rawBody: reader });
    await handle({ ...d, headers: { ...d.headers, 'content-type': 'text/plain' }, rawBody: reader });
    expect(reader).toHaveBeenCalledTimes(1);
    // A reader that refuses (an adapter's stream past the limit) becomes the answer.
    const refusing = async () => {
      throw new WebhookError('BODY_TOO_LARGE', 'The body is over the limit (from the adapter).');
    };
    expectError(await handle({ ...delivery(), rawBody: refusing }), 413, 'BODY_TOO_LARGE');
  });

  it.each([
    ['missing', undefined, 'MISSING_SIGNATURE'],
    ['malformed', 't=abc', 'MALFORMED_SIGNATURE'],
    ['not matching', `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`, 'SIGNATURE_MISMATCH'],
  ])('signature %s -> 401 %s; handler not run', async (_, signature, code) => {
    const { handle, calls } = setup();
    expectError(await handle(delivery(undefined, { 'x-service-signature': signature })), 401, code);
    expect(calls).toHaveLength(0);
  });

  it('timestamp outside the window -> 401 TIMESTAMP_OUT_OF_TOLERANCE', async () => {
    const { handle, calls } = setup({ now: () => Date.now() + 301_000 });
    expectError(await handle(delivery()), 401, 'TIMESTAMP_OUT_OF_TOLERANCE');
    expect(calls).toHaveLength(0);
  });

  it('signed but invalid -> 400 INVALID_PAYLOAD / EVENT_MISMATCH / MISSING_DELIVERY_ID', async () => {
    const { handle, calls } = setup();
    expectError(
      await handle(delivery({ ...samplePaymentPaidEvent(), amount: 12.5 } as unknown as PaymentPaidEvent)),
      400,
      'INVALID_PAYLOAD',
    );
    expectError(await handle(delivery('{not json')), 400, 'INVALID_PAYLOAD');
    expectError(await handle(delivery(undefined, { 'x-service-event': 'payment.refunded' })), 400, 'EVENT_MISMATCH');
    expectError(await handle(delivery(undefined, { 'x-service-delivery': 'nope' })), 400, 'MISSING_DELIVERY_ID');
    expect(calls).toHaveLength(0);
  });

  it('another event type -> 200, handler not run', async () => {
    const { handle, calls } = setup();
    const res = await handle(delivery(JSON.stringify({ event: 'payment.expired', paymentId: 'p_1' })));
    expect(res.status).toBe(200);
    expect(json(res)).toEqual({ received: true, ignored: true });
    expect(calls).toHaveLength(0);
  });

  it('first delivery -> 200 {"received":true}; the handler gets the event and its context', async () => {
    const { handle, calls } = setup();
    const event = samplePaymentPaidEvent();
    const d = delivery(event);
    const res = await handle(d);
    expect(res.status).toBe(200);
    expect(res.body).toBe('{"received":true}');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.event).toEqual(event);
    expect(calls[0]?.ctx.deliveryId).toBe(d.headers['x-service-delivery']);
    expect(calls[0]?.ctx.timestamp).toBe(Number(d.headers['x-service-signature']?.slice(2, 12)));
    expect(calls[0]?.ctx.signal.aborted).toBe(false);
  });

  it('completed before, same fingerprint -> 200 duplicate, handler not run, whatever the delivery id', async () => {
    const { handle, calls } = setup();
    const event = samplePaymentPaidEvent();
    await handle(delivery(event));
    const again = await handle(delivery(event)); // a retry: fresh dl_ id, same signed payment
    expect(again.status).toBe(200);
    expect(json(again)).toEqual({ received: true, duplicate: true });
    expect(calls).toHaveLength(1);
  });

  it('in progress -> 409 DELIVERY_IN_PROGRESS with Retry-After; handler not run twice', async () => {
    const gate = deferred();
    let runs = 0;
    const { handle } = setup({
      leaseMs: 30_000,
      onPaymentPaid: async () => {
        runs++;
        await gate.promise;
      },
    });
    const event = samplePaymentPaidEvent();
    const first = handle(delivery(event));
    await vi.waitFor(() => expect(runs).toBe(1));
    const second = await handle(delivery(event));
    expectError(second, 409, 'DELIVERY_IN_PROGRESS');
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(second.headers['retry-after'])).toBeLessThanOrEqual(30);
    gate.resolve();
    expect((await first).status).toBe(200);
    expect(runs).toBe(1);
  });

  it('seen with a different fingerprint -> 422 PAYLOAD_CONFLICT, handler not run, logged as an alert', async () => {
    const { handle, calls, logger } = setup();
    const event = samplePaymentPaidEvent();
    await handle(delivery(event));
    const conflicting = await handle(delivery({ ...event, amount: '99.00', amountRaw: '99000000' }));
    expectError(conflicting, 422, 'PAYLOAD_CONFLICT');
    expect(calls).toHaveLength(1);
    const alert = logger.at('error').find((e) => e.fields.alert === true);
    expect(alert?.fields.paymentId).toBe(event.paymentId);
  });

  it('a conflict is caught while the first delivery is still in progress too', async () => {
    const gate = deferred();
    const { handle } = setup({ onPaymentPaid: () => gate.promise });
    const event = samplePaymentPaidEvent();
    const first = handle(delivery(event));
    await new Promise((r) => setTimeout(r, 10));
    expectError(await handle(delivery({ ...event, txId: '0xother' })), 422, 'PAYLOAD_CONFLICT');
    gate.resolve();
    await first;
  });

  it('handler throws -> claim released, 500 HANDLER_FAILED; the retry -> 200 and one credit', async () => {
    let attempts = 0;
    const credited: string[] = [];
    const { handle, logger } = setup({
      onPaymentPaid: (event) => {
        attempts++;
        if (attempts === 1) throw new Error('database is down');
        credited.push(event.paymentId);
      },
    });
    const event = samplePaymentPaidEvent();
    const failed = await handle(delivery(event));
    expectError(failed, 500, 'HANDLER_FAILED');
    expect(failed.body).not.toContain('database is down');
    expect(logger.at('error').some((e) => (e.fields.err as Error)?.message === 'database is down')).toBe(true);
    expect((await handle(delivery(event))).status).toBe(200);
    expect((await handle(delivery(event))).body).toContain('duplicate');
    expect(credited).toEqual([event.paymentId]);
    expect(attempts).toBe(2);
  });

  it('handler rejects the payment for good -> recorded as completed, 200 rejected, logged; duplicates -> 200 duplicate', async () => {
    let runs = 0;
    const { handle, logger } = setup({
      onPaymentPaid: () => {
        runs++;
        throw new PaymentRejectedError('amount 12.50 does not match order amount 20.00');
      },
    });
    const event = samplePaymentPaidEvent();
    const res = await handle(delivery(event));
    expect(res.status).toBe(200);
    expect(json(res)).toEqual({ received: true, rejected: true });
    expect(logger.at('error').some((e) => e.fields.reason === 'amount 12.50 does not match order amount 20.00')).toBe(
      true,
    );
    expect(json(await handle(delivery(event)))).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
  });

  it('recognises a PaymentRejectedError made by another copy of the library (brand, not prototype)', async () => {
    const foreign = Object.assign(new Error('other copy'), { reason: 'other copy' });
    Object.defineProperty(foreign, Symbol.for('@service-pay/core/PaymentRejectedError'), { value: true });
    const { handle } = setup({
      onPaymentPaid: () => {
        throw foreign;
      },
    });
    expect(json(await handle(delivery()))).toEqual({ received: true, rejected: true });
  });

  it('handler resolved but complete failed -> 200 (the credit happened), logged as an error', async () => {
    for (const failure of [new Error('connection reset'), false] as const) {
      const store = new FaultyStore();
      store.failComplete = failure;
      const { handle, calls, logger } = setup({ store });
      const res = await handle(delivery());
      expect(res.status).toBe(200);
      expect(res.body).toBe('{"received":true}');
      expect(calls).toHaveLength(1);
      expect(logger.at('error').some((e) => /completion was not recorded/.test(e.message))).toBe(true);
    }
  });

  it('store unreachable -> 503 STORE_UNAVAILABLE with Retry-After; handler not run', async () => {
    const store = new FaultyStore();
    store.failClaim = new Error('ECONNREFUSED');
    const { handle, calls, logger } = setup({ store });
    const res = await handle(delivery());
    expectError(res, 503, 'STORE_UNAVAILABLE');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(calls).toHaveLength(0);
    expect(logger.at('error')).toHaveLength(1);
  });

  it('store slow -> 503 after the bounded wait, not a hang', async () => {
    const store = new FaultyStore();
    store.failClaim = 'hang';
    const { handle, calls } = setup({ store, storeTimeoutMs: 50 });
    expectError(await handle(delivery()), 503, 'STORE_UNAVAILABLE');
    expect(calls).toHaveLength(0);
  });

  it('an in-process store that is full of deliveries in progress -> 503, never an eviction of a lease', async () => {
    const gate = deferred();
    const store = new MemoryDedupeStore({ maxEntries: 2 });
    const { handle } = setup({ store, onPaymentPaid: () => gate.promise });
    const running = [handle(delivery()), handle(delivery())];
    await new Promise((r) => setTimeout(r, 10));
    expectError(await handle(delivery()), 503, 'STORE_UNAVAILABLE');
    gate.resolve();
    expect((await Promise.all(running)).map((r) => r.status)).toEqual([200, 200]);
  });

  it('already-parsed body -> 500 RAW_BODY_UNAVAILABLE at once, with the fix in the message', async () => {
    const { handle, calls } = setup();
    const d = delivery();
    const res = await handle({ ...d, rawBody: JSON.parse(d.rawBody) });
    expectError(res, 500, 'RAW_BODY_UNAVAILABLE');
    expect(json(res).message).toMatch(/before any JSON body parser/);
    expect(calls).toHaveLength(0);
  });

  it('release failing after a handler error still answers 500 and the lease frees itself', async () => {
    const store = new FaultyStore();
    store.failRelease = new Error('gone');
    const { handle } = setup({
      store,
      leaseMs: 50,
      onPaymentPaid: () => {
        throw new Error('boom');
      },
    });
    const event = samplePaymentPaidEvent();
    expectError(await handle(delivery(event)), 500, 'HANDLER_FAILED');
    expectError(await handle(delivery(event)), 409, 'DELIVERY_IN_PROGRESS');
    await new Promise((r) => setTimeout(r, 80));
    expectError(await handle(delivery(event)), 500, 'HANDLER_FAILED'); // claimed again after expiry, ran again
  });
});

describe('dedupe keys, leases and logging', () => {
  it('dedupes by the signed paymentId by default, and by a custom dedupeKey when given', async () => {
    const { handle, calls } = setup({ dedupeKey: (e) => `order:${e.orderNo}` });
    const a = samplePaymentPaidEvent({ orderNo: 'same-order' });
    const b = { ...a, paymentId: 'p_second' };
    await handle(delivery(a));
    // Same order, other payment: other fingerprint under the same key -> conflict, not a second credit.
    expectError(await handle(delivery(b)), 422, 'PAYLOAD_CONFLICT');
    expect(calls).toHaveLength(1);
  });

  it('extends the lease while a slow handler runs, so a retry waits instead of running it twice', async () => {
    const gate = deferred();
    let runs = 0;
    const { handle } = setup({
      leaseMs: 90,
      onPaymentPaid: async () => {
        runs++;
        await gate.promise;
      },
    });
    const event = samplePaymentPaidEvent();
    const first = handle(delivery(event));
    await new Promise((r) => setTimeout(r, 300)); // more than three leases
    expectError(await handle(delivery(event)), 409, 'DELIVERY_IN_PROGRESS');
    gate.resolve();
    expect((await first).status).toBe(200);
    expect(runs).toBe(1);
  });

  it('aborts ctx.signal when the lease is lost, and logs it', async () => {
    const store = new FaultyStore();
    store.extendAnswer = false; // the store says someone else holds the lease now
    const seen: unknown[] = [];
    const { handle, logger } = setup({
      store,
      leaseMs: 60,
      onPaymentPaid: async (_event, { signal }) => {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        seen.push(signal.reason);
        throw signal.reason;
      },
    });
    expectError(await handle(delivery()), 500, 'HANDLER_FAILED');
    expect(String((seen[0] as Error).message)).toMatch(/Lease on payment\.paid:p_.* lost/);
    expect(logger.at('error').some((e) => /lost/.test(e.message))).toBe(true);
  });

  it('gives an already-aborted signal to a handler that asks after the lease was lost', async () => {
    const store = new FaultyStore();
    store.extendAnswer = false;
    let aborted: boolean | undefined;
    const { handle } = setup({
      store,
      leaseMs: 30,
      onPaymentPaid: async (_e, ctx) => {
        await new Promise((r) => setTimeout(r, 120));
        aborted = ctx.signal.aborted;
      },
    });
    await handle(delivery());
    expect(aborted).toBe(true);
  });

  it('warns about a handler slower than 4 s (the sender gives up at 5 s)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { handle, logger } = setup({
      onPaymentPaid: () => {
        vi.setSystemTime(Date.now() + 4_500);
      },
    });
    expect((await handle(delivery())).status).toBe(200);
    expect(logger.at('warn').some((e) => /over 4 s/.test(e.message))).toBe(true);
  });

  it('refuses bad options at construction, before any payment arrives', () => {
    const bad: Array<Partial<HandlerOptions>> = [
      { secret: '' },
      { onPaymentPaid: undefined as never },
      { store: {} as DedupeStore },
      { leaseMs: 0 },
      { retainMs: -1 },
      { maxBodyBytes: Number.NaN },
      { storeTimeoutMs: 0 },
      { logger: {} as never },
    ];
    for (const options of bad) {
      expect(() =>
        createWebhookHandler({ secret: SECRET, onPaymentPaid: () => {}, ...options } as HandlerOptions),
      ).toThrowError(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    }
  });

  it('turns an unexpected internal failure into a 500, never a rejection', async () => {
    const store = new FaultyStore();
    const { handle } = setup({
      store,
      dedupeKey: () => {
        throw new TypeError('bug in a custom dedupeKey');
      },
    });
    expectError(await handle(delivery()), 500, 'HANDLER_FAILED');
  });

  it('uses a fresh MemoryDedupeStore per handler by default', async () => {
    const event = samplePaymentPaidEvent();
    const a = setup();
    const b = setup();
    await a.handle(delivery(event));
    expect((await b.handle(delivery(event))).body).toBe('{"received":true}');
  });
});
