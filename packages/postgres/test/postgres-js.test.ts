import { createWebhookHandler, type PaymentPaidEvent, signWebhook, type WebhookRequest } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import postgres, { type Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresJsStore } from '../src/postgres-js.js';
import { DATABASE_URL, uniqueName } from './support/database.js';

// The README's postgres.js recipe, run for real: tagged templates on ctx.tx crediting an order inside the
// delivery's transaction. (Drizzle on postgres.js cannot take ctx.tx: drizzle({ client }) reads
// client.options, which a TransactionSql does not have; see the README.)

const SECRET = 'whsec_postgres_js_tests_0123456789';
const ordersTable = uniqueName('pgjs_orders');
const inbox = uniqueName('pgjs_inbox');
let sql: Sql;
let store: PostgresJsStore;

function delivery(event: PaymentPaidEvent): WebhookRequest {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  return { method: 'POST', headers, rawBody: body };
}

async function placeOrder(): Promise<PaymentPaidEvent> {
  const event = samplePaymentPaidEvent();
  await sql`insert into ${sql(ordersTable)} (order_no) values (${event.orderNo})`;
  return event;
}

const paidOrder = async (orderNo: string) =>
  (await sql`select paid, payment_id from ${sql(ordersTable)} where order_no = ${orderNo}`)[0];

beforeAll(async () => {
  sql = postgres(DATABASE_URL, { max: 10, onnotice: () => {} });
  store = new PostgresJsStore({ sql, tableName: inbox });
  await store.migrate();
  await sql.unsafe(
    `create table ${ordersTable} (order_no text primary key, paid boolean not null default false, payment_id text)`,
  );
});
afterAll(async () => {
  await sql.unsafe(`drop table if exists ${ordersTable}, ${inbox}`);
  await sql.end({ timeout: 5 });
});

describe('PostgresJsStore recipes', () => {
  it('tagged templates on ctx.tx: the credit commits with the record; a throw rolls both back', async () => {
    let attempt = 0;
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      logger: { warn: () => {}, error: (f, m) => console.log('ERR', m, f.err) },
      onPaymentPaid: async (event, ctx) => {
        await ctx.tx`update ${ctx.tx(ordersTable)} set paid = true, payment_id = ${event.paymentId} where order_no = ${event.orderNo}`;
        if (++attempt === 1) throw new Error('the first attempt fails after its write');
      },
    });
    const event = await placeOrder();
    expect((await handle(delivery(event))).status).toBe(500);
    expect(await paidOrder(event.orderNo)).toEqual({ paid: false, payment_id: null });
    expect((await handle(delivery(event))).status).toBe(200);
    expect(await paidOrder(event.orderNo)).toEqual({ paid: true, payment_id: event.paymentId });
    expect(JSON.parse((await handle(delivery(event))).body)).toEqual({ received: true, duplicate: true });
    expect(attempt).toBe(2);
  });
});
