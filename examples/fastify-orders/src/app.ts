import { type BootedShop, ShopError } from '@service-pay/example-shop-kit';
import { serviceWebhook } from '@service-pay/fastify';
import Fastify, { type FastifyInstance } from 'fastify';

/**
 * The Fastify shop: the webhook plugin, then the shop's JSON API. The plugin keeps its raw-body parser to
 * its own route, so these routes parse JSON as usual.
 */
export async function buildApp(booted: BootedShop, options: { logger?: boolean } = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: options.logger ?? false });
  await app.register(serviceWebhook, { path: '/webhooks/service', ...booted.webhook });

  app.post('/orders', async (request, reply) =>
    reply.code(201).send(await booted.shop.placeOrder((request.body as object) ?? {})),
  );
  app.get('/orders', async () => booted.shop.book.list());
  app.get<{ Params: { id: string } }>('/orders/:id', async (request) => {
    const order = await booted.shop.book.get(request.params.id);
    if (order === undefined) throw new ShopError(404, 'ORDER_NOT_FOUND', `No order ${request.params.id}.`);
    return order;
  });
  app.get('/stats', async () => booted.tally);

  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof ShopError) return reply.code(error.status).send({ error: error.code, message: error.message });
    // Fastify's own client errors (a malformed JSON body, say) keep their 4xx status.
    const { statusCode, code, message } = error as { statusCode?: number; code?: string; message?: string };
    if (statusCode !== undefined && statusCode < 500) {
      return reply.code(statusCode).send({ error: code ?? 'BAD_REQUEST', message });
    }
    return reply.code(500).send({ error: 'INTERNAL', message: 'Internal error.' });
  });
  return app;
}
