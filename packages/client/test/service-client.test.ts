import { readBody, startServer, type TestServer } from '@service-pay/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createServiceClient,
  ServiceApiError,
  ServiceError,
  ServiceInputError,
  ServiceTimeoutError,
  verifyApiRequest,
} from '../src/index.js';
import { orderInput } from './support/order-input.js';

const apiKey = 'ak_test_1';
const apiSecret = 'sk_test_secret';
const input = orderInput;
const servers: TestServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A small service that verifies every request with verifyApiRequest and records what it saw. */
async function service(answer: (path: string) => { status: number; body: string } = () => ({ status: 200, body: '' })) {
  const seen: { method: string; path: string; body: string; verified: boolean }[] = [];
  const server = await startServer(async (req, res) => {
    const raw = await readBody(req);
    const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, rawBody: raw };
    const verified = await verifyApiRequest(request, {
      getApiSecret: (k) => (k === apiKey ? apiSecret : undefined),
    }).then(
      () => true,
      () => false,
    );
    seen.push({ method: request.method, path: request.path, body: raw.toString('utf8'), verified });
    const { status, body } = answer(request.path);
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  servers.push(server);
  return { url: server.url, seen };
}

const payment = (extra: object = {}) => JSON.stringify({ paymentId: 'p_1', status: 'PENDING', ...input, ...extra });

describe('createServiceClient', () => {
  it('creates a payment with a signed POST of the exact JSON body', async () => {
    const s = await service(() => ({ status: 201, body: payment({ createdAt: 'x' }) }));
    const client = createServiceClient({ baseUrl: s.url, apiKey, apiSecret });
    await expect(client.createPayment(input)).resolves.toEqual({
      paymentId: 'p_1',
      status: 'PENDING',
      ...input,
      createdAt: 'x',
    });
    expect(s.seen).toEqual([{ method: 'POST', path: '/v1/payments', body: JSON.stringify(input), verified: true }]);
  });

  // Issue 16: bounds the spec leaves "not shown" are the service's; the client sends such input as is.
  it('sends a 65-character orderNo, a lowercase token symbol and a 30-day expireSec', async () => {
    const s = await service(() => ({ status: 201, body: payment() }));
    const client = createServiceClient({ baseUrl: s.url, apiKey, apiSecret });
    const unbounded = { ...input, orderNo: 'o'.repeat(65), tokenSymbol: 'usdt.e', expireSec: 30 * 86_400 };
    await expect(client.createPayment(unbounded)).resolves.toMatchObject({ paymentId: 'p_1' });
    expect(s.seen).toEqual([{ method: 'POST', path: '/v1/payments', body: JSON.stringify(unbounded), verified: true }]);
  });

  it('reads a payment with a signed GET', async () => {
    const s = await service(() => ({ status: 200, body: payment({ status: 'PAID' }) }));
    const client = createServiceClient({ baseUrl: s.url, apiKey, apiSecret });
    await expect(client.getPayment('p_1')).resolves.toMatchObject({ status: 'PAID' });
    expect(s.seen).toEqual([{ method: 'GET', path: '/v1/payments/p_1', body: '', verified: true }]);
  });

  it('keeps and signs a path prefix of baseUrl', async () => {
    const s = await service(() => ({ status: 200, body: payment() }));
    const client = createServiceClient({ baseUrl: `${s.url}/gateway/`, apiKey, apiSecret });
    await client.getPayment('p_1');
    expect(s.seen[0]).toMatchObject({ path: '/gateway/v1/payments/p_1', verified: true });
  });

  it('drops every trailing slash of baseUrl, and a long run of slashes inside it costs linear time', async () => {
    const s = await service(() => ({ status: 200, body: payment() }));
    await createServiceClient({ baseUrl: `${s.url}/gateway///`, apiKey, apiSecret }).getPayment('p_1');
    expect(s.seen[0]).toMatchObject({ path: '/gateway/v1/payments/p_1', verified: true });
    // 200,000 slashes then a letter: `/\/+$/` retried from each slash (2 * 10^10 steps, far past the test's
    // timeout); the loop from the end stops at the letter at once.
    const run = '/'.repeat(200_000);
    const client = createServiceClient({ baseUrl: `http://127.0.0.1:1/a${run}b//`, apiKey, apiSecret, retry: false });
    expect(client).toBeDefined();
  });

  it('turns the spec error body into ServiceApiError with status, code and message', async () => {
    const s = await service(() => ({
      status: 401,
      body: JSON.stringify({ error: 'UNAUTHORIZED', message: 'Signature does not match.' }),
    }));
    const client = createServiceClient({ baseUrl: s.url, apiKey, apiSecret });
    const error = await client.getPayment('p_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceApiError);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 401, code: 'UNAUTHORIZED', message: 'Signature does not match.' });
    expect(s.seen).toHaveLength(1); // an HTTP error is an answer: never retried
  });

  it('gives HTTP_ERROR for an error answer without the spec body, with an excerpt', async () => {
    const s = await service(() => ({ status: 502, body: '<html>Bad Gateway</html>' }));
    const error = await createServiceClient({ baseUrl: s.url, apiKey, apiSecret, retry: false })
      .getPayment('p_1')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 502, code: 'HTTP_ERROR', message: expect.stringContaining('Bad Gateway') });
  });

  it.each([
    ['not JSON', 'hello'],
    ['not a payment', '{"ok":true}'],
    ['null', 'null'],
  ])('gives INVALID_RESPONSE for a 2xx body that is %s', async (_, body) => {
    const s = await service(() => ({ status: 200, body }));
    const error = await createServiceClient({ baseUrl: s.url, apiKey, apiSecret })
      .getPayment('p_1')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ServiceApiError', status: 200, code: 'INVALID_RESPONSE' });
  });

  it('checks the input before sending: no request for a float amount', async () => {
    const s = await service();
    const client = createServiceClient({ baseUrl: s.url, apiKey, apiSecret });
    const error = await client
      .createPayment({ ...input, amount: 12.5 as unknown as string, expireSec: -1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceInputError);
    expect(error).toMatchObject({
      code: 'INVALID_AMOUNT',
      field: 'amount',
      message: expect.stringContaining('1 more: INVALID_EXPIRE_SEC'),
    });
    expect((error as ServiceInputError).problems).toHaveLength(2);
    await expect(client.getPayment('x_1')).rejects.toMatchObject({ code: 'INVALID_PAYMENT_ID' });
    await expect(client.getPayment('p_1/../../admin')).rejects.toMatchObject({ code: 'INVALID_PAYMENT_ID' });
    await expect(client.getPayment(undefined as never)).rejects.toMatchObject({ code: 'INVALID_PAYMENT_ID' });
    expect(s.seen).toEqual([]);
  });

  it('times out when the headers arrive but the body stalls', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"paymentId":');
    });
    servers.push(server);
    const client = createServiceClient({
      baseUrl: server.url,
      apiKey,
      apiSecret,
      timeoutMs: 100,
      retry: false,
    });
    await expect(client.getPayment('p_1')).rejects.toBeInstanceOf(ServiceTimeoutError);
  });

  it.each([
    ['options', null],
    ['baseUrl', { baseUrl: 'not a url' }],
    ['baseUrl', { baseUrl: 'ftp://x.example' }],
    ['baseUrl', { baseUrl: 'http://x.example/?q=1' }],
    ['apiKey', { apiKey: '' }],
    ['apiKey', { apiKey: 'a b' }],
    ['apiSecret', { apiSecret: undefined }],
    ['timeoutMs', { timeoutMs: 0 }],
    ['timeoutMs', { timeoutMs: Number.NaN }],
    ['maxNetworkRetries', { maxNetworkRetries: 2 }],
    ['retry', { retry: 'yes' }],
    ['retry', { retry: null }],
    ['retry.retries', { retry: { retries: 3 } }],
    ['retry.maxAttempts', { retry: { maxAttempts: 0 } }],
    ['retry.baseDelayMs', { retry: { baseDelayMs: -1 } }],
    ['retry.deadlineMs', { retry: { deadlineMs: 0 } }],
    ['retry.random', { retry: { random: 0.5 } }],
    ['fetch', { fetch: 'nope' }],
    ['now', { now: 123 }],
  ])('refuses bad %s at construction with INVALID_OPTIONS', (field, override) => {
    const options = override === null ? null : { baseUrl: 'http://127.0.0.1:1', apiKey, apiSecret, ...override };
    let error: unknown;
    try {
      createServiceClient(options as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ServiceInputError);
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', field });
  });
});
