import type { ServerResponse } from 'node:http';
import { readBody, startServer, type TestServer } from '@service-pay/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient, ServiceApiError, ServiceInputError, ServiceTimeoutError } from '../src/index.js';

// A server answering with its own keys and echoes: reserved keys must not reach the returned payment
// (the webhook path drops them), and the request's own Authorization value must not reach an error
// message (a log line), however the server spells it. Millisecond options past what a timer holds fire
// at once: they are refused at construction.

const keys = { apiKey: 'ak_hostile', apiSecret: 'sk_hostile_secret' };
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server answering `answer(authorization)` with `status`; the authorizations it received. */
async function serve(status: number, answer: (authorization: string) => string) {
  const seen: string[] = [];
  const server = await startServer(async (req, res: ServerResponse) => {
    await readBody(req);
    const authorization = String(req.headers.authorization);
    seen.push(authorization);
    res.writeHead(status, { 'content-type': 'application/json' }).end(answer(authorization));
  });
  servers.push(server);
  return { client: createServiceClient({ baseUrl: server.url, ...keys, retry: false }), seen };
}

async function apiError(promise: Promise<unknown>): Promise<ServiceApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceApiError);
  return error as ServiceApiError;
}

const signatureOf = (authorization: string) => authorization.slice(authorization.lastIndexOf('=') + 1);

describe('reserved keys in an answer', () => {
  it('__proto__, constructor and prototype are dropped from the payment, at any depth and in \\u spelling', async () => {
    const { client } = await serve(
      200,
      () =>
        '{"paymentId":"p_1","status":"PAID","__proto__":{"polluted":true},"constructor":{"x":1},' +
        '"prototype":1,"\\u005f_proto__":{"again":true},"extra":{"__proto__":{"deep":true},"kept":1}}',
    );
    const payment = (await client.getPayment('p_1')) as unknown as Record<string, unknown>;
    expect(Object.keys(payment)).toEqual(['paymentId', 'status', 'extra']);
    expect(Object.hasOwn(payment, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(payment)).toBe(Object.prototype);
    expect(Object.hasOwn(payment.extra as object, '__proto__')).toBe(false);
    expect((payment.extra as Record<string, unknown>).kept).toBe(1);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("the request's Authorization in an error", () => {
  const cases: [string, (authorization: string) => string][] = [
    ['the whole header in the message', (a) => JSON.stringify({ error: 'UNAUTHORIZED', message: `bad header: ${a}` })],
    [
      'the signature, upper-cased',
      (a) => JSON.stringify({ error: 'UNAUTHORIZED', message: signatureOf(a).toUpperCase() }),
    ],
    [
      'the signature split by newlines',
      (a) => {
        const s = signatureOf(a);
        return JSON.stringify({ error: 'UNAUTHORIZED', message: `${s.slice(0, 30)}\n${s.slice(30)}` });
      },
    ],
    ['the signature as the error code', (a) => JSON.stringify({ error: `x${signatureOf(a)}`, message: 'no' })],
    ['the header echoed in a body that is not JSON', (a) => `<html>Authorization: ${a}</html>`],
    // The 200-character excerpt of a body that is not JSON ends 32 characters into the signature.
    ['the header cut by the excerpt', (a) => `${'.'.repeat(200 - (a.length - 32))}${a}`],
  ];
  for (const [name, answer] of cases) {
    it(`is never in the message: ${name}`, async () => {
      const { client, seen } = await serve(401, answer);
      const error = await apiError(client.getPayment('p_1'));
      const authorization = seen[0] as string;
      const signature = signatureOf(authorization);
      expect(signature).toMatch(/^[0-9a-f]{64}$/);
      const shown = `${error.code} ${error.message}`;
      expect(shown.toLowerCase()).not.toContain(signature.slice(0, 16));
      expect(shown.toLowerCase()).not.toContain(signature.slice(-16));
      expect(shown.replace(/[^0-9a-f]/gi, '').toLowerCase()).not.toContain(signature.slice(8, 40));
    });
  }

  it('an ordinary refusal keeps its code and message', async () => {
    const { client } = await serve(401, () =>
      JSON.stringify({ error: 'UNAUTHORIZED', message: 'Signature mismatch.' }),
    );
    const error = await apiError(client.getPayment('p_1'));
    expect([error.code, error.message]).toEqual(['UNAUTHORIZED', 'Signature mismatch.']);
  });
});

describe('millisecond options past what a timer holds', () => {
  const base = { baseUrl: 'http://127.0.0.1:9', ...keys };
  const refused = (options: Record<string, unknown>, field: string) => {
    let error: unknown;
    try {
      createServiceClient({ ...base, ...options });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ServiceInputError);
    expect((error as ServiceInputError).code).toBe('INVALID_OPTIONS');
    expect((error as ServiceInputError).field).toBe(field);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^${field.replace('.', '\\.')} must be a whole number of milliseconds (above|from) 0 and at most 2147483647 `,
      ),
    );
  };

  it('timeoutMs, retry.baseDelayMs, retry.maxDelayMs, retry.deadlineMs of 2 ** 31 or 30 days are refused', () => {
    for (const v of [2 ** 31, 30 * 24 * 60 * 60 * 1000]) {
      refused({ timeoutMs: v }, 'timeoutMs');
      refused({ retry: { baseDelayMs: v } }, 'retry.baseDelayMs');
      refused({ retry: { maxDelayMs: v } }, 'retry.maxDelayMs');
      refused({ retry: { deadlineMs: v } }, 'retry.deadlineMs');
    }
    refused({ timeoutMs: Number.POSITIVE_INFINITY }, 'timeoutMs');
  });

  it('the maximum itself is accepted; retry.deadlineMs: Infinity means no deadline of its own', () => {
    expect(() => createServiceClient({ ...base, timeoutMs: 2_147_483_647 })).not.toThrow();
    expect(() => createServiceClient({ ...base, retry: { deadlineMs: Number.POSITIVE_INFINITY } })).not.toThrow();
  });

  it('a timeoutMs at the maximum waits for a slow answer instead of timing out at once', async () => {
    const server = await startServer(async (req, res) => {
      await readBody(req);
      setImmediate(() => res.writeHead(200).end(JSON.stringify({ paymentId: 'p_1', status: 'PAID' })));
    });
    servers.push(server);
    const client = createServiceClient({ baseUrl: server.url, ...keys, retry: false, timeoutMs: 2_147_483_647 });
    const answer = await client.getPayment('p_1').catch((e: unknown) => e);
    expect(answer).not.toBeInstanceOf(ServiceTimeoutError);
    expect(answer).toMatchObject({ paymentId: 'p_1' });
  });
});
