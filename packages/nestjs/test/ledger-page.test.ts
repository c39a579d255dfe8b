import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { createReconciler, MemoryDedupeStore, type PaymentPaidEvent, signWebhook } from '@service-pay/core';
import { ADAPTER_SCENARIO_SECRET, samplePaymentPaidEvent } from '@service-pay/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceLedgerPageModule, ServiceWebhookModule, WebhookError } from '../src/index.js';
import { EchoController, quiet } from './support/apps.js';

const TOKEN = 'operator-token-for-the-test';
const authorize = (req: Request) => req.headers.get('authorization') === `Bearer ${TOKEN}`;

/** The merchant's app: the webhook and the operator page over one store, a handler that can be broken. */
function shop() {
  const store = new MemoryDedupeStore();
  const credits: string[] = [];
  const state = { broken: true };
  const credit = (paymentId: string) => {
    if (state.broken) throw new Error('column "paid_at" does not exist');
    credits.push(paymentId);
  };
  const paid = new Map<string, PaymentPaidEvent>();
  const reconciler = createReconciler({
    store,
    logger: quiet,
    getPayment: async (paymentId) => {
      const e = paid.get(paymentId);
      if (e === undefined) throw new Error('unknown payment');
      return { paymentId, orderNo: e.orderNo, amount: e.amount, tokenSymbol: e.tokenSymbol, status: 'PAID' };
    },
    onPaymentPaid: (p) => credit(p.paymentId),
  });
  const webhook = ServiceWebhookModule.forRoot({
    path: '/webhooks/service',
    secret: ADAPTER_SCENARIO_SECRET,
    store,
    logger: quiet,
    onPaymentPaid: (event) => credit(event.paymentId),
  });
  const page = ServiceLedgerPageModule.forRootAsync({
    useFactory: async () => ({ path: '/ops/payments', store, reconciler, authorize }),
  });
  class AppModule {}
  Module({ imports: [webhook, page], controllers: [EchoController] })(AppModule);
  return { AppModule, credits, state, paid };
}

for (const platform of ['express', 'fastify'] as const) {
  describe(`ServiceLedgerPageModule on @nestjs/platform-${platform}`, () => {
    let app: INestApplication;
    let url: string;
    let s: ReturnType<typeof shop>;
    beforeAll(async () => {
      s = shop();
      app =
        platform === 'express'
          ? await NestFactory.create(s.AppModule, { logger: false })
          : await NestFactory.create(s.AppModule, new FastifyAdapter() as never, { logger: false });
      await app.listen(0, '127.0.0.1');
      url = `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      (app.getHttpServer() as Server).closeAllConnections();
      await app.close();
    });

    it('lists a payment whose handler failed, reconciles it by a same-origin POST, then answers duplicate', async () => {
      const event = samplePaymentPaidEvent();
      s.paid.set(event.paymentId, event);
      const { body, headers } = signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET });
      const deliver = () => fetch(`${url}/webhooks/service`, { method: 'POST', headers, body });
      for (let attempt = 0; attempt < 2; attempt++) expect((await deliver()).status).toBe(500);

      expect((await fetch(`${url}/ops/payments`)).status).toBe(403);
      expect((await fetch(`${url}/ops/payments`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(403);
      const auth = { authorization: `Bearer ${TOKEN}` };
      const list = await fetch(`${url}/ops/payments`, { headers: auth });
      const html = await list.text();
      expect(list.status).toBe(200);
      expect(html).toContain(event.paymentId);
      const story = await (await fetch(`${url}/ops/payments?payment=${event.paymentId}`, { headers: auth })).text();
      expect(story).toContain('HANDLER_FAILED: column &#34;paid_at&#34; does not exist');
      expect(story).toContain('<dt>Failed attempts</dt><dd>2</dd>');

      const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] as string;
      const cookie = (list.headers.get('set-cookie') ?? '').split(';')[0] as string;
      const form = new URLSearchParams({ action: 'reconcile', paymentId: event.paymentId, csrf }).toString();
      const post = (extra: Record<string, string>, formBody = form) =>
        fetch(`${url}/ops/payments`, {
          method: 'POST',
          redirect: 'manual',
          headers: { ...auth, cookie, 'content-type': 'application/x-www-form-urlencoded', ...extra },
          body: formBody,
        });
      s.state.broken = false;
      // Cross-site, origin-less and token-less POSTs are refused before anything is credited.
      expect((await post({ origin: 'https://evil.example' })).status).toBe(403);
      expect((await post({ 'sec-fetch-site': 'cross-site', origin: url })).status).toBe(403);
      expect((await post({})).status).toBe(403);
      expect((await post({ origin: url }, form.replace(/csrf=[^&]+/, 'csrf=forged'))).status).toBe(403);
      expect(s.credits).toEqual([]);

      const done = await post({ origin: url });
      expect([done.status, done.headers.get('location')]).toEqual([303, `?payment=${event.paymentId}&done=credited`]);
      expect(s.credits).toEqual([event.paymentId]);
      const after = await (await fetch(`${url}/ops/payments`, { headers: auth })).text();
      expect(after).not.toContain(`payment=${event.paymentId}`);

      const late = await deliver();
      expect([late.status, await late.text()]).toEqual([200, '{"received":true,"duplicate":true}']);
      expect(s.credits).toEqual([event.paymentId]);

      // The rest of the app keeps Nest's JSON parsing.
      const echo = await fetch(`${url}/api/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"hello":"world"}',
      });
      expect(await echo.json()).toEqual({ parsed: { hello: 'world' } });
    });
  });
}

it('refuses to start without authorize: there is no default', async () => {
  const store = new MemoryDedupeStore();
  const reconciler = createReconciler({
    store,
    logger: quiet,
    getPayment: async () => {
      throw new Error('unused');
    },
    onPaymentPaid: () => {},
  });
  class NoAuthModule {}
  Module({
    imports: [ServiceLedgerPageModule.forRoot({ path: '/ops', store, reconciler } as never)],
  })(NoAuthModule);
  const created = NestFactory.create(NoAuthModule, { logger: false, abortOnError: false });
  await expect(created).rejects.toThrow(WebhookError);
  await expect(created).rejects.toThrow(/authorize\(request\) is required/);
});
