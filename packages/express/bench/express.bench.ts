import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { serviceWebhook } from '../src/index.js';
import {
  type AdapterBenchCheck,
  BENCH_SECRET,
  type BenchApp,
  compareRoutes,
  handRolledVerify,
  type LoadOptions,
} from './load.js';

/**
 * `serviceWebhook()` on Express 5 against a hand-rolled route in the same app (express.raw + createHmac +
 * timingSafeEqual + JSON.parse), both under the same loopback load of fresh signed deliveries. The adapter
 * uses the default in-memory dedupe store, so each request is a first delivery claimed and completed.
 */
export async function run(options: LoadOptions = {}): Promise<AdapterBenchCheck[]> {
  return [await compareRoutes('Express 5 @service-pay/express', startApp, 0.9, options)];
}

async function startApp(): Promise<BenchApp> {
  const app = express();
  app.post('/adapter', serviceWebhook({ secret: BENCH_SECRET, onPaymentPaid: () => {} }));
  app.post('/baseline', express.raw({ type: 'application/json', limit: 64 * 1024 }), (req, res) => {
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
    adapter: `${base}/adapter`,
    baseline: `${base}/baseline`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
