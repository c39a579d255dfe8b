import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AdapterBenchCheck,
  BENCH_SECRET,
  type BenchApp,
  compareRoutes,
  handRolledVerify,
  type LoadOptions,
} from '@service-pay/bench-kit/adapter-load';
import { createWebhookHandler } from '@service-pay/core';
import { serviceWebhook } from '@service-pay/express';
import express from 'express';

const ADAPTER = 'serviceWebhook()';
const CORE = 'express.raw() + createWebhookHandler()';
const BASELINE = 'express.raw() + hand-rolled verify';

/**
 * `serviceWebhook()` on Express 5 against a hand-rolled route in the same app (express.raw + createHmac +
 * timingSafeEqual + JSON.parse), all under the same loopback load of fresh signed deliveries, so each is a
 * first delivery claimed and completed in the default in-memory store. A third route calls the core by hand
 * on express.raw()'s Buffer: adapter / that route is what the translation itself costs.
 */
export async function run(options: LoadOptions = {}): Promise<AdapterBenchCheck[]> {
  return compareRoutes(
    'Express 5 @service-pay/express',
    startApp,
    [
      { of: ADAPTER, over: BASELINE, atLeast: 0.9 },
      { of: ADAPTER, over: CORE, atLeast: 0.9 },
    ],
    options,
  );
}

async function startApp(): Promise<BenchApp> {
  const app = express();
  const raw = express.raw({ type: 'application/json', limit: 64 * 1024 });
  app.post('/adapter', serviceWebhook({ secret: BENCH_SECRET, onPaymentPaid: () => {} }));
  const handle = createWebhookHandler({ secret: BENCH_SECRET, onPaymentPaid: () => {} });
  app.post('/core', raw, async (req, res) => {
    const answer = await handle({ method: req.method, headers: req.headers, rawBody: req.body as Buffer });
    res.writeHead(answer.status, answer.headers).end(answer.body);
  });
  app.post('/baseline', raw, (req, res) => {
    try {
      handRolledVerify(req.body as Buffer, req.headers['x-service-signature']);
    } catch {
      res.writeHead(401).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('{"received":true}');
  });
  const server = createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    urls: { [ADAPTER]: `${base}/adapter`, [CORE]: `${base}/core`, [BASELINE]: `${base}/baseline` },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
