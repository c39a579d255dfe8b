import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AttemptStoppedError,
  createWebhookHandler,
  type DedupeStore,
  type HandlerOptions,
  MemoryDedupeStore,
  type Outcome,
  type PaymentPaidEvent,
  PaymentRejectedError,
  signWebhook,
  type WebhookContext,
  type WebhookResponse,
} from '../src/index.js';
import { clientDisconnected } from '../src/node/index.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';
import { FaultyStore } from './support/faulty-store.js';
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
  const calls: Array<{ event: PaymentPaidEvent; ctx: WebhookContext }> = [];
  const outcomes: Outcome[] = [];
  const logger = recordingLogger();
  const handle = createWebhookHandler({
    secret: SECRET,
    logger,
    onOutcome: (o) => {
      outcomes.push(o);
    },
    onPaymentPaid: (event, ctx) => {
      calls.push({ event, ctx });
    },
    ...options,
  });
  return { handle, calls, logger, outcomes };
}

const json = (res: WebhookResponse) => JSON.parse(res.body) as Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectError(res: WebhookResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = json(res);
  expect(body.error).toBe(code);
  expect(typeof body.message).toBe('string');
  expect((body.message as string).length).toBeGreaterThan(10);
}

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

/** Polls until `check` passes or `ms` runs out (for work the pipeline finishes in the background). */
async function eventually(check: () => void | Promise<void>, ms = 3_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await sleep(10);
    }
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the status table: one code and one HTTP status for every way a delivery ends', () => {
  it('wrong method -> 405 METHOD_NOT_ALLOWED with Allow: POST; handler not run', async () => {
    const { handle, calls } = setup();
    const res = await handle({ ...delivery(), method: 'GET' });
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('POST');
    expect(calls).toHaveLength(0);
  });

  it('content type not JSON -> 415 UNSUPPORTED_MEDIA_TYPE; JSON with parameters is fine', async () => {
    const { handle } = setup();
    expectError(await handle(delivery(undefined, { 'content-type': 'text/plain' })), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await handle(delivery(undefined, { 'content-type': undefined })), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect((await handle(delivery(undefined, { 'content-type': 'application/json; charset=utf-8' }))).status).toBe(200);
  });

  it('body over maxBodyBytes -> 413 BODY_TOO_LARGE (and the connection closes), by declared length, bytes or multibyte text', async () => {
    const { handle, calls } = setup({ maxBodyBytes: 100 });
    const byLength = await handle(delivery(undefined, { 'content-length': '101' }));
    expectError(byLength, 413, 'BODY_TOO_LARGE');
    expect(byLength.headers.connection).toBe('close');
    expectError(await handle({ ...delivery(), rawBody: new Uint8Array(101) }), 413, 'BODY_TOO_LARGE');
    expectError(await handle({ ...delivery(), rawBody: 'é'.repeat(51) }), 413, 'BODY_TOO_LARGE');
    expect(calls).toHaveLength(0);
  });

  it('hands a body reader the byte limit and only calls it for a POST with a JSON content type', async () => {
    const { handle } = setup({ maxBodyBytes: 4096 });
    const reads: number[] = [];
    const d = delivery();
    const reader = async (limit: number) => {
      reads.push(limit);
      return d.rawBody;
    };
    expect((await handle({ ...d, rawBody: reader })).status).toBe(200);
    await handle({ ...d, method: 'PUT', rawBody: reader });
    await handle({ ...d, headers: { ...d.headers, 'content-type': 'text/plain' }, rawBody: reader });
    expect(reads).toEqual([4096]);
  });

  it('signature missing / malformed / no match / stale -> 401 with the code', async () => {
    const { handle, calls } = setup();
    expectError(await handle(delivery(undefined, { 'x-service-signature': undefined })), 401, 'MISSING_SIGNATURE');
    expectError(await handle(delivery(undefined, { 'x-service-signature': 't=1,v1=zz' })), 401, 'MALFORMED_SIGNATURE');
    const event = samplePaymentPaidEvent();
    const other = signWebhook({ event, secret: 'whsec_someone_else' });
    expectError(await handle({ ...delivery(event), headers: other.headers }), 401, 'SIGNATURE_MISMATCH');
    const stale = signWebhook({ event, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 3600 });
    expectError(
      await handle({ method: 'POST', rawBody: stale.body, headers: stale.headers }),
      401,
      'TIMESTAMP_OUT_OF_TOLERANCE',
    );
    expect(calls).toHaveLength(0);
  });

  it('signed but invalid -> 400 INVALID_PAYLOAD / EVENT_MISMATCH / MISSING_DELIVERY_ID', async () => {
    const { handle, calls } = setup();
    expectError(await handle(delivery('{"event":"payment.paid","paymentId":42}')), 400, 'INVALID_PAYLOAD');
    expectError(await handle(delivery('not json')), 400, 'INVALID_PAYLOAD');
    expectError(await handle(delivery(undefined, { 'x-service-event': 'payment.other' })), 400, 'EVENT_MISMATCH');
    expectError(await handle(delivery(undefined, { 'x-service-delivery': 'abc' })), 400, 'MISSING_DELIVERY_ID');
    expect(calls).toHaveLength(0);
  });

  it('another event type -> 200 ignored, handler not run', async () => {
    const { handle, calls, outcomes } = setup();
    const res = await handle(delivery('{"event":"payment.refunded","paymentId":"p_1"}'));
    expect(res.status).toBe(200);
    expect(json(res)).toEqual({ received: true, ignored: true });
    expect(calls).toHaveLength(0);
    expect(outcomes[0]).toMatchObject({ outcome: 'ignored', status: 200, code: 'UNSUPPORTED_EVENT' });
  });

  it('first delivery -> 200 {"received":true}; ctx is exactly deliveryId, timestamp, source, signal, confirmLease: no lease internals', async () => {
    const { handle, calls } = setup();
    const event = samplePaymentPaidEvent();
    const d = delivery(event);
    const res = await handle(d);
    expect(res.status).toBe(200);
    expect(res.body).toBe('{"received":true}');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.event).toEqual(event);
    const ctx = calls[0]?.ctx as WebhookContext;
    // Own properties, `signal` and `confirmLease` (getters: made on first use), and `outsideTransaction`
    // (section 5a: with this lease store it just runs its function). Nothing else.
    expect(Object.keys(ctx).sort()).toEqual(['deliveryId', 'source', 'timestamp']);
    expect('signal' in ctx && 'confirmLease' in ctx).toBe(true);
    expect(Object.getOwnPropertyNames(Object.getPrototypeOf(ctx)).sort()).toEqual([
      'confirmLease',
      'constructor',
      'outsideTransaction',
      'signal',
    ]);
    expect(ctx.outsideTransaction(() => 'ran')).toBe('ran');
    expect(ctx.deliveryId).toBe(d.headers['x-service-delivery']);
    expect(ctx.source).toBe('webhook');
    expect(ctx.signal).toBeInstanceOf(AbortSignal);
    expect(ctx.signal.aborted).toBe(false);
    // Destructured, confirmLease still works: the attempt is over (its lease completed), so it says so.
    const { confirmLease } = ctx;
    await expect(confirmLease()).rejects.toMatchObject({ code: 'LEASE_LOST' });
  });

  it('completed before, same fingerprint -> 200 duplicate, handler not run, whatever the delivery id', async () => {
    const { handle, calls } = setup();
    const event = samplePaymentPaidEvent();
    await handle(delivery(event));
    const again = await handle(delivery(event)); // a fresh dl_ id: the key is the signed paymentId
    expect(json(again)).toEqual({ received: true, duplicate: true });
    expect(calls).toHaveLength(1);
  });

  it('in progress -> 409 DELIVERY_IN_PROGRESS with Retry-After = seconds left on the lease; handler not run twice', async () => {
    const gate = deferred();
    let runs = 0;
    const { handle } = setup({
      leaseMs: 5_000,
      onPaymentPaid: async () => {
        runs++;
        await gate.promise;
      },
    });
    const event = samplePaymentPaidEvent();
    const first = handle(delivery(event));
    await sleep(5);
    const busy = await handle(delivery(event));
    expectError(busy, 409, 'DELIVERY_IN_PROGRESS');
    expect(busy.headers['retry-after']).toBe('5');
    gate.resolve();
    expect((await first).status).toBe(200);
    expect(runs).toBe(1);
  });

  it('seen with a different fingerprint -> 422 PAYLOAD_CONFLICT, handler not run, logged as an alert', async () => {
    const { handle, calls, logger } = setup();
    const event = samplePaymentPaidEvent();
    await handle(delivery(event));
    expectError(await handle(delivery({ ...event, amount: '99.00' })), 422, 'PAYLOAD_CONFLICT');
    expect(calls).toHaveLength(1);
    const alert = logger.at('error').find((e) => e.fields.alert === true);
    expect(alert?.fields).toMatchObject({ code: 'PAYLOAD_CONFLICT', status: 422, paymentId: event.paymentId });
  });

  it('a conflict is caught while the first delivery is still in progress too', async () => {
    const gate = deferred();
    const { handle } = setup({ onPaymentPaid: () => gate.promise });
    const event = samplePaymentPaidEvent();
    const first = handle(delivery(event));
    await sleep(5);
    expectError(await handle(delivery({ ...event, orderNo: 'other-order' })), 422, 'PAYLOAD_CONFLICT');
    gate.resolve();
    await first;
  });

  it('handler throws -> claim released, 500 HANDLER_FAILED; the retry -> 200 and one credit', async () => {
    let attempt = 0;
    const credited: string[] = [];
    const { handle } = setup({
      onPaymentPaid: (event) => {
        if (++attempt === 1) throw new Error('database hiccup');
        credited.push(event.paymentId);
      },
    });
    const event = samplePaymentPaidEvent();
    expectError(await handle(delivery(event)), 500, 'HANDLER_FAILED');
    expect((await handle(delivery(event))).status).toBe(200);
    expect(credited).toEqual([event.paymentId]);
  });

  it('handler rejects the payment for good -> recorded, 200 rejected, logged as an error; duplicates -> 200 duplicate', async () => {
    let runs = 0;
    const { handle, logger } = setup({
      onPaymentPaid: () => {
        runs++;
        throw new PaymentRejectedError('paid 1.00, order wants 12.50');
      },
    });
    const event = samplePaymentPaidEvent();
    expect(json(await handle(delivery(event)))).toEqual({ received: true, rejected: true });
    expect(json(await handle(delivery(event)))).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
    expect(logger.at('error').some((e) => e.fields.reason === 'paid 1.00, order wants 12.50')).toBe(true);
  });

  it('recognises a PaymentRejectedError made by another copy of the library (brand, not prototype)', async () => {
    const foreign = new Error('from another copy');
    Object.defineProperty(foreign, Symbol.for('@service-pay/core/PaymentRejectedError'), { value: true });
    Object.assign(foreign, { reason: 'from another copy' });
    const { handle } = setup({
      onPaymentPaid: () => {
        throw foreign;
      },
    });
    expect(json(await handle(delivery()))).toEqual({ received: true, rejected: true });
  });

  it('already-parsed body -> 500 RAW_BODY_UNAVAILABLE at once, with the fix in the message', async () => {
    const { handle, calls } = setup();
    const d = delivery();
    const res = await handle({ ...d, rawBody: JSON.parse(d.rawBody) });
    expectError(res, 500, 'RAW_BODY_UNAVAILABLE');
    expect(json(res).message).toMatch(/before any JSON body parser/);
    expect(calls).toHaveLength(0);
  });

  it('an in-process store that is full of deliveries in progress -> 503, never an eviction of a lease', async () => {
    const gate = deferred();
    const store = new MemoryDedupeStore({ maxEntries: 2, logger: recordingLogger() });
    const { handle } = setup({ store, onPaymentPaid: () => gate.promise });
    const running = [handle(delivery()), handle(delivery())];
    await sleep(10);
    expectError(await handle(delivery()), 503, 'STORE_UNAVAILABLE');
    gate.resolve();
    expect((await Promise.all(running)).map((r) => r.status)).toEqual([200, 200]);
  });
});

describe('store faults (v2): the claim', () => {
  it('store unreachable -> 503 STORE_UNAVAILABLE with Retry-After; handler not run', async () => {
    const store = new FaultyStore();
    store.failClaim = new Error('ECONNREFUSED');
    const { handle, calls, logger } = setup({ store });
    const res = await handle(delivery());
    expectError(res, 503, 'STORE_UNAVAILABLE');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(calls).toHaveLength(0);
    expect(logger.at('error')[0]?.fields).toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503 });
  });

  it('a refused connection is logged as what it is, not as "did not answer in time"', async () => {
    const store = new FaultyStore();
    store.failClaim = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    const { handle, logger } = setup({ store });
    expectError(await handle(delivery()), 503, 'STORE_UNAVAILABLE');
    const message = logger.at('error')[0]?.message;
    expect(message).toBe(
      'The store failed (connect ECONNREFUSED 127.0.0.1:6379); answered 503 so the sender retries later.',
    );
    expect(message).not.toMatch(/in time/);
    const withCode = new FaultyStore();
    withCode.failClaim = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    const second = setup({ store: withCode });
    await second.handle(delivery());
    expect(second.logger.at('error')[0]?.message).toMatch(/^The store failed \(57P01: terminating connection/);
  });

  it('during an outage each 503 is one error line: no RELEASE_FAILED warning for claims that never landed', async () => {
    const store = new FaultyStore();
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    store.failClaim = down;
    store.failRelease = down;
    const { handle, logger } = setup({ store, leaseMs: 200 });
    for (let i = 0; i < 5; i++) expectError(await handle(delivery()), 503, 'STORE_UNAVAILABLE');
    await eventually(() => expect(store.count('release')).toBeGreaterThanOrEqual(5));
    expect(logger.at('error').map((l) => l.fields.code)).toEqual(Array(5).fill('STORE_UNAVAILABLE'));
    expect(logger.at('warn')).toEqual([]);
    // The release is still tried (a claim may land after its error); its failure is there at debug.
    expect(logger.at('debug').filter((l) => l.fields.code === 'RELEASE_FAILED').length).toBe(5);
  });

  it('a release that fails after a handler failure still warns (that lease did land and holds retries off)', async () => {
    const store = new FaultyStore();
    store.failRelease = new Error('ECONNRESET');
    const { handle, logger } = setup({
      store,
      onPaymentPaid: () => {
        throw new Error('boom');
      },
    });
    expectError(await handle(delivery()), 500, 'HANDLER_FAILED');
    await eventually(() => expect(logger.at('warn').map((l) => l.fields.code)).toContain('RELEASE_FAILED'));
  });

  it('store slow -> 503 after the bounded wait, not a hang', async () => {
    const store = new FaultyStore();
    store.failClaim = 'hang';
    const { handle, calls, logger } = setup({ store, storeTimeoutMs: 50 });
    expectError(await handle(delivery()), 503, 'STORE_UNAVAILABLE');
    expect(calls).toHaveLength(0);
    expect(logger.at('error')[0]?.message).toBe(
      'The store did not answer within storeTimeoutMs; answered 503 so the sender retries later.',
    );
  });

  it('regression: a claim that lands after the 503 (a paused store) is released, so the retry is not held off', async () => {
    // Before v2, such a claim held a lease nobody ran until it expired: 122 of 300 payments were lost.
    const store = new FaultyStore();
    store.failClaim = { after: 150 }; // answers long after storeTimeoutMs, and lands
    const { handle, calls } = setup({ store, storeTimeoutMs: 30, leaseMs: 60_000 });
    const event = samplePaymentPaidEvent();
    expectError(await handle(delivery(event)), 503, 'STORE_UNAVAILABLE');
    store.failClaim = undefined;
    await eventually(async () => {
      expect(store.count('release')).toBeGreaterThan(0);
      expect((await store.inner.claim(`payment.paid:${event.paymentId}`, 'probe', 'x', 1)).state).toBe('claimed');
    });
    await sleep(5);
    expect((await handle(delivery(event))).status).toBe(200); // well inside the 60 s lease
    expect(calls).toHaveLength(1);
  });

  it('regression: a store whose own timeout is longer than storeTimeoutMs does not orphan the lease', async () => {
    const store = new FaultyStore();
    store.failClaim = { after: 100 }; // the store's own bound (say 1 s) is longer than the pipeline's
    const { handle } = setup({ store, storeTimeoutMs: 20 });
    const event = samplePaymentPaidEvent();
    expectError(await handle(delivery(event)), 503, 'STORE_UNAVAILABLE');
    store.failClaim = undefined;
    await eventually(async () => {
      const res = await handle(delivery(event));
      expect(res.status).toBe(200);
    });
  });

  it('a late claim release stops retrying once the lease would have run out anyway', async () => {
    const store = new FaultyStore();
    store.failClaim = new Error('down');
    store.failRelease = new Error('still down');
    const { handle } = setup({ store, leaseMs: 300 });
    await handle(delivery());
    await sleep(700);
    const releases = store.count('release');
    expect(releases).toBeGreaterThan(1); // retried with backoff
    await sleep(400);
    expect(store.count('release')).toBe(releases); // and then stopped
  });
});

describe('store faults (v2): completion', () => {
  it('regression: complete fails -> 200, the lease is kept alive and complete retried until it lands; no second credit', async () => {
    // Before v2, complete was tried once: the lease then expired and a duplicate ran the handler again
    // (59 of 60 payments credited twice with a 3 s lease).
    const store = new FaultyStore();
    store.failComplete = new Error('connection reset');
    const { handle, calls, logger } = setup({ store, leaseMs: 300 });
    const event = samplePaymentPaidEvent();
    expect((await handle(delivery(event))).status).toBe(200);
    await sleep(600); // two leases: without the heartbeat, the lease would be gone
    expectError(await handle(delivery(event)), 409, 'DELIVERY_IN_PROGRESS');
    expect(store.count('extend')).toBeGreaterThan(0);
    expect(logger.at('error').filter((e) => /recording completion failed/i.test(e.message)).length).toBeGreaterThan(1);
    store.failComplete = undefined;
    await eventually(async () => {
      expect(json(await handle(delivery(event)))).toEqual({ received: true, duplicate: true });
    });
    expect(calls).toHaveLength(1);
  });

  it('complete hangs -> 200 after the bound, retried in the background', async () => {
    const store = new FaultyStore();
    store.failComplete = 'hang';
    const { handle, calls } = setup({ store, storeTimeoutMs: 30 });
    const event = samplePaymentPaidEvent();
    expect((await handle(delivery(event))).status).toBe(200);
    store.failComplete = undefined;
    await eventually(async () => {
      expect(json(await handle(delivery(event)))).toEqual({ received: true, duplicate: true });
    });
    expect(calls).toHaveLength(1);
  });

  it('complete answers false (another attempt holds the key) -> 200, alerted', async () => {
    const store = new FaultyStore();
    store.failComplete = false;
    const { handle, logger } = setup({ store });
    expect((await handle(delivery())).status).toBe(200);
    expect(logger.at('error').some((e) => e.fields.alert === true && /another attempt/.test(e.message))).toBe(true);
  });

  it('records completion of a key the store lost while the handler ran (restarted empty)', async () => {
    const store = new FaultyStore();
    const { handle, calls } = setup({
      store,
      onPaymentPaid: async (event) => {
        await store.inner.release(`payment.paid:${event.paymentId}`, store.calls[0]?.token as string);
        calls.push({ event } as never);
      },
    });
    const event = samplePaymentPaidEvent();
    expect((await handle(delivery(event))).status).toBe(200);
    expect(json(await handle(delivery(event)))).toEqual({ received: true, duplicate: true });
    expect(calls).toHaveLength(1);
  });

  it('release failing after a handler error still answers 500; the release is retried until the lease ends', async () => {
    const store = new FaultyStore();
    store.failRelease = new Error('gone');
    const { handle } = setup({
      store,
      leaseMs: 200,
      onPaymentPaid: () => {
        throw new Error('boom');
      },
    });
    const event = samplePaymentPaidEvent();
    expectError(await handle(delivery(event)), 500, 'HANDLER_FAILED');
    expectError(await handle(delivery(event)), 409, 'DELIVERY_IN_PROGRESS');
    store.failRelease = undefined;
    await eventually(async () => expectError(await handle(delivery(event)), 500, 'HANDLER_FAILED'));
  });
});

describe('leases, deadlines and ctx (v2)', () => {
  it('keeps the lease alive while a slow handler runs (a heartbeat every third), so a retry waits', async () => {
    // Fake timers: with a 90 ms lease on real time, a loaded machine that stalls the event loop past a
    // heartbeat lets the lease lapse, and the test would measure the machine instead of the heartbeat.
    vi.useFakeTimers();
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
    await vi.advanceTimersByTimeAsync(400); // more than four leases
    expectError(await handle(delivery(event)), 409, 'DELIVERY_IN_PROGRESS');
    gate.resolve();
    expect((await first).status).toBe(200);
    expect(runs).toBe(1);
  });

  it('aborts ctx.signal at once when the store says the lease is gone, logs it; confirmLease throws', async () => {
    const store = new FaultyStore();
    store.extendAnswer = false;
    const seen: unknown[] = [];
    const { handle, logger } = setup({
      store,
      leaseMs: 60,
      onPaymentPaid: async (_event, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        seen.push(ctx.signal.reason);
        await ctx.confirmLease();
      },
    });
    expectError(await handle(delivery()), 500, 'HANDLER_FAILED');
    expect(seen[0]).toBeInstanceOf(AttemptStoppedError);
    expect((seen[0] as AttemptStoppedError).code).toBe('LEASE_LOST');
    expect(logger.at('error').some((e) => /Lease lost while onPaymentPaid runs/.test(e.message))).toBe(true);
  });

  it('regression: the store restarted empty -> the next heartbeat aborts the handler, long before the old lease would end', async () => {
    // Before v2, ctx.signal fired only at the next extension, 20 s later: 60 of 120 credited twice.
    const store = new FaultyStore();
    let abortedAfterMs: number | undefined;
    const { handle } = setup({
      store,
      leaseMs: 300,
      onPaymentPaid: async (event, ctx) => {
        const started = Date.now();
        store.inner.release(`payment.paid:${event.paymentId}`, store.calls[0]?.token as string); // "restart"
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        abortedAfterMs = Date.now() - started;
        throw ctx.signal.reason;
      },
    });
    expectError(await handle(delivery()), 500, 'HANDLER_FAILED');
    expect(abortedAfterMs).toBeLessThan(300); // within a heartbeat (100 ms) plus a tick
  });

  it('ctx.confirmLease() resolves while the lease holds: the handler credits', async () => {
    let confirmed = false;
    const { handle } = setup({
      onPaymentPaid: async (_e, ctx) => {
        await ctx.confirmLease();
        confirmed = true;
      },
    });
    expect((await handle(delivery())).status).toBe(200);
    expect(confirmed).toBe(true);
  });

  it('regression: a handler that never settles is logged at the deadline, 500 HANDLER_TIMEOUT, and a later attempt credits it', async () => {
    // Before v2: 409 forever, not one log line, the payment lost.
    const credited: string[] = [];
    let attempts = 0;
    const reasons: unknown[] = [];
    const { handle, logger, outcomes } = setup({
      leaseMs: 150,
      handlerTimeoutMs: 100,
      onPaymentPaid: async (event, ctx) => {
        if (++attempts === 1) {
          ctx.signal.addEventListener('abort', () => reasons.push(ctx.signal.reason));
          await new Promise(() => {}); // hangs for good
        }
        credited.push(event.paymentId);
      },
    });
    const event = samplePaymentPaidEvent();
    expectError(await handle(delivery(event)), 500, 'HANDLER_TIMEOUT');
    expect((reasons[0] as AttemptStoppedError).code).toBe('HANDLER_TIMEOUT');
    const logged = logger.at('error').find((e) => e.fields.code === 'HANDLER_TIMEOUT');
    expect(logged?.fields).toMatchObject({ status: 500, paymentId: event.paymentId });
    expect(outcomes.at(-1)).toMatchObject({ outcome: 'timeout', code: 'HANDLER_TIMEOUT', status: 500 });
    // Not released (it may still finish): a retry meets 409 until the lease runs out by itself.
    expectError(await handle(delivery(event)), 409, 'DELIVERY_IN_PROGRESS');
    await eventually(async () => expect((await handle(delivery(event))).status).toBe(200));
    expect(credited).toEqual([event.paymentId]);
  });

  it('a handler that finishes after its deadline has its completion recorded, so no retry runs it again', async () => {
    let runs = 0;
    const { handle, logger } = setup({
      leaseMs: 2_000,
      handlerTimeoutMs: 50,
      onPaymentPaid: async () => {
        runs++;
        await sleep(150); // ignores ctx.signal
      },
    });
    const event = samplePaymentPaidEvent();
    expectError(await handle(delivery(event)), 500, 'HANDLER_TIMEOUT');
    await eventually(async () =>
      expect(json(await handle(delivery(event)))).toEqual({ received: true, duplicate: true }),
    );
    expect(runs).toBe(1);
    expect(logger.at('warn').some((e) => /finished after its deadline/.test(e.message))).toBe(true);
  });

  it('warns about a handler still running at 4 s, before it ends (the sender gives up at 5 s)', async () => {
    vi.useFakeTimers();
    const { handle, logger } = setup({ onPaymentPaid: () => sleep(4_600) });
    const answer = handle(delivery());
    await vi.advanceTimersByTimeAsync(4_300);
    expect(logger.at('warn').some((e) => /over 4 s/.test(e.message))).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await answer).status).toBe(200);
  });
});

describe('secrets, clock and headers: a bad value fails closed with a coded error, never an open check', () => {
  it.each([
    ['a space', ' '],
    ['a newline', '\n'],
    ['empty', ''],
    ['a tab and spaces', ' \t '],
  ])('refuses a secret that is %s when the handler is built: it would let anyone sign', (_what, secret) => {
    expect(() => createWebhookHandler({ secret, onPaymentPaid: () => {} })).toThrowError(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });

  it('refuses a rotation list with one blank slot, naming the slot and never the secret', () => {
    try {
      createWebhookHandler({ secret: ['whsec_real_secret_value', ' '], onPaymentPaid: () => {} });
      throw new Error('expected a throw');
    } catch (error) {
      expect((error as { code: string }).code).toBe('INVALID_OPTIONS');
      expect((error as Error).message).toMatch(/secret\[1\].*whitespace/);
      expect((error as Error).message).not.toContain('whsec_real_secret_value');
    }
  });

  it('refuses a secret with leading or trailing whitespace, and an empty list', () => {
    for (const secret of ['whsec_abc\n', ' whsec_abc', [] as string[]]) {
      expect(() => createWebhookHandler({ secret, onPaymentPaid: () => {} })).toThrowError(/secret/);
    }
  });

  it('a payment signed with " " is never credited: no handler can be built with that secret', () => {
    // The attack a blank secret allows: anyone signs 1,000,000 USDT with it.
    const forged = signWebhook({ event: samplePaymentPaidEvent({ amount: '1000000' }), secret: 'x' });
    expect(forged.body).toContain('1000000');
    expect(() => signWebhook({ event: samplePaymentPaidEvent(), secret: ' ' })).toThrowError(/whitespace/);
    expect(() => createWebhookHandler({ secret: [' '], onPaymentPaid: () => {} })).toThrow();
  });

  it('regression: a clock that returns a non-number fails closed (500), never turning the tolerance check off', async () => {
    for (const now of [() => Number.NaN, () => 'soon' as unknown as number, () => undefined as unknown as number]) {
      const { handle, calls, logger } = setup({ now });
      expectError(await handle(delivery()), 500, 'INVALID_OPTIONS');
      expect(calls).toHaveLength(0);
      expect(logger.at('error')[0]?.message).toMatch(/options\.now\(\)/);
    }
  });

  it('regression: headers of any shape get a coded answer, never a TypeError', async () => {
    const { handle, calls } = setup();
    const d = delivery();
    const odd: unknown[] = [
      new Map<string, unknown>([['content-type', 42]]),
      new Map<string, unknown>([
        ['Content-Type', 'application/json'],
        ['X-Service-Signature', { nested: true }],
      ]),
      new Map<string, unknown>([
        ['content-type', 'application/json'],
        ['x-service-signature', ['a', 'b']],
      ]),
      { 'content-type': ['application/json', 'text/plain'] },
      { 'content-type': 'application/json', 'x-service-signature': 7 },
      null,
      'headers',
    ];
    for (const headers of odd) {
      const res = await handle({ ...d, headers: headers as never });
      expect([401, 415]).toContain(res.status);
      expect(typeof json(res).error).toBe('string');
    }
    // A Map with the right values is read case-insensitively and works.
    const map = new Map(Object.entries(d.headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect((await handle({ ...d, headers: map })).status).toBe(200);
    expect(calls).toHaveLength(1);
  });
});

describe('logging and onOutcome: every outcome logged at its level, never a secret, reported once per request', () => {
  it('every refusal is logged at warn with code and status, and never the secret, signature or body', async () => {
    const { handle, logger } = setup();
    const d = delivery();
    await handle({ ...d, method: 'PUT' });
    await handle(delivery(undefined, { 'content-type': 'text/plain' }));
    await handle(delivery('not json'));
    const warns = logger.at('warn');
    expect(warns.map((w) => w.fields.code)).toEqual([
      'METHOD_NOT_ALLOWED',
      'UNSUPPORTED_MEDIA_TYPE',
      'INVALID_PAYLOAD',
    ]);
    expect(warns.map((w) => w.fields.status)).toEqual([405, 415, 400]);
    const text = JSON.stringify(logger.entries);
    const v1 = (d.headers['x-service-signature'] as string).split('v1=')[1] as string;
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(v1.slice(0, 16));
    expect(text).not.toContain('12500000');
  });

  it('401s are rate-limited per code: the first is logged, the rest counted', async () => {
    const { handle, logger } = setup();
    for (let i = 0; i < 20; i++) await handle(delivery(undefined, { 'x-service-signature': undefined }));
    for (let i = 0; i < 5; i++) await handle(delivery(undefined, { 'x-service-signature': 't=1,v1=zz' }));
    const warns = logger.at('warn');
    expect(warns.filter((w) => w.fields.code === 'MISSING_SIGNATURE')).toHaveLength(1);
    expect(warns.filter((w) => w.fields.code === 'MALFORMED_SIGNATURE')).toHaveLength(1);
  });

  it('every refusal is rate-limited per code: 10,000 GETs, 415s and 413s make one line each', async () => {
    // Before: 405, 415 and 413 were logged on every request (10,000 GETs -> 10,000 lines, 1.2 MB).
    const { handle, logger } = setup({ maxBodyBytes: 1024 });
    const d = delivery();
    for (let i = 0; i < 10_000; i++) await handle({ ...d, method: 'GET' });
    for (let i = 0; i < 100; i++) await handle({ ...d, headers: { ...d.headers, 'content-type': 'text/plain' } });
    for (let i = 0; i < 100; i++) await handle({ ...d, rawBody: Buffer.alloc(2048, 32) });
    const codes = logger.at('warn').map((w) => w.fields.code);
    expect(codes.filter((c) => c === 'METHOD_NOT_ALLOWED')).toHaveLength(1);
    expect(codes.filter((c) => c === 'UNSUPPORTED_MEDIA_TYPE')).toHaveLength(1);
    expect(codes.filter((c) => c === 'BODY_TOO_LARGE')).toHaveLength(1);
    expect(logger.entries.length).toBeLessThanOrEqual(5);
  });

  it('regression: 2,000 clients gone mid-body make one debug line and a count, not 2,000 lines', async () => {
    vi.useFakeTimers();
    const { handle, logger, outcomes } = setup();
    const d = delivery();
    const gone = { ...d, rawBody: () => Promise.reject(clientDisconnected(new Error('aborted'))) };
    for (let i = 0; i < 2_000; i++) await handle(gone);
    const lines = () => logger.entries.filter((e) => e.fields.code === 'CLIENT_DISCONNECTED');
    expect(lines().map((l) => l.level)).toEqual(['debug']);
    await vi.advanceTimersByTimeAsync(10_000);
    // The window closed: the rest are counted in one line, still at debug (nothing the merchant must do).
    expect(lines().map((l) => [l.level, l.fields.suppressed])).toEqual([
      ['debug', undefined],
      ['debug', 1_999],
    ]);
    expect(outcomes.filter((o) => o.code === 'CLIENT_DISCONNECTED')).toHaveLength(2_000); // metrics see each
  });

  it('credits at info, duplicates at debug, with paymentId and deliveryId', async () => {
    const { handle, logger } = setup();
    const event = samplePaymentPaidEvent();
    const first = delivery(event);
    await handle(first);
    await handle(delivery(event));
    expect(logger.at('info')[0]?.fields).toMatchObject({
      status: 200,
      paymentId: event.paymentId,
      deliveryId: first.headers['x-service-delivery'],
    });
    expect(logger.at('debug').some((e) => /Duplicate/.test(e.message))).toBe(true);
  });

  it('a setup problem gets its fix logged once: a parsed body, an API secret, a wrong clock', async () => {
    const { handle, logger } = setup({ secret: 'sk_test_this_is_the_api_secret' });
    const d = delivery();
    for (let i = 0; i < 3; i++) await handle({ ...d, rawBody: { parsed: true } as never });
    for (let i = 0; i < 3; i++) await handle(d);
    const hints = logger.at('warn').filter((e) => e.fields.hint === true);
    expect(hints.map((h) => h.fields.code)).toEqual(['RAW_BODY_UNAVAILABLE', 'SIGNATURE_MISMATCH']);
    expect(hints[1]?.message).toMatch(/looks like an API secret/);
    expect(logger.at('error').filter((e) => e.fields.hint === true)).toHaveLength(0); // warn: nothing to page for
    const skewed = setup({ now: () => Date.now() + 3_600_000 });
    for (let i = 0; i < 3; i++) await skewed.handle(delivery());
    const clock = skewed.logger.at('warn').filter((e) => e.fields.hint === true);
    expect(clock).toHaveLength(1);
    expect(clock[0]?.message).toMatch(/clock/);
  });

  it('onOutcome is called once per request with outcome, status, code, ids, source and durations', async () => {
    const { handle, outcomes } = setup({ onPaymentPaid: async () => sleep(5) });
    const event = samplePaymentPaidEvent();
    const d = delivery(event);
    await handle(d);
    await handle(delivery(event));
    await handle(delivery(undefined, { 'x-service-signature': undefined }));
    expect(outcomes).toHaveLength(3);
    expect(outcomes[0]).toMatchObject({
      outcome: 'credited',
      status: 200,
      paymentId: event.paymentId,
      deliveryId: d.headers['x-service-delivery'],
      source: 'webhook',
    });
    expect(outcomes[0]?.handlerMs).toBeGreaterThanOrEqual(4);
    expect(outcomes[0]?.durationMs).toBeGreaterThanOrEqual(outcomes[0]?.handlerMs as number);
    expect(outcomes[1]).toMatchObject({ outcome: 'duplicate', status: 200 });
    expect(outcomes[1]?.handlerMs).toBeUndefined();
    expect(outcomes[2]).toMatchObject({ outcome: 'refused', status: 401, code: 'MISSING_SIGNATURE' });
    expect(outcomes[2]?.paymentId).toBeUndefined(); // never before the signature passed
  });

  it('a throwing or rejecting onOutcome is logged and never changes the answer', async () => {
    for (const onOutcome of [
      () => {
        throw new Error('metrics down');
      },
      async () => {
        throw new Error('metrics down');
      },
    ]) {
      const { handle, logger } = setup({ onOutcome });
      expect((await handle(delivery())).status).toBe(200);
      await sleep(1);
      expect(logger.at('error').some((e) => /onOutcome threw/.test(e.message))).toBe(true);
    }
  });

  it('a logger that throws never changes the answer', async () => {
    const broken = {
      info: () => {
        throw new Error('log sink full');
      },
      warn: () => {
        throw new Error('log sink full');
      },
      error: () => {
        throw new Error('log sink full');
      },
    };
    const { handle } = setup({ logger: broken });
    expect((await handle(delivery())).status).toBe(200);
    expect((await handle({ ...delivery(), method: 'GET' })).status).toBe(405);
  });
});

describe('options and keys', () => {
  it('dedupes by the signed paymentId by default, and by a custom dedupeKey when given', async () => {
    const { handle, calls } = setup({ dedupeKey: (e) => `order:${e.orderNo}` });
    const a = samplePaymentPaidEvent({ orderNo: 'same-order' });
    const b = { ...a, paymentId: 'p_second' };
    await handle(delivery(a));
    // Same order, other payment: other fingerprint under the same key -> conflict, not a second credit.
    expectError(await handle(delivery(b)), 422, 'PAYLOAD_CONFLICT');
    expect(calls).toHaveLength(1);
  });

  it('refuses bad options at construction, before any payment arrives', () => {
    const bad: Array<Partial<HandlerOptions>> = [
      { secret: '' },
      { onPaymentPaid: undefined as never },
      { store: {} as DedupeStore },
      { store: { kind: 'transactional' } as never },
      { leaseMs: 0 },
      { handlerTimeoutMs: -1 },
      { retainMs: -1 },
      { maxBodyBytes: Number.NaN },
      { storeTimeoutMs: 0 },
      { logger: {} as never },
      { onOutcome: 'yes' as never },
      { dedupeKey: 'payment' as never },
      { toleranceSec: 0 },
    ];
    for (const options of bad) {
      expect(() =>
        createWebhookHandler({ secret: SECRET, onPaymentPaid: () => {}, ...options } as HandlerOptions),
      ).toThrowError(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    }
  });

  it('a failing dedupeKey option is INVALID_OPTIONS (500), never HANDLER_FAILED: the handler never ran', async () => {
    let ran = 0;
    const { handle, logger, outcomes } = setup({
      dedupeKey: () => {
        throw new TypeError('bug in a custom dedupeKey');
      },
      onPaymentPaid: () => {
        ran++;
      },
    });
    expectError(await handle(delivery()), 500, 'INVALID_OPTIONS');
    const { handle: noKey } = setup({ dedupeKey: () => '' });
    expectError(await noKey(delivery()), 500, 'INVALID_OPTIONS');
    expect(ran).toBe(0);
    expect(outcomes[0]).toMatchObject({ outcome: 'failed', status: 500, code: 'INVALID_OPTIONS' });
    expect(logger.at('error').some((e) => /options\.dedupeKey threw: bug in a custom dedupeKey/.test(e.message))).toBe(
      true,
    );
  });

  it('a failure of the library itself is INTERNAL_ERROR (500), never blamed on the handler', async () => {
    const { handle, logger, outcomes } = setup();
    const d = delivery();
    const answer = await handle({
      ...d,
      rawBody: () => {
        throw new TypeError('an adapter bug');
      },
    });
    expectError(answer, 500, 'INTERNAL_ERROR');
    expect(outcomes[0]).toMatchObject({ outcome: 'failed', code: 'INTERNAL_ERROR' });
    expect(
      logger.at('error').some((e) => e.fields.code === 'INTERNAL_ERROR' && /not in onPaymentPaid/.test(e.message)),
    ).toBe(true);
  });

  it('uses a fresh MemoryDedupeStore per handler by default', async () => {
    const event = samplePaymentPaidEvent();
    const a = setup();
    const b = setup();
    await a.handle(delivery(event));
    expect((await b.handle(delivery(event))).body).toBe('{"received":true}');
  });

  it('a store that throws synchronously is an outage (503), not a crash', async () => {
    const store = new FaultyStore();
    store.claim = () => {
      throw new Error('bug in the store');
    };
    const { handle } = setup({ store });
    expectError(await handle(delivery()), 503, 'STORE_UNAVAILABLE');
  });
});
