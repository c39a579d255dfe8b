import Fastify from 'fastify';
import {
  type AdapterBenchCheck,
  BENCH_SECRET,
  type BenchApp,
  compareRoutes,
  handRolledVerify,
  type LoadOptions,
} from '../../express/bench/load.js';
import { serviceWebhook } from '../src/index.js';

/**
 * The `serviceWebhook` plugin on Fastify 5 against a hand-rolled route in the same app (a Buffer content-type
 * parser + createHmac + timingSafeEqual + JSON.parse), both under the same loopback load of fresh signed
 * deliveries (the load helper is shared with the Express benchmark). The plugin uses the default in-memory
 * dedupe store, so each request is a first delivery claimed and completed.
 */
export async function run(options: LoadOptions = {}): Promise<AdapterBenchCheck[]> {
  return [await compareRoutes('Fastify 5 @service-pay/fastify', startApp, 0.9, options)];
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
  return { adapter: `${base}/adapter`, baseline: `${base}/baseline`, close: () => app.close() };
}
