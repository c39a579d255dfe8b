import { createReconciler, MemoryDedupeStore } from '@service-pay/core';
import { Hono } from 'hono';
import { expect, it } from 'vitest';
import { ledgerPage } from '../src/index.js';

it('mounts the operator page in Hono, behind the app authorization', async () => {
  const store = new MemoryDedupeStore();
  await store.ledger.recordFailure({
    paymentId: 'p_hono_1',
    orderNo: 'o-1',
    amount: '5.00',
    tokenSymbol: 'USDT',
    key: 'payment.paid:p_hono_1',
    at: Date.now(),
    source: 'webhook',
    code: 'HANDLER_FAILED',
    message: 'downstream <down>',
  });
  const reconciler = createReconciler({ store, getPayment: async () => ({}) as never, onPaymentPaid: () => {} });
  const app = new Hono();
  app.all('/ops/payments', ledgerPage({ store, reconciler, authorize: (req) => req.headers.get('x-admin') === 'yes' }));
  expect((await app.request('/ops/payments')).status).toBe(403);
  const page = await app.request('/ops/payments', { headers: { 'x-admin': 'yes' } });
  const html = await page.text();
  expect(html).toContain('p_hono_1');
  expect(html).toContain('downstream &#60;down&#62;');
});
