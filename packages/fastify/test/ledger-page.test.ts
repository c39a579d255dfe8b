import { createReconciler, MemoryDedupeStore } from '@service-pay/core';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { ledgerPage } from '../src/index.js';

it('mounts the operator page in Fastify: listed, reconciled by a same-origin POST, other routes still parse JSON', async () => {
  const store = new MemoryDedupeStore();
  await store.ledger.recordFailure({
    paymentId: 'p_fastify_1',
    orderNo: 'o-1',
    amount: '5.00',
    tokenSymbol: 'USDT',
    key: 'payment.paid:p_fastify_1',
    at: Date.now(),
    source: 'webhook',
    code: 'HANDLER_FAILED',
    message: 'downstream down',
  });
  const credited: string[] = [];
  const reconciler = createReconciler({
    store,
    logger: { warn() {}, error() {} },
    getPayment: async (paymentId) => ({
      paymentId,
      orderNo: 'o-1',
      amount: '5.00',
      tokenSymbol: 'USDT',
      status: 'PAID',
    }),
    onPaymentPaid: (p) => {
      credited.push(p.paymentId);
    },
  });
  const app = Fastify();
  await app.register(ledgerPage, {
    path: '/ops/payments',
    store,
    reconciler,
    authorize: (req) => req.headers.get('x-admin') === 'yes',
  });
  app.post('/echo', async (request) => request.body);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    expect((await fetch(`${url}/ops/payments`)).status).toBe(403);
    const page = await fetch(`${url}/ops/payments`, { headers: { 'x-admin': 'yes' } });
    const html = await page.text();
    expect(html).toContain('p_fastify_1');
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] as string;
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const posted = await fetch(`${url}/ops/payments`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'x-admin': 'yes', cookie, origin: url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'reconcile', paymentId: 'p_fastify_1', csrf }).toString(),
    });
    expect(posted.status).toBe(303);
    expect(credited).toEqual(['p_fastify_1']);
    const echo = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(await echo.json()).toEqual({ a: 1 });
  } finally {
    await app.close();
  }
});
