import { createServiceClient } from '@service-pay/client';
import { createReconciler, type HandlerOptions, type WebhookLogger } from '@service-pay/core';
import type { ShopConfig } from './config.ts';
import { creditOnPaymentPaid } from './credit-on-payment-paid.ts';
import { type Database, openDatabase } from './database.ts';
import { OrderBook } from './orders.ts';
import { openPaymentStore, type PaymentStoreHandle, type ShopStore } from './payment-store.ts';
import { type ReconcileLoop, type ReconcileLoopOptions, startReconcileLoop } from './reconcile-loop.ts';
import { reconcilePendingOrders } from './reconcile-pending.ts';
import { createShop } from './shop.ts';
import { shopTelemetry } from './telemetry.ts';

/** The shop's database and the payment store made on it (or on Redis), before anything is booted. */
export interface ShopResources {
  database: Database;
  payments: PaymentStoreHandle;
}

/**
 * The synchronous part of `bootShop`: the database and the payment store (`PostgresStore` in that database,
 * or Redis when `REDIS_URL` is set). For frameworks that need the webhook options before the shop has
 * booted, such as Next.js's `export const POST = createRouteHandler(options)`; hand the result to
 * `bootShop` as `resources`.
 */
export function openShopResources(config: ShopConfig): ShopResources {
  const database = openDatabase(config.databaseUrl);
  return { database, payments: openPaymentStore(database, { redisUrl: config.redisUrl, prefix: config.tablePrefix }) };
}

/**
 * Wires one shop instance: database, payment store, order book, payment client, the credit, the webhook
 * options every framework's adapter takes, and the reconciliation pass (and loop) that credits the
 * payments whose webhooks never arrived, through the same store and the same credit. Frameworks only add
 * routes.
 */
export async function bootShop(
  config: ShopConfig,
  options: {
    notifyUrl: string | (() => string);
    logger?: WebhookLogger;
    /** Made beforehand with `openShopResources`; the shop's `close` closes them too. */
    resources?: ShopResources;
  },
) {
  const { database, payments } = options.resources ?? openShopResources(config);
  await payments.ready();
  const book = await OrderBook.open(database, { prefix: config.tablePrefix, inboxTable: payments.inboxTable });
  const client = createServiceClient({
    baseUrl: config.serviceUrl,
    apiKey: config.apiKey,
    apiSecret: config.apiSecret,
  });
  const shop = createShop({ book, client, notifyUrl: options.notifyUrl });
  const credit = creditOnPaymentPaid(book, database, { failureRate: config.failureRate });
  const telemetry = shopTelemetry();
  const logging = options.logger ? { logger: options.logger } : {};
  const webhook = {
    ...telemetry.options,
    secret: config.webhookSecret,
    store: payments.store,
    onPaymentPaid: credit.onPaymentPaid,
    ...logging,
  } satisfies HandlerOptions<ShopStore>;
  const reconciler = createReconciler<ShopStore>({
    ...telemetry.options,
    getPayment: client.getPayment,
    store: payments.store,
    onPaymentPaid: credit.onPaymentPaid,
    ...logging,
  });
  const reconcilePending = reconcilePendingOrders(book, reconciler, database.kind === 'pglite' ? 1 : 4);
  let loop: ReconcileLoop | undefined;

  return {
    shop,
    webhook,
    tally: credit.tally,
    /** `lease` (Redis) or `transactional` (`PostgresStore`). */
    storeKind: payments.kind,
    reconciler,
    /** One pass over the orders still pending: `pnpm reconcile`, the loop, and the demo run it. */
    reconcilePending,
    /** Starts the reconcile loop (every minute by default); `close` stops it. */
    startReconcileLoop(loopOptions: ReconcileLoopOptions = {}): ReconcileLoop {
      loop ??= startReconcileLoop(reconcilePending, loopOptions);
      return loop;
    },
    close: async () => {
      await loop?.stop();
      await telemetry.close();
      await payments.close();
      await database.close();
    },
  };
}

export type BootedShop = Awaited<ReturnType<typeof bootShop>>;
