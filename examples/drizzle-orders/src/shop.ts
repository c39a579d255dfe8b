import { createServiceClient } from '@service-pay/client';
import { createReconciler, type HandlerOptions, type WebhookLogger } from '@service-pay/core';
import {
  paymentRequestFor,
  type ReconcilePassOptions,
  requestPayment,
  type ShopConfig,
} from '@service-pay/example-shop-kit';
import { DrizzleStore } from '@service-pay/postgres/drizzle';
import { and, asc, eq, getTableName, gt, isNotNull, lte, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { type CreditPayment, creditOrder } from './credit.ts';
import { openDatabase, type ShopDb } from './database.ts';
import { createTables, credits, INBOX_TABLE, orders } from './schema.ts';

const DAY_MS = 24 * 3600 * 1000;

/** An order as the shop's API answers it. */
export interface OrderView {
  id: string;
  amount: string;
  tokenSymbol: string;
  /** REJECTED: the store recorded the payment as rejected (wrong amount or token); a person looks at it. */
  status: 'PENDING' | 'PAID' | 'REJECTED';
  paymentId: string | null;
  /** How many credits were written: exactly once means 1 after payment, never more. */
  credits: number;
}

/**
 * The shop, wired: Drizzle on PGlite or PostgreSQL, `DrizzleStore` in the same database, the payment
 * service's client, the credit for webhooks and reconciliation alike, and the webhook options the Hono
 * adapter takes. `credit` replaces the shop's credit (the tests wrap it to fail after writing); `logger`
 * the console.
 */
export async function openShop(
  config: ShopConfig,
  options: { notifyUrl: string | (() => string); credit?: CreditPayment; logger?: WebhookLogger },
) {
  const database = openDatabase(config.databaseUrl);
  const { db } = database;
  for (const statement of createTables) await db.execute(statement);
  const store = new DrizzleStore({ db, tableName: INBOX_TABLE });
  await store.migrate();
  const client = createServiceClient({
    baseUrl: config.serviceUrl,
    apiKey: config.apiKey,
    apiSecret: config.apiSecret,
  });
  const onPaymentPaid = options.credit ?? creditOrder;
  const logging = options.logger ? { logger: options.logger } : {};
  const webhook = {
    secret: config.webhookSecret,
    store,
    onPaymentPaid,
    ...logging,
  } satisfies HandlerOptions<typeof store>;
  const reconciler = createReconciler({ getPayment: client.getPayment, store, onPaymentPaid, ...logging });

  return {
    webhook,

    /** Records the order, then asks the service for its payment; 400 for bad input, 502 if the service refuses. */
    async placeOrder(input: { amount?: unknown; tokenSymbol?: unknown }) {
      const request = paymentRequestFor(input, options.notifyUrl);
      const id = request.orderNo;
      await db.insert(orders).values({ id, amount: request.amount, tokenSymbol: request.tokenSymbol });
      const paymentId = await requestPayment(client, request);
      await db.update(orders).set({ paymentId }).where(eq(orders.id, id));
      return { order: { id, amount: request.amount, tokenSymbol: request.tokenSymbol }, paymentId };
    },

    async getOrder(id: string): Promise<OrderView | undefined> {
      return (await selectOrders(db, eq(orders.id, id)))[0];
    },

    listOrders: (): Promise<OrderView[]> => selectOrders(db),

    /**
     * Reads back the payments of orders pending for `olderThanMs` (default a minute, and not older than
     * `notOlderThanMs`, default a day: never paid, most likely) and credits, once,
     * those the service says are PAID: the same store and credit as the webhook, so a webhook that lands
     * meanwhile is a duplicate. What to run every minute, for webhooks that never arrived.
     */
    async reconcilePending(pass: ReconcilePassOptions = {}) {
      const pending = await db
        .select({ paymentId: orders.paymentId })
        .from(orders)
        .where(
          and(
            isNotNull(orders.paymentId),
            eq(orders.status, 'PENDING'),
            lte(orders.createdAt, sql`now() - ${pass.olderThanMs ?? 60_000} * interval '1 millisecond'`),
            gt(orders.createdAt, sql`now() - ${pass.notOlderThanMs ?? DAY_MS} * interval '1 millisecond'`),
          ),
        )
        .orderBy(asc(orders.createdAt))
        .limit(pass.limit ?? 500);
      // One at a time on PGlite (one connection); PostgreSQL takes several.
      const concurrency = pass.concurrency ?? (database.kind === 'pglite' ? 1 : 4);
      return reconciler.reconcileMany(
        pending.map((row) => row.paymentId as string),
        { concurrency },
      );
    },

    close: () => database.close(),
  };
}

export type DrizzleShop = Awaited<ReturnType<typeof openShop>>;

/** Orders with their credit count; an order whose payment the store recorded as rejected reads REJECTED. */
async function selectOrders(db: ShopDb, where?: SQL): Promise<OrderView[]> {
  const inbox = sql.identifier(INBOX_TABLE);
  // Qualified by hand: in a one-table select Drizzle writes its columns bare, and inside these subqueries
  // a bare "payment_id" would name the subquery's own column.
  const orderId = qualified(orders.id);
  const paymentId = qualified(orders.paymentId);
  const status = qualified(orders.status);
  return await db
    .select({
      id: orders.id,
      amount: orders.amount,
      tokenSymbol: orders.tokenSymbol,
      status: sql<OrderView['status']>`case when ${status} = 'PENDING' and exists (select 1 from ${inbox} i
        where i.payment_id = ${paymentId} and i.outcome = 'rejected') then 'REJECTED' else ${status} end`,
      paymentId: orders.paymentId,
      credits: sql`(select count(*) from ${credits} c where c.order_id = ${orderId})`.mapWith(Number),
    })
    .from(orders)
    .where(where)
    .orderBy(asc(orders.createdAt), asc(orders.id));
}

/** `"table"."column"`, whatever the query around it. */
function qualified(column: AnyPgColumn): SQL {
  return sql`${sql.identifier(getTableName(column.table))}.${sql.identifier(column.name)}`;
}
