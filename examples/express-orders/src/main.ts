import type { AddressInfo } from 'node:net';
import { bootShop, readConfig } from '@service-pay/example-shop-kit';
import { createApp } from './app.js';

// `pnpm start` with SERVICE_API_URL, SERVICE_API_KEY, SERVICE_API_SECRET, SERVICE_WEBHOOK_SECRET set
// (the simulator prints them), optionally PORT, PUBLIC_URL, REDIS_URL, DATABASE_URL, SHOP_RECONCILE_EVERY_MS,
// SHOP_OPS_TOKEN (opens the operator page at /ops/payments to `Authorization: Bearer <token>`).
const config = readConfig();
let baseUrl = config.publicUrl;
const booted = await bootShop(config, { notifyUrl: () => `${baseUrl}/webhooks/service` });
if (config.reconcileEveryMs > 0) {
  // Credits the orders whose webhooks never arrived: pending a minute after creation, read back every minute.
  booted.startReconcileLoop({ everyMs: config.reconcileEveryMs });
}
const server = createApp(booted, { opsToken: process.env.SHOP_OPS_TOKEN }).listen(
  config.port,
  process.env.HOST ?? '127.0.0.1',
  () => {
    const { port } = server.address() as AddressInfo;
    baseUrl ??= `http://127.0.0.1:${port}`;
    // One JSON line, so scripts (the chaos suite) can read the address.
    console.log(
      JSON.stringify({
        listening: `http://127.0.0.1:${port}`,
        notifyUrl: `${baseUrl}/webhooks/service`,
        database: config.databaseUrl ? 'postgres' : 'pglite',
        store: config.redisUrl ? 'redis' : 'postgres',
      }),
    );
  },
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(() => void booted.close().then(() => process.exit(0)));
  });
}
