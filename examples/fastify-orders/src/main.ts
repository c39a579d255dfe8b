import { bootShop, readConfig } from '@service-pay/example-shop-kit';
import { buildApp } from './app.js';

// `pnpm start` with SERVICE_API_URL, SERVICE_API_KEY, SERVICE_API_SECRET, SERVICE_WEBHOOK_SECRET set
// (the simulator prints them), optionally PORT, PUBLIC_URL, REDIS_URL, DATABASE_URL.
const config = readConfig();
let baseUrl = config.publicUrl;
const booted = await bootShop(config, { notifyUrl: () => `${baseUrl}/webhooks/service` });
const app = await buildApp(booted, { logger: true });
const address = await app.listen({ port: config.port, host: process.env.HOST ?? '127.0.0.1' });
baseUrl ??= address;
console.log(
  JSON.stringify({
    listening: address,
    notifyUrl: `${baseUrl}/webhooks/service`,
    store: config.redisUrl ? 'redis' : 'memory',
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
