import type { AddressInfo } from 'node:net';
import { createReconciler, MemoryDedupeStore } from '@service-pay/core';
import express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ledgerPage } from '../src/index.js';

const store = new MemoryDedupeStore();
let server: ReturnType<ReturnType<typeof express>['listen']>;
let url: string;
const credited: string[] = [];

beforeAll(async () => {
  await store.ledger.recordFailure({
    paymentId: 'p_express_1',
    orderNo: 'o-1',
    amount: '5.00',
    tokenSymbol: 'USDT',
    key: 'payment.paid:p_express_1',
    at: Date.now(),
    source: 'webhook',
    code: 'HANDLER_FAILED',
    message: 'downstream down',
  });
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
  const app = express();
  // A global form parser: the page reads the fields it already parsed.
  app.use(express.urlencoded({ extended: false }));
  app.use('/ops/payments', ledgerPage({ store, reconciler, authorize: (req) => req.headers.get('x-admin') === 'yes' }));
  server = app.listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops/payments`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

it('mounts the operator page in Express: listed, refused without authorization, reconciled by a same-origin POST', async () => {
  expect((await fetch(url)).status).toBe(403);
  const page = await fetch(url, { headers: { 'x-admin': 'yes' } });
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('p_express_1');
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] as string;
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const posted = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'x-admin': 'yes',
      cookie,
      origin: new URL(url).origin,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ action: 'reconcile', paymentId: 'p_express_1', csrf }).toString(),
  });
  expect(posted.status).toBe(303);
  expect(posted.headers.get('location')).toContain('done=credited');
  expect(credited).toEqual(['p_express_1']);
  expect((await store.ledger.story('p_express_1'))?.state).toBe('closed');
});
