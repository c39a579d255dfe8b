import { type BootedShop, ShopError } from '@service-pay/example-shop-kit';
import { serviceWebhook } from '@service-pay/express';
import express, { type ErrorRequestHandler } from 'express';

/**
 * The Express shop: the webhook route, then the shop's JSON API.
 *
 * The webhook is mounted before `express.json()`: it needs the raw bytes the signature was made over.
 */
export function createApp(booted: BootedShop): express.Express {
  const app = express();
  app.post('/webhooks/service', serviceWebhook(booted.webhook));

  app.use(express.json());
  app.post('/orders', async (req, res) => {
    res.status(201).json(await booted.shop.placeOrder(req.body ?? {}));
  });
  app.get('/orders', async (_req, res) => {
    res.json(await booted.shop.book.list());
  });
  app.get('/orders/:id', async (req, res) => {
    const order = await booted.shop.book.get(req.params.id);
    if (order === undefined) throw new ShopError(404, 'ORDER_NOT_FOUND', `No order ${req.params.id}.`);
    res.json(order);
  });
  app.get('/stats', (_req, res) => {
    res.json(booted.tally);
  });

  const onError: ErrorRequestHandler = (error, _req, res, _next) => {
    const status = error instanceof ShopError ? error.status : 500;
    const code = error instanceof ShopError ? error.code : 'INTERNAL';
    res.status(status).json({ error: code, message: error instanceof ShopError ? error.message : 'Internal error.' });
  };
  app.use(onError);
  return app;
}
