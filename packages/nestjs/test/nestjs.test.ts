import type { Server } from 'node:http';
import { signWebhook } from '@service-pay/core';
import {
  ADAPTER_SCENARIO_SECRET,
  type AdapterUnderTest,
  adapterScenarios,
  fetchSender,
  type ScenarioRequest,
  samplePaymentPaidEvent,
  socketScenarios,
} from '@service-pay/core/testing';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Platform,
  type RunningApp,
  SLOW_ROUTE_BODY_TIMEOUT_MS,
  slowRouteLines,
  startApp,
} from './support/apps.js';

/** supertest for text bodies; fetch for streamed ones (supertest cannot stream a request body). */
function sender(server: Server, url: string): AdapterUnderTest['send'] {
  const streamed = fetchSender(url, '/hooks/service', '/hooks/parsed');
  return async (request: ScenarioRequest) => {
    if (request.body !== undefined && typeof request.body !== 'string') return streamed(request);
    const path = request.parsedFirst ? '/hooks/parsed' : '/hooks/service';
    let test = request.method === 'GET' ? supertest(server).get(path) : supertest(server).post(path);
    test = test.set(request.headers);
    const res = await (request.body === undefined ? test : test.send(request.body));
    return { status: res.status, headers: res.headers as Record<string, string>, body: res.text };
  };
}

const FIXES: Record<Platform, string> = {
  express: 'mount it after NestFactory.create()',
  fastify: 'let the webhook route receive it untouched',
};

for (const platform of ['express', 'fastify'] as const) {
  describe(`NestJS on @nestjs/platform-${platform}, default body parsing and a global JSON parser`, () => {
    let running: RunningApp;
    beforeAll(async () => {
      running = await startApp(platform);
    });
    afterAll(async () => {
      running.server.closeAllConnections();
      await running.app.close();
    });

    describe('ServiceWebhookModule.forRootAsync, onPaymentPaid calling an injected service', () => {
      for (const c of adapterScenarios({
        send: (request) => sender(running.server, running.url)(request),
        credits: (paymentId) => running.orders.recorder.credits(paymentId),
        getReachesAdapter: true,
        parsedBodyFix: FIXES[platform],
      })) {
        it(c.name, c.run);
      }
    });

    it('leaves JSON parsing of the other routes alone', async () => {
      const res = await supertest(running.server).post('/api/echo').send({ hello: 'world' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ parsed: { hello: 'world' } });
    });

    it('300 slow clients that stop mid-body: each gets 408 BODY_TIMEOUT and its connection closed', async () => {
      const report = process.env.SOCKET_REPORT
        ? (name: string, figures: Record<string, number>) => console.log(`nestjs ${platform} ${name}`, figures)
        : undefined;
      const [slow] = socketScenarios({
        server: running.server,
        path: '/hooks/slow',
        logs: () => slowRouteLines,
        bodyTimeoutMs: SLOW_ROUTE_BODY_TIMEOUT_MS,
        ...(report ? { report } : {}),
      });
      await slow?.run();
    }, 60_000);

    it('credits a delivery sent as the service sends it', async () => {
      const event = samplePaymentPaidEvent();
      const { body, headers } = signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET });
      const res = await fetch(`${running.url}/hooks/service`, { method: 'POST', headers, body });
      expect([res.status, await res.text()]).toEqual([200, '{"received":true}']);
      expect(running.orders.recorder.credits(event.paymentId)).toBe(1);
    });
  });
}
