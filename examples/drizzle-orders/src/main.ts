import { serve } from '@hono/node-server';
import { readConfig, startReconcileLoop } from '@service-pay/example-shop-kit';
import { buildApp } from './app.ts';
import { openShop } from './shop.ts';

// `pnpm start` with SERVICE_API_URL, SERVICE_API_KEY, SERVICE_API_SECRET, SERVICE_WEBHOOK_SECRET set (the
// simulator prints them), optionally PORT, PUBLIC_URL, DATABASE_URL, SHOP_RECONCILE_EVERY_MS.
const config = readConfig();
const publicUrl = config.publicUrl ?? `http://127.0.0.1:${config.port}`;
const shop = await openShop(config, { notifyUrl: `${publicUrl}/webhooks/service` });
const server = serve({ fetch: buildApp(shop).fetch, port: config.port, hostname: process.env.HOST ?? '127.0.0.1' });
console.log(
  JSON.stringify({
    listening: publicUrl,
    notifyUrl: `${publicUrl}/webhooks/service`,
    database: config.databaseUrl ? 'postgres' : 'pglite',
  }),
);

// Credits the orders whose webhooks never arrived: pending a minute after creation, read back every minute.
const loop =
  config.reconcileEveryMs > 0
    ? startReconcileLoop(shop.reconcilePending, { everyMs: config.reconcileEveryMs })
    : undefined;

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(
      () =>
        void Promise.resolve(loop?.stop())
          .then(shop.close)
          .then(() => process.exit(0)),
    );
  });
}
