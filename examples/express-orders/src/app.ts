import { createHash, timingSafeEqual } from 'node:crypto';
import { type BootedShop, ShopError } from '@service-pay/example-shop-kit';
import { ledgerPage, serviceWebhook } from '@service-pay/express';
import express, { type ErrorRequestHandler } from 'express';

/** What the shop's app takes besides the booted shop. */
export interface AppOptions {
  /**
   * The bearer token that opens the operator page at `/ops/payments` (`SHOP_OPS_TOKEN`). Unset: the page
   * answers 403 to everyone. An example of `authorize`: use your app's own sessions and roles.
   */
  opsToken?: string | undefined;
}

/**
 * The Express shop: the webhook route, the operator page of failing payments, then the shop's JSON API.
 *
 * The webhook is mounted before `express.json()`: it needs the raw bytes the signature was made over. The
 * operator page lists the payments whose handler failed and reconciles them through the shop's reconciler,
 * behind `authorize`: here a bearer token, compared in constant time.
 */
export function createApp(booted: BootedShop, options: AppOptions = {}): express.Express {
  const app = express();
  app.post('/webhooks/service', serviceWebhook(booted.webhook));
  const { opsToken } = options;
  app.use(
    '/ops/payments',
    ledgerPage({
      store: booted.webhook.store,
      reconciler: booted.reconciler,
      authorize: (req) => opsToken !== undefined && opsToken !== '' && bearerIs(req, opsToken),
    }),
  );

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

/** True when the request carries `Authorization: Bearer <token>`; digests compared so timing says nothing. */
function bearerIs(req: Request, token: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(req.headers.get('authorization') ?? ''), digest(`Bearer ${token}`));
}
