import { ShopError } from '@service-pay/example-shop-kit';
import { serviceWebhook } from '@service-pay/hono';
import { Hono } from 'hono';
import type { DrizzleShop } from './shop.ts';

/** The Hono shop: the webhook, then the shop's JSON API (the same routes as the other example shops). */
export function buildApp(shop: DrizzleShop): Hono {
  const app = new Hono();
  app.post('/webhooks/service', serviceWebhook(shop.webhook));

  app.post('/orders', async (c) => {
    // A body that is not JSON is an order with nothing in it: placeOrder answers it with a coded 400.
    const body = (await c.req.json().catch(() => ({}))) as object | null;
    return c.json(await shop.placeOrder(body ?? {}), 201);
  });
  app.get('/orders', async (c) => c.json(await shop.listOrders()));
  app.get('/orders/:id', async (c) => {
    const order = await shop.getOrder(c.req.param('id'));
    if (order === undefined) throw new ShopError(404, 'ORDER_NOT_FOUND', `No order ${c.req.param('id')}.`);
    return c.json(order);
  });

  app.onError((error, c) => {
    if (error instanceof ShopError) {
      return c.json({ error: error.code, message: error.message }, error.status as 400 | 404 | 502);
    }
    console.error('[shop]', error);
    return c.json({ error: 'INTERNAL', message: 'Internal error.' }, 500);
  });
  return app;
}
