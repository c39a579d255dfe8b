import { createServiceClient, ServiceApiError, signApiRequest } from '@service-pay/client';
import { afterEach, describe, expect, it } from 'vitest';
import { generateMerchant, type Simulator, startSimulator } from '../src/index.js';
import { input, setup, signedFetch } from './support/fixtures.js';

const running: Simulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});
async function started(options: Parameters<typeof setup>[0] = {}) {
  const s = await setup(options);
  running.push(s.sim);
  return s;
}
const apiError = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('expected a rejection'),
    (e: unknown) => e,
  );

describe('merchant API: client <-> simulator', () => {
  it('creates a payment: 201, p_ id, PENDING, the input echoed back', async () => {
    const { client } = await started();
    const data = input();
    const payment = await client.createPayment(data);
    expect(payment).toMatchObject({
      ...data,
      status: 'PENDING',
      confirmations: 0,
      requiredConfirmations: 2,
      txId: null,
      paidAt: null,
    });
    expect(payment.paymentId).toMatch(/^p_[0-9a-f]{24}$/);
    expect(Date.parse(payment.expiresAt as string) - Date.parse(payment.createdAt as string)).toBe(900_000);
  });

  it('reads a payment back, and sees it PAID after pay()', async () => {
    const { sim, client } = await started();
    const { paymentId } = await client.createPayment(input());
    await expect(client.getPayment(paymentId)).resolves.toMatchObject({ paymentId, status: 'PENDING' });
    await sim.pay(paymentId, { blockNum: null });
    await expect(client.getPayment(paymentId)).resolves.toMatchObject({
      paymentId,
      status: 'PAID',
      confirmations: null,
    });
  });

  it('answers PAYMENT_NOT_FOUND for an unknown id and for another merchant’s payment', async () => {
    const other = generateMerchant();
    const { sim, merchant, client } = await started();
    await sim.stop();
    running.pop();
    const two = await startSimulator({ merchants: [merchant, other] });
    running.push(two);
    const mine = createServiceClient({ baseUrl: two.url, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
    const theirs = createServiceClient({ baseUrl: two.url, apiKey: other.apiKey, apiSecret: other.apiSecret });
    const { paymentId } = await mine.createPayment(input());
    await expect(theirs.getPayment(paymentId)).rejects.toMatchObject({ status: 404, code: 'PAYMENT_NOT_FOUND' });
    await expect(mine.getPayment('p_doesnotexist')).rejects.toMatchObject({ status: 404, code: 'PAYMENT_NOT_FOUND' });
    expect(client).toBeDefined();
  });

  it('turns a PENDING payment EXPIRED after expireSec (service clock)', async () => {
    let now = Date.now();
    const { client } = await started({ now: () => now });
    const { paymentId } = await client.createPayment(input({ expireSec: 60 }));
    now += 59_999;
    await expect(client.getPayment(paymentId)).resolves.toMatchObject({ status: 'PENDING' });
    now += 1;
    await expect(client.getPayment(paymentId)).resolves.toMatchObject({ status: 'EXPIRED' });
  });

  it('refuses a second payment for the same orderNo with 409 DUPLICATE_ORDER_NO, per merchant', async () => {
    const { client } = await started();
    const data = input();
    await client.createPayment(data);
    const error = await apiError(client.createPayment(data));
    expect(error).toBeInstanceOf(ServiceApiError);
    expect(error).toMatchObject({ status: 409, code: 'DUPLICATE_ORDER_NO' });
  });

  describe('auth failures answer 401 UNAUTHORIZED with the spec body', () => {
    it('a wrong API secret, through the client', async () => {
      const { sim, merchant } = await started();
      const wrong = createServiceClient({ baseUrl: sim.url, apiKey: merchant.apiKey, apiSecret: 'not-the-secret' });
      for (const call of [() => wrong.createPayment(input()), () => wrong.getPayment('p_1')]) {
        expect(await apiError(call())).toMatchObject({
          status: 401,
          code: 'UNAUTHORIZED',
          message: expect.stringMatching(/Signature does not match/),
        });
      }
    });

    it('an unknown ApiKey, through the client', async () => {
      const { sim } = await started();
      const stranger = createServiceClient({ baseUrl: sim.url, apiKey: 'ak_unknown', apiSecret: 'x' });
      expect(await apiError(stranger.getPayment('p_1'))).toMatchObject({
        status: 401,
        code: 'UNAUTHORIZED',
        message: expect.stringMatching(/Signature does not match, or the ApiKey is unknown/),
      });
    });

    it('a client clock outside the 5 minute window, both ways', async () => {
      for (const offset of [-301_000, 301_000]) {
        const { client } = await started({ now: () => Date.now() + offset });
        expect(await apiError(client.createPayment(input()))).toMatchObject({
          status: 401,
          code: 'UNAUTHORIZED',
          message: expect.stringMatching(/window/),
        });
      }
    });

    it('a clock 4 minutes off is still inside the window', async () => {
      const { client } = await started({ now: () => Date.now() - 240_000 });
      await expect(client.createPayment(input())).resolves.toMatchObject({ status: 'PENDING' });
    });

    it.each([
      ['no Authorization header', () => ({}), /Missing Authorization/],
      ['another scheme', () => ({ authorization: 'Bearer x' }), /scheme/],
      ['a malformed header', () => ({ authorization: 'Service-HMAC-SHA256 ApiKey=a' }), /Malformed/],
    ])('%s', async (_, headers, message) => {
      const { sim } = await started();
      const res = await fetch(`${sim.url}/v1/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers() },
        body: JSON.stringify(input()),
      });
      expect(res.status).toBe(401);
      const body = await res.json();
      expect(body).toEqual({ error: 'UNAUTHORIZED', message: expect.stringMatching(message) });
    });

    it('a body changed after signing', async () => {
      const { sim, merchant } = await started();
      const body = JSON.stringify(input());
      const authorization = signApiRequest({ method: 'POST', path: '/v1/payments', body, ...merchant });
      const res = await fetch(`${sim.url}/v1/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: body.replace('12.50', '0.01'),
      });
      expect(res.status).toBe(401);
      expect((await res.json()).message).toMatch(/Signature does not match/);
    });

    it('a signature for another path', async () => {
      const { sim, merchant, client } = await started();
      const { paymentId } = await client.createPayment(input());
      const authorization = signApiRequest({ method: 'GET', path: '/v1/payments/p_other', ...merchant });
      const res = await fetch(`${sim.url}/v1/payments/${paymentId}`, { headers: { authorization } });
      expect(res.status).toBe(401);
    });

    it('a query string is not part of the signed path', async () => {
      const { sim, merchant, client } = await started();
      const { paymentId } = await client.createPayment(input());
      const res = await signedFetch(sim.url, merchant, 'GET', `/v1/payments/${paymentId}?expand=all`);
      expect(res.status).toBe(200);
    });

    it('auth is checked before the body is validated (no information to strangers)', async () => {
      const { sim } = await started();
      const res = await fetch(`${sim.url}/v1/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{',
      });
      expect(res.status).toBe(401);
    });
  });

  describe('coded 400s and other refusals (signed requests the client would not send)', () => {
    it.each([
      ['INVALID_JSON', '{"orderNo":'],
      ['INVALID_BODY', '[1,2]'],
      ['INVALID_BODY', ''],
      ['INVALID_ORDER_NO', JSON.stringify(input({ orderNo: '' }))],
      ['INVALID_TOKEN_SYMBOL', JSON.stringify(input({ tokenSymbol: 'usdt' }))],
      ['INVALID_AMOUNT', JSON.stringify(input({ amount: 12.5 }))],
      ['INVALID_AMOUNT', JSON.stringify(input({ amount: '1.1234567' }))], // USDT has 6 decimals
      ['INVALID_EXPIRE_SEC', JSON.stringify(input({ expireSec: 0 }))],
      ['INVALID_NOTIFY_URL', JSON.stringify(input({ notifyUrl: 'javascript:alert(1)' }))],
    ])('400 %s', async (code, body) => {
      const { sim, merchant } = await started();
      const res = await signedFetch(sim.url, merchant, 'POST', '/v1/payments', body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: code, message: expect.any(String) });
    });

    it('names every problem in the message, the first one in the code', async () => {
      const { sim, merchant } = await started();
      const res = await signedFetch(sim.url, merchant, 'POST', '/v1/payments', '{}');
      const body = await res.json();
      expect(body.error).toBe('INVALID_ORDER_NO');
      expect(body.message).toMatch(/orderNo.*tokenSymbol.*amount.*expireSec.*notifyUrl/s);
    });

    it('accepts 18 fraction digits for a token without configured decimals', async () => {
      const { client } = await started();
      await expect(
        client.createPayment(input({ tokenSymbol: 'ETH', amount: '0.000000000000000001' })),
      ).resolves.toMatchObject({ status: 'PENDING' });
    });

    it('415 UNSUPPORTED_MEDIA_TYPE for a POST that is not JSON', async () => {
      const { sim, merchant } = await started();
      const res = await signedFetch(sim.url, merchant, 'POST', '/v1/payments', JSON.stringify(input()), {
        'content-type': 'text/plain',
      });
      expect(res.status).toBe(415);
      expect((await res.json()).error).toBe('UNSUPPORTED_MEDIA_TYPE');
    });

    it('413 BODY_TOO_LARGE over 64 KiB, answered (not a reset connection)', async () => {
      const { sim, merchant } = await started();
      const res = await signedFetch(
        sim.url,
        merchant,
        'POST',
        '/v1/payments',
        JSON.stringify(input({ memo: 'x'.repeat(70_000) })),
      );
      expect(res.status).toBe(413);
      expect((await res.json()).error).toBe('BODY_TOO_LARGE');
    });

    it('405 METHOD_NOT_ALLOWED with Allow, 404 NOT_FOUND for other routes', async () => {
      const { sim } = await started();
      const put = await fetch(`${sim.url}/v1/payments`, { method: 'PUT' });
      expect(put.status).toBe(405);
      expect(put.headers.get('allow')).toBe('POST');
      expect((await put.json()).error).toBe('METHOD_NOT_ALLOWED');
      for (const path of ['/nothing', '/v1/refunds', '/v1/payments/p_1/cancel', '/v2/payments']) {
        const res = await fetch(`${sim.url}${path}`);
        expect([path, res.status, (await res.json()).error]).toEqual([path, 404, 'NOT_FOUND']);
      }
    });

    it('keeps answering after garbage (no crash)', async () => {
      const { sim, client } = await started();
      await fetch(`${sim.url}/v1/payments`, {
        method: 'POST',
        headers: { authorization: `Service-HMAC-SHA256 ${','.repeat(1000)}` },
        body: '\u0000',
      });
      await expect(client.createPayment(input())).resolves.toMatchObject({ status: 'PENDING' });
    });
  });

  it('creates 100 payments in parallel with unique ids', async () => {
    const { client } = await started();
    const payments = await Promise.all(Array.from({ length: 100 }, () => client.createPayment(input())));
    expect(new Set(payments.map((p) => p.paymentId)).size).toBe(100);
  });
});
