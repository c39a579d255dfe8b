import { createServiceClient } from '@service-pay/client';
import type { HandlerOptions, WebhookLogger } from '@service-pay/core';
import type { ShopConfig } from './config.js';
import { creditOnPaymentPaid } from './credit-on-payment-paid.js';
import { openDatabase } from './database.js';
import { createDedupeStore } from './dedupe-store.js';
import { OrderBook } from './orders.js';
import { createShop } from './shop.js';

/**
 * Wires one shop instance: database, order book, payment client, dedupe store and the webhook options
 * every framework's adapter takes. Frameworks only add routes.
 */
export async function bootShop(
  config: ShopConfig,
  options: { notifyUrl: string | (() => string); logger?: WebhookLogger },
) {
  const db = await openDatabase(config.databaseUrl);
  const book = await OrderBook.open(db, config.tablePrefix);
  const client = createServiceClient({
    baseUrl: config.serviceUrl,
    apiKey: config.apiKey,
    apiSecret: config.apiSecret,
  });
  const shop = createShop({ book, client, notifyUrl: options.notifyUrl });
  const { store, close: closeStore } = createDedupeStore(config.redisUrl, `${config.tablePrefix || 'shop'}:`);
  const credit = creditOnPaymentPaid(book, { failureRate: config.failureRate });
  const webhook = {
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
      await closeStore();
      await db.close();
    },
  };
}

export type BootedShop = Awaited<ReturnType<typeof bootShop>>;
