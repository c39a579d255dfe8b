import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signWebhook } from '@service-pay/core';
import {
  ADAPTER_SCENARIO_SECRET,
  type AdapterUnderTest,
  adapterScenarios,
  type CreditRecorder,
  createCreditRecorder,
  fetchSender,
  type ScenarioRequest,
  samplePaymentPaidEvent,
} from '@service-pay/core/testing';
import express5 from 'express';
import express4 from 'express4';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceWebhook } from '../src/index.js';

type Express = typeof express5;

/** One app per Express major, with the middleware mounted every way a merchant may mount it. */
function buildApp(express: Express, recorder: CreditRecorder) {
  const options = { secret: ADAPTER_SCENARIO_SECRET, onPaymentPaid: recorder.onPaymentPaid, logger: silent };
  const app = express();
  app.use('/hooks/use', serviceWebhook(options));
  app.post('/hooks/post', serviceWebhook(options));
  app.post('/hooks/raw', express.raw({ type: 'application/json' }), serviceWebhook(options));
  app.post(
    '/hooks/verify-raw',
    express.json({ verify: (req, _res, buf) => Object.assign(req, { rawBody: buf }) }),
    serviceWebhook(options),
  );
  // The mistake the RAW_BODY_UNAVAILABLE answer is for: a JSON parser in front of the webhook.
  app.use('/hooks/use-parsed', express.json(), serviceWebhook(options));
  app.post('/hooks/post-parsed', express.json(), serviceWebhook(options));
  // The rest of the app keeps parsing JSON.
  app.post('/api/echo', express.json(), (req, res) => {
    res.json({ parsed: req.body });
  });
  return app;
}

const silent = { warn: () => {}, error: () => {} };

async function listen(app: ReturnType<Express>): Promise<{ server: Server; url: string }> {
  const server = createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** supertest for text bodies; fetch for streamed ones (supertest cannot stream a request body). */
function sender(server: Server, url: string, path: string, parsedPath: string): AdapterUnderTest['send'] {
  const streamed = fetchSender(url, path, parsedPath);
  return async (request: ScenarioRequest) => {
    if (request.body !== undefined && typeof request.body !== 'string') return streamed(request);
    const target = request.parsedFirst ? parsedPath : path;
    let test = request.method === 'GET' ? supertest(server).get(target) : supertest(server).post(target);
    test = test.set(request.headers);
    const res = await (request.body === undefined ? test : test.send(request.body));
    return { status: res.status, headers: res.headers as Record<string, string>, body: res.text };
  };
}

for (const [major, express] of [
  ['Express 4', express4],
  ['Express 5', express5],
] as const) {
  describe(major, () => {
    const recorder = createCreditRecorder();
    let server: Server;
    let url: string;

    beforeAll(async () => {
      ({ server, url } = await listen(buildApp(express, recorder)));
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    const target = (path: string, parsedPath: string, getReachesAdapter: boolean): AdapterUnderTest => ({
      send: (request) => sender(server, url, path, parsedPath)(request),
      credits: recorder.credits,
      getReachesAdapter,
      parsedBodyFix: 'Register the webhook route before app.use(express.json())',
    });

    describe('app.use(path, serviceWebhook(...))', () => {
      for (const c of adapterScenarios(target('/hooks/use', '/hooks/use-parsed', true))) it(c.name, c.run);
    });

    describe('app.post(path, serviceWebhook(...))', () => {
      for (const c of adapterScenarios(target('/hooks/post', '/hooks/post-parsed', false))) it(c.name, c.run);
    });

    it('takes the Buffer left by express.raw()', async () => {
      const event = samplePaymentPaidEvent();
      const { body, headers } = signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET });
      const res = await supertest(server).post('/hooks/raw').set(headers).send(body);
      expect([res.status, res.text]).toEqual([200, '{"received":true}']);
      expect(recorder.credits(event.paymentId)).toBe(1);
    });

    it('takes req.rawBody kept by a verify hook, even with req.body parsed', async () => {
      const event = samplePaymentPaidEvent();
      const { body, headers } = signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET });
      const res = await supertest(server).post('/hooks/verify-raw').set(headers).send(body);
      expect([res.status, res.text]).toEqual([200, '{"received":true}']);
      expect(recorder.credits(event.paymentId)).toBe(1);
    });

    it('refuses a signature header sent twice instead of reading the comma-joined value', async () => {
      const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
      const signature = headers['x-service-signature'] as string;
      const res = await fetch(`${url}/hooks/use`, {
        method: 'POST',
        body,
        headers: [...Object.entries(headers), ['x-service-signature', signature]],
      });
      expect(res.status).toBe(401);
      expect((await res.json()).error).toBe('MALFORMED_SIGNATURE');
    });

    it('keeps the connection usable after a 413 on a streamed body', async () => {
      const { headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
      const big = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 8; i++) controller.enqueue(new Uint8Array(32 * 1024).fill(0x20));
          controller.close();
        },
      });
      const tooLarge = await fetch(`${url}/hooks/use`, {
        method: 'POST',
        headers,
        body: big,
        duplex: 'half',
      } as RequestInit);
      expect(tooLarge.status).toBe(413);
      await tooLarge.text();
      const event = samplePaymentPaidEvent();
      const signed = signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET });
      const ok = await fetch(`${url}/hooks/use`, { method: 'POST', headers: signed.headers, body: signed.body });
      expect(ok.status).toBe(200);
    });

    it('leaves JSON parsing of the other routes alone', async () => {
      const res = await supertest(server).post('/api/echo').send({ hello: 'world' });
      expect(res.body).toEqual({ parsed: { hello: 'world' } });
    });
  });
}
