import {
  type AdapterBenchCheck,
  BENCH_SECRET,
  type BenchApp,
  compareRoutes,
  handRolledVerify,
  type LoadOptions,
} from '@service-pay/bench-kit/adapter-load';
import { createWebhookHandler } from '@service-pay/core';
import { serviceWebhook } from '@service-pay/fastify';
import Fastify from 'fastify';

const ADAPTER = 'serviceWebhook plugin';
const CORE = 'Buffer parser + createWebhookHandler()';
const BASELINE = 'Buffer parser + hand-rolled verify';

/**
 * The `serviceWebhook` plugin on Fastify 5 against a hand-rolled route in the same app (a Buffer content-type
 * parser + createHmac + timingSafeEqual + JSON.parse), all under the same loopback load of fresh signed
 * deliveries (the load helper is shared with the Express benchmark), so each is a first delivery claimed and
 * completed in the default in-memory store. A third route calls the core by hand on the parser's Buffer:
 * adapter / that route is what the translation itself costs.
 */
export async function run(options: LoadOptions = {}): Promise<AdapterBenchCheck[]> {
  return compareRoutes(
    'Fastify 5 @service-pay/fastify',
    startApp,
    [
      { of: ADAPTER, over: BASELINE, atLeast: 0.9 },
      { of: ADAPTER, over: CORE, atLeast: 0.9 },
    ],
    options,
  );
}

async function startApp(): Promise<BenchApp> {
  const app = Fastify();
  await app.register(serviceWebhook, { path: '/adapter', secret: BENCH_SECRET, onPaymentPaid: () => {} });
  await app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: 64 * 1024 },
      (_request, body, done) => done(null, body),
    );
    const handle = createWebhookHandler({ secret: BENCH_SECRET, onPaymentPaid: () => {} });
    scope.post('/core', async (request, reply) => {
      const answer = await handle({
        method: request.method,
        headers: request.headers,
        rawBody: request.body as Buffer,
      });
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    });
    scope.post('/baseline', async (request, reply) => {
      try {
        handRolledVerify(request.body as Buffer, request.headers['x-service-signature']);
      } catch {
        return reply.code(401).send();
      }
      return reply.header('content-type', 'application/json; charset=utf-8').send('{"received":true}');
    });
  });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    urls: { [ADAPTER]: `${base}/adapter`, [CORE]: `${base}/core`, [BASELINE]: `${base}/baseline` },
    close: () => app.close(),
  };
}
