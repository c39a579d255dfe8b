import { createServiceClient } from '@service-pay/client';
import type { HandlerOptions, WebhookLogger } from '@service-pay/core';
import type { ShopConfig } from './config.ts';
import { creditOnPaymentPaid } from './credit-on-payment-paid.ts';
import { openDatabase } from './database.ts';
import { createDedupeStore, type DedupeStoreHandle } from './dedupe-store.ts';
import { OrderBook } from './orders.ts';
import { createShop } from './shop.ts';
import { shopTelemetry } from './telemetry.ts';

/**
 * The synchronous part of `bootShop`: the shop's dedupe store (Redis when `REDIS_URL` is set, else in
 * memory). For frameworks that need the webhook options before the shop has booted, such as Next.js's
 * `export const POST = createRouteHandler(options)`; hand the result to `bootShop` as `dedupe`.
 */
export function openShopDedupeStore(config: ShopConfig): DedupeStoreHandle {
  return createDedupeStore(config.redisUrl, `${config.tablePrefix || 'shop'}:`);
}

/**
 * Wires one shop instance: database, order book, payment client, dedupe store and the webhook options
 * every framework's adapter takes. Frameworks only add routes.
 */
export async function bootShop(
  config: ShopConfig,
  options: {
    notifyUrl: string | (() => string);
    logger?: WebhookLogger;
    /** A store made beforehand with `openShopDedupeStore`; the shop's `close` closes it too. */
    dedupe?: DedupeStoreHandle;
  },
) {
  const db = await openDatabase(config.databaseUrl);
  const book = await OrderBook.open(db, config.tablePrefix);
  const client = createServiceClient({
    baseUrl: config.serviceUrl,
    apiKey: config.apiKey,
    apiSecret: config.apiSecret,
  });
  const shop = createShop({ book, client, notifyUrl: options.notifyUrl });
  const { store, close: closeStore } = options.dedupe ?? openShopDedupeStore(config);
  const credit = creditOnPaymentPaid(book, { failureRate: config.failureRate });
  const telemetry = shopTelemetry();
  const webhook = {
    ...telemetry.options,
    secret: config.webhookSecret,
    store,
    onPaymentPaid: credit.onPaymentPaid,
    ...(options.logger ? { logger: options.logger } : {}),
  } satisfies HandlerOptions;
  return {
    shop,
    webhook,
    tally: credit.tally,
    close: async () => {
      await telemetry.close();
      await closeStore();
      await db.close();
    },
  };
}

export type BootedShop = Awaited<ReturnType<typeof bootShop>>;
