import { bootShop, readConfig } from '@service-pay/example-shop-kit';
import { buildApp } from './app.js';

// `pnpm start` with SERVICE_API_URL, SERVICE_API_KEY, SERVICE_API_SECRET, SERVICE_WEBHOOK_SECRET set
// (the simulator prints them), optionally PORT, PUBLIC_URL, REDIS_URL, DATABASE_URL, SHOP_RECONCILE_EVERY_MS.
const config = readConfig();
let baseUrl = config.publicUrl;
const booted = await bootShop(config, { notifyUrl: () => `${baseUrl}/webhooks/service` });
// Credits the orders whose webhooks never arrived: pending a minute after creation, read back every minute.
if (config.reconcileEveryMs > 0) booted.startReconcileLoop({ everyMs: config.reconcileEveryMs });
const app = await buildApp(booted, { logger: true });
const address = await app.listen({ port: config.port, host: process.env.HOST ?? '127.0.0.1' });
baseUrl ??= address;
console.log(
  JSON.stringify({
    listening: address,
    notifyUrl: `${baseUrl}/webhooks/service`,
    database: config.databaseUrl ? 'postgres' : 'pglite',
    store: config.redisUrl ? 'redis' : 'postgres',
  }),
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void app
      .close()
      .then(() => booted.close())
      .then(() => process.exit(0));
  });
}
