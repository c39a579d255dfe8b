import {
  createWebhookHandler,
  type HandlerOptions,
  type PaymentPaidEvent,
  signWebhook,
  type WebhookRequest,
} from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { boolean, pgTable, text } from 'drizzle-orm/pg-core';
import { type Generated, Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { openPool, uniqueName } from './support/database.js';

/**
 * The README's ORM recipes, run for real: Drizzle ORM on `drizzle(ctx.tx)` and Kysely on a one-client
 * PostgresDialect, each crediting an order inside the delivery's transaction.
 */
const SECRET = 'whsec_postgres_orm_tests_0123456789';
const quiet = { warn: () => {}, error: () => {} };
let pool: pg.Pool;
const ordersTable = uniqueName('orm_orders');
const inbox = uniqueName('orm_inbox');
let store: PostgresStore;

const orders = pgTable(ordersTable, {
  orderNo: text('order_no').primaryKey(),
  paid: boolean('paid').notNull().default(false),
  paymentId: text('payment_id'),
});

function delivery(event: PaymentPaidEvent): WebhookRequest {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  return { method: 'POST', headers, rawBody: body };
}

async function placeOrder(): Promise<PaymentPaidEvent> {
  const event = samplePaymentPaidEvent();
  await pool.query(`insert into ${ordersTable} (order_no) values ($1)`, [event.orderNo]);
  return event;
}

/** The handler of every recipe here: this file's secret and store, and a quiet logger unless one is given. */
function recipeHandler(
  onPaymentPaid: HandlerOptions<PostgresStore>['onPaymentPaid'],
  logger: HandlerOptions<PostgresStore>['logger'] = quiet,
) {
  return createWebhookHandler({ secret: SECRET, store, logger, onPaymentPaid });
}

const paidOrder = async (orderNo: string) =>
  (await pool.query(`select paid, payment_id from ${ordersTable} where order_no = $1`, [orderNo])).rows[0];

beforeAll(async () => {
  pool = await openPool();
  store = new PostgresStore({ pool, tableName: inbox });
  await store.migrate();
  await pool.query(
    `create table ${ordersTable} (order_no text primary key, paid boolean not null default false, payment_id text)`,
  );
});
afterAll(async () => {
  await pool.query(`drop table if exists ${ordersTable}, ${inbox}`);
  await pool.end();
});

describe('Drizzle ORM (node-postgres driver) on ctx.tx', () => {
  it('drizzle(ctx.tx) writes inside the delivery transaction: committed with the inbox row', async () => {
    const handle = recipeHandler(async (event, ctx) => {
      const db = drizzle(ctx.tx);
      await db.update(orders).set({ paid: true, paymentId: event.paymentId }).where(eq(orders.orderNo, event.orderNo));
    });
    const event = await placeOrder();
    expect((await handle(delivery(event))).status).toBe(200);
    expect(await paidOrder(event.orderNo)).toEqual({ paid: true, payment_id: event.paymentId });
  });

  it('a throw after a drizzle write rolls it back', async () => {
    const handle = recipeHandler(async (event, ctx) => {
      await drizzle(ctx.tx).update(orders).set({ paid: true }).where(eq(orders.orderNo, event.orderNo));
      throw new Error('after the write');
    });
    const event = await placeOrder();
    expect((await handle(delivery(event))).status).toBe(500);
    expect(await paidOrder(event.orderNo)).toEqual({ paid: false, payment_id: null });
  });

  it('db.transaction() on drizzle(ctx.tx) is refused (its COMMIT would commit without the inbox row); nothing commits', async () => {
    const errors: string[] = [];
    const handle = recipeHandler(
      async (event, ctx) => {
        await drizzle(ctx.tx).transaction(async (tx) => {
          await tx.update(orders).set({ paid: true }).where(eq(orders.orderNo, event.orderNo));
        });
      },
      {
        warn: () => {},
        // Drizzle wraps the driver's error ("Failed query: begin"); ours is its cause.
        error: (fields) => {
          errors.push(String((fields as { err?: { cause?: Error } }).err?.cause?.message));
        },
      },
    );
    const event = await placeOrder();
    expect((await handle(delivery(event))).status).toBe(500);
    expect(await paidOrder(event.orderNo)).toEqual({ paid: false, payment_id: null });
    expect(errors.join('\n')).toMatch(/already the delivery transaction/);
  });

  it('a savepoint through drizzle is fine (nested work inside the delivery)', async () => {
    const handle = recipeHandler(async (event, ctx) => {
      const db = drizzle(ctx.tx);
      await db.execute(sql`savepoint optional_step`);
      await db.execute(sql`select 1 / 0`).catch(() => db.execute(sql`rollback to savepoint optional_step`));
      await db.update(orders).set({ paid: true, paymentId: event.paymentId }).where(eq(orders.orderNo, event.orderNo));
    });
    const event = await placeOrder();
    expect((await handle(delivery(event))).status).toBe(200);
    expect(await paidOrder(event.orderNo)).toEqual({ paid: true, payment_id: event.paymentId });
  });
});

describe('Kysely on ctx.tx (PostgresDialect over the one delivery client)', () => {
  interface Database {
    [ordersTable]: { order_no: string; paid: Generated<boolean>; payment_id: string | null };
  }

  /** The recipe: a Kysely whose "pool" always lends the delivery's client and never releases it. */
  function kyselyOn(tx: pg.PoolClient): Kysely<Database> {
    return new Kysely<Database>({
      dialect: new PostgresDialect({
        pool: {
          options: {},
          connect: async () => ({ query: tx.query.bind(tx), release: () => {} }) as never,
          end: async () => {},
        },
      }),
    });
  }

  it('writes inside the delivery transaction, and rolls back with it', async () => {
    let attempt = 0;
    const handle = recipeHandler(async (event, ctx) => {
      await kyselyOn(ctx.tx)
        .updateTable(ordersTable)
        .set({ paid: true, payment_id: event.paymentId })
        .where('order_no', '=', event.orderNo)
        .execute();
      if (++attempt === 1) throw new Error('first attempt fails after the write');
    });
    const event = await placeOrder();
    expect((await handle(delivery(event))).status).toBe(500);
    expect(await paidOrder(event.orderNo)).toEqual({ paid: false, payment_id: null });
    expect((await handle(delivery(event))).status).toBe(200);
    expect(await paidOrder(event.orderNo)).toEqual({ paid: true, payment_id: event.paymentId });
  });
});
