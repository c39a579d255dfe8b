import type { IncomingMessage, ServerResponse } from 'node:http';
import { closedPort, readBody, startServer, type TestServer, testDeadline, waitFor } from '@service-pay/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createServiceClient,
  type RetryOptions,
  ServiceAbortError,
  ServiceApiError,
  type ServiceClientOptions,
  ServiceNetworkError,
  ServiceTimeoutError,
  verifyApiRequest,
} from '../src/index.js';
import { timerSleep } from '../src/retry-policy.js';
import { orderInput } from './support/order-input.js';

const apiKey = 'ak_retry';
const apiSecret = 'sk_retry_secret';
const input = orderInput;
const paymentBody = JSON.stringify({ paymentId: 'p_1', status: 'PAID', ...input });
const servers: TestServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A whole second, so an HTTP date (second precision) lands exactly on it. */
const START = 1_900_000_000_000;

/**
 * A virtual clock shared by the client (signing, deadline, Retry-After) and the server (verification):
 * it moves only when the client sleeps, so waits are asserted exactly and the test never waits them out.
 */
function virtualTime() {
  const clock = { t: START, sleeps: [] as number[] };
  const retry: RetryOptions = {
    sleep: async (ms) => {
      clock.sleeps.push(ms);
      clock.t += ms;
    },
  };
  return { clock, now: () => clock.t, retry };
}

type Action =
  | 'reset' // destroy the socket once the request has arrived
  | 'hang' // read the request, never answer
  | { status: number; body?: string; headers?: Record<string, string> };

interface Seen {
  method: string;
  path: string;
  verified: boolean;
  timestamp: number | undefined;
}

/** A real HTTP service that verifies every request's signature, then does what the script says. */
async function scripted(script: (n: number, req: IncomingMessage) => Action, now: () => number = Date.now) {
  const seen: Seen[] = [];
  const server = await startServer(async (req: IncomingMessage, res: ServerResponse) => {
    const rawBody = await readBody(req);
    const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, rawBody };
    const verified = await verifyApiRequest(request, {
      getApiSecret: (k) => (k === apiKey ? apiSecret : undefined),
      now,
    }).catch(() => undefined);
    seen.push({
      method: request.method,
      path: request.path,
      verified: verified !== undefined,
      timestamp: verified?.timestamp,
    });
    const action = script(seen.length, req);
    if (action === 'reset') req.socket.destroy();
    else if (action === 'hang') return;
    else {
      res
        .writeHead(action.status, { 'content-type': 'application/json', ...action.headers })
        .end(action.body ?? paymentBody);
    }
  });
  servers.push(server);
  return { url: server.url, seen };
}

const errorBody = (code: string, message = `${code} message`) => JSON.stringify({ error: code, message });
const fail = (status: number, headers?: Record<string, string>): Action => ({
  status,
  body: errorBody(status === 429 ? 'RATE_LIMITED' : status >= 500 ? 'UNAVAILABLE' : 'REFUSED'),
  ...(headers ? { headers } : {}),
});

function client(url: string, extra: Partial<ServiceClientOptions> = {}) {
  return createServiceClient({ baseUrl: url, apiKey, apiSecret, ...extra });
}

const caught = (promise: Promise<unknown>) =>
  promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );

describe('retries: what is retried', () => {
  it('a GET after connection resets, then succeeds; every attempt signed and verified', async () => {
    const { clock, now, retry } = virtualTime();
    const s = await scripted((n) => (n < 3 ? 'reset' : { status: 200 }), now);
    await expect(client(s.url, { now, retry }).getPayment('p_1')).resolves.toMatchObject({ paymentId: 'p_1' });
    expect(s.seen).toHaveLength(3);
    expect(s.seen.every((r) => r.verified && r.method === 'GET' && r.path === '/v1/payments/p_1')).toBe(true);
    expect(clock.sleeps).toHaveLength(2);
  });

  it('a GET after a 503, then 200', async () => {
    const { now, retry } = virtualTime();
    const s = await scripted((n) => (n === 1 ? fail(503) : { status: 200 }), now);
    await expect(client(s.url, { now, retry }).getPayment('p_1')).resolves.toMatchObject({ status: 'PAID' });
    expect(s.seen).toHaveLength(2);
  });

  it('waits exactly what Retry-After asks, in seconds, instead of the backoff', async () => {
    const { clock, now, retry } = virtualTime();
    const s = await scripted((n) => (n === 1 ? fail(429, { 'retry-after': '7' }) : { status: 200 }), now);
    await client(s.url, { now, retry }).getPayment('p_1');
    expect(clock.sleeps).toEqual([7000]);
  });

  it('waits until a Retry-After HTTP date', async () => {
    const { clock, now, retry } = virtualTime();
    const at = new Date(START + 3000).toUTCString();
    const s = await scripted((n) => (n === 1 ? fail(503, { 'retry-after': at }) : { status: 200 }), now);
    await client(s.url, { now, retry }).getPayment('p_1');
    expect(clock.sleeps).toEqual([3000]);
  });

  it('gives up at once when Retry-After would pass the deadline, and says so', async () => {
    const { clock, now, retry } = virtualTime();
    const s = await scripted(() => fail(429, { 'retry-after': '3600' }), now);
    const error = await caught(client(s.url, { now, retry: { ...retry, deadlineMs: 60_000 } }).getPayment('p_1'));
    expect(error).toBeInstanceOf(ServiceApiError);
    expect(error).toMatchObject({
      status: 429,
      code: 'RATE_LIMITED',
      attempts: 1,
      message: 'RATE_LIMITED message (Retry-After asked for 3600000 ms, past deadlineMs (60000))',
    });
    expect(clock.sleeps).toEqual([]);
    expect(s.seen).toHaveLength(1);
  });

  it('a 500 forever: retried until the next wait would pass the deadline', async () => {
    const { clock, now, retry } = virtualTime();
    const s = await scripted(() => fail(500), now);
    const c = client(s.url, {
      now,
      retry: { ...retry, maxAttempts: 100, baseDelayMs: 1000, maxDelayMs: 4000, deadlineMs: 10_000, random: () => 0.5 },
    });
    const error = await caught(c.getPayment('p_1'));
    // Waits of half the ceiling (1000, 2000, 4000, 4000 ...): 0.5 s, 1 s, then 2 s until 9.5 s have passed.
    expect(clock.sleeps).toEqual([500, 1000, 2000, 2000, 2000, 2000]);
    expect(s.seen).toHaveLength(7);
    expect(s.seen.every((r) => r.verified)).toBe(true);
    expect(error).toBeInstanceOf(ServiceApiError);
    expect(error).toMatchObject({ status: 500, code: 'UNAVAILABLE', attempts: 7 });
    expect((error as Error).message).toBe(
      'UNAVAILABLE message (7 attempts in 9500 ms: 1) 500 UNAVAILABLE, 2) 500 UNAVAILABLE, 3) 500 UNAVAILABLE, ' +
        '4) 500 UNAVAILABLE, 5) 500 UNAVAILABLE, 6) 500 UNAVAILABLE, 7) 500 UNAVAILABLE; ' +
        'the next wait (2000 ms) would pass deadlineMs (10000))',
    );
  });

  it('stops at maxAttempts and lists why each attempt failed', async () => {
    const { now, retry } = virtualTime();
    const script: Action[] = [fail(503), 'reset', fail(502)];
    const s = await scripted((n) => script[n - 1] ?? { status: 200 }, now);
    const error = await caught(client(s.url, { now, retry }).getPayment('p_1'));
    expect(error).toBeInstanceOf(ServiceApiError);
    expect(error).toMatchObject({ status: 502, attempts: 3 });
    expect((error as Error).message).toMatch(
      /^UNAVAILABLE message \(3 attempts in \d+ ms: 1\) 503 UNAVAILABLE, 2\) network error \(.+\), 3\) 502 UNAVAILABLE; maxAttempts \(3\) reached\)$/,
    );
  });

  it('an answer that is not the spec error body is retried too, and keeps HTTP_ERROR', async () => {
    const { now, retry } = virtualTime();
    const s = await scripted(
      (n) => (n === 1 ? { status: 502, body: '<html>Bad Gateway</html>' } : { status: 200 }),
      now,
    );
    await expect(client(s.url, { now, retry }).getPayment('p_1')).resolves.toMatchObject({ paymentId: 'p_1' });
    expect(s.seen).toHaveLength(2);
  });

  it.each([400, 401, 403, 404, 409, 422, 501])('a %i is never retried, GET or POST', async (status) => {
    const { clock, now, retry } = virtualTime();
    const s = await scripted(() => ({ status, body: errorBody('NOPE', 'Refused for a reason.') }), now);
    const c = client(s.url, { now, retry });
    for (const call of [() => c.getPayment('p_1'), () => c.createPayment(input)]) {
      const error = await caught(call());
      expect(error).toBeInstanceOf(ServiceApiError);
      // The message is the service's own: nothing was retried, so there is no history to add.
      expect(error).toMatchObject({ status, code: 'NOPE', attempts: 1, message: 'Refused for a reason.' });
    }
    expect(s.seen.map((r) => r.method)).toEqual(['GET', 'POST']);
    expect(clock.sleeps).toEqual([]);
  });

  it('retry: false sends once', async () => {
    const s = await scripted(() => fail(503));
    const error = await caught(client(s.url, { retry: false }).getPayment('p_1'));
    expect(error).toMatchObject({ status: 503, attempts: 1, message: 'UNAVAILABLE message' });
    expect(s.seen).toHaveLength(1);
  });
});

describe('retries: createPayment only when the service provably did not take it', () => {
  it('retries a 429, and a 503 that carries Retry-After', async () => {
    const { clock, now, retry } = virtualTime();
    const script: Action[] = [fail(429), fail(503, { 'retry-after': '2' })];
    const s = await scripted((n) => script[n - 1] ?? { status: 201 }, now);
    await expect(client(s.url, { now, retry }).createPayment(input)).resolves.toMatchObject({ paymentId: 'p_1' });
    expect(s.seen.map((r) => [r.method, r.verified])).toEqual([
      ['POST', true],
      ['POST', true],
      ['POST', true],
    ]);
    expect(clock.sleeps[1]).toBe(2000);
  });

  it('retries a refused connection (nothing was sent)', async () => {
    const port = await closedPort();
    let calls = 0;
    const counted: typeof fetch = (url, init) => {
      calls += 1;
      return fetch(url, init);
    };
    const { retry } = virtualTime();
    const c = client(`http://127.0.0.1:${port}`, { fetch: counted, retry });
    const error = await caught(c.createPayment(input));
    expect(error).toBeInstanceOf(ServiceNetworkError);
    expect(error).toMatchObject({
      code: 'NETWORK_ERROR',
      attempts: 3,
      message: expect.stringContaining('ECONNREFUSED'),
    });
    expect(calls).toBe(3);
  });

  it.each<[string, Action, new (...args: never[]) => Error]>([
    ['a bare 503', fail(503), ServiceApiError],
    ['a 500', fail(500), ServiceApiError],
    ['a 502', fail(502), ServiceApiError],
    ['a reset after the request arrived', 'reset', ServiceNetworkError],
  ])('does not send again after %s, and says the payment may exist', async (_, action, type) => {
    const { now, retry } = virtualTime();
    const s = await scripted(() => action, now);
    const error = await caught(client(s.url, { now, retry }).createPayment(input));
    expect(error).toBeInstanceOf(type);
    expect(error).toMatchObject({ attempts: 1, message: expect.stringContaining('may have created the payment') });
    expect(s.seen).toHaveLength(1);
  });

  it('does not send again after a timeout', async () => {
    const s = await scripted(() => 'hang');
    const error = await caught(client(s.url, { timeoutMs: 100 }).createPayment(input));
    expect(error).toBeInstanceOf(ServiceTimeoutError);
    expect(error).toMatchObject({ code: 'TIMEOUT', timeoutMs: 100, attempts: 1 });
    expect(s.seen).toHaveLength(1);
  });
});

describe('retries: time limits and signing', () => {
  it('gives every attempt its own timeout: a GET that hangs once is answered on the retry', async () => {
    const { retry } = virtualTime();
    const s = await scripted((n) => (n === 1 ? 'hang' : { status: 200 }));
    const c = client(s.url, { timeoutMs: 150, retry });
    await expect(c.getPayment('p_1')).resolves.toMatchObject({ paymentId: 'p_1' });
    expect(s.seen).toHaveLength(2);
  });

  it('cuts an attempt short at the deadline (real clock, generous bound)', async () => {
    const s = await scripted(() => 'hang');
    const started = performance.now();
    const error = await caught(client(s.url, { timeoutMs: 60_000, retry: { deadlineMs: 300 } }).getPayment('p_1'));
    expect(error).toBeInstanceOf(ServiceTimeoutError);
    expect((error as ServiceTimeoutError).timeoutMs).toBeLessThanOrEqual(300);
    expect(performance.now() - started).toBeLessThan(10_000); // far below the 60 s timeoutMs
  });

  it('signs every attempt afresh: a retry 400 s later passes the 300 s window', async () => {
    const { now, retry } = virtualTime();
    // Retry-After longer than the auth window: a reused signature would be refused as stale.
    const s = await scripted((n) => (n === 1 ? fail(503, { 'retry-after': '400' }) : { status: 200 }), now);
    const c = client(s.url, { now, retry: { ...retry, deadlineMs: 3_600_000 } });
    await expect(c.getPayment('p_1')).resolves.toMatchObject({ paymentId: 'p_1' });
    expect(s.seen.map((r) => [r.verified, r.timestamp])).toEqual([
      [true, START / 1000],
      [true, START / 1000 + 400],
    ]);
  });

  it('draws the jitter from the injected random source, within [0, min(maxDelayMs, base * 2^(n-1))]', async () => {
    const { clock, now, retry } = virtualTime();
    const draws = [0, 0.999_999, 0.5, 0.25];
    const s = await scripted(() => fail(503), now);
    const c = client(s.url, {
      now,
      retry: { ...retry, maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 250, random: () => draws.shift() ?? 0 },
    });
    await caught(c.getPayment('p_1'));
    // Ceilings 100, 200, 250 (not 400), 250.
    expect(clock.sleeps).toEqual([0, 199, 125, 62]);
  });
});

describe('per-call signal and unbound methods', () => {
  it('aborts a request in flight with ServiceAbortError', async ({ task }) => {
    const s = await scripted(() => 'hang');
    const controller = new AbortController();
    const pending = caught(client(s.url).getPayment('p_1', { signal: controller.signal }));
    await waitFor('the request to reach the server', () => s.seen.length > 0, { deadline: testDeadline(task) }, 5);
    controller.abort(new Error('shutting down'));
    const error = await pending;
    expect(error).toBeInstanceOf(ServiceAbortError);
    expect(error).toMatchObject({ code: 'ABORTED', attempts: 1, cause: new Error('shutting down') });
  });

  it('aborts the wait before a retry (the default timer), without waiting it out', async () => {
    const controller = new AbortController();
    const s = await scripted(() => fail(503, { 'retry-after': '20' }));
    const started = performance.now();
    const c = client(s.url, {
      retry: {
        sleep: (ms, signal) => {
          controller.abort();
          return timerSleep(ms, signal);
        },
      },
    });
    const error = await caught(c.getPayment('p_1', { signal: controller.signal }));
    expect(error).toBeInstanceOf(ServiceAbortError);
    expect(error).toMatchObject({ attempts: 1, message: expect.stringContaining('aborted while waiting to retry') });
    expect((error as Error).message).toContain('1) 503 UNAVAILABLE');
    expect(performance.now() - started).toBeLessThan(10_000); // the 20 s Retry-After was not served
    expect(s.seen).toHaveLength(1);
  });

  it('sends nothing for a signal that is already aborted', async () => {
    const s = await scripted(() => ({ status: 200 }));
    const error = await caught(client(s.url).getPayment('p_1', { signal: AbortSignal.abort() }));
    expect(error).toMatchObject({ name: 'ServiceAbortError', attempts: 0 });
    expect(s.seen).toHaveLength(0);
  });

  it('getPayment and createPayment work unbound (as createReconciler({ getPayment: client.getPayment }) uses them)', async () => {
    const s = await scripted((_, req) => ({ status: req.method === 'POST' ? 201 : 200 }));
    const { getPayment, createPayment } = client(s.url);
    await expect(getPayment('p_1')).resolves.toMatchObject({ paymentId: 'p_1' });
    await expect(getPayment.call(undefined, 'p_1')).resolves.toMatchObject({ paymentId: 'p_1' });
    await expect(createPayment(input)).resolves.toMatchObject({ paymentId: 'p_1' });
    const holder = { getPayment: client(s.url).getPayment };
    await expect(holder.getPayment('p_1')).resolves.toMatchObject({ paymentId: 'p_1' });
    expect(s.seen.every((r) => r.verified)).toBe(true);
  });
});
