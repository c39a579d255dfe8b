import { EntitySchema, MikroORM } from '@mikro-orm/postgresql';
import { createWebhookHandler, type PaymentPaidEvent, signWebhook, type WebhookRequest } from '@service-pay/core';
import { OwnTransactionError } from '@service-pay/core/node';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { expectFailedAttemptThenOneCredit, failsFirstAttempt } from '@service-pay/test-kit/credit-once';
import type { Knex } from 'knex';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnexStore } from '../src/knex.js';
import { DATABASE_URL, openPool, uniqueName } from './support/database.js';

/**
 * MikroORM 6 (on Knex) has no store of its own: its `em.transactional(work, { ctx })` joins a Knex
 * transaction it is given, which is public API. So the safe path is `KnexStore` on the ORM's own Knex
 * (`orm.em.getKnex()`), and the credit written with MikroORM entities in `em.fork().transactional(...,
 * { ctx: ctx.tx })`: a savepoint inside the delivery's transaction, committed with the inbox row. Credits
 * are counted in a table without a unique constraint. (MikroORM 7 moved to Kysely and needs Node 22.)
 */
const SECRET = 'whsec_postgres_mikro_orm_tests_0123456';

interface Credit {
  id: number;
  paymentId: string;
}

function delivery(event: PaymentPaidEvent, attempt: number): WebhookRequest {
  const { body, headers } = signWebhook({
    event,
    secret: SECRET,
    deliveryId: `dl_mikro_${event.paymentId}_${attempt}`,
  });
  return { method: 'POST', headers, rawBody: body };
}

describe('MikroORM 6 through KnexStore on its own Knex', () => {
  const inbox = uniqueName('mikro_inbox');
  const credits = uniqueName('mikro_credits');
  let admin: pg.Pool;
  let orm: MikroORM;
  let store: KnexStore;
  const CreditSchema = new EntitySchema<Credit>({
    name: 'Credit',
    tableName: credits,
    properties: {
      id: { type: 'number', primary: true, autoincrement: true },
      paymentId: { type: 'string', fieldName: 'payment_id' },
    },
  });
  const count = async (paymentId: string) =>
    Number((await admin.query(`select count(*) as n from ${credits} where payment_id = $1`, [paymentId])).rows[0]?.n);

  beforeAll(async () => {
    admin = await openPool({ max: 2 });
    await admin.query(`create table ${credits} (id serial primary key, payment_id text not null)`);
    orm = await MikroORM.init({ clientUrl: DATABASE_URL, entities: [CreditSchema], debug: false });
    // MikroORM 6.6 pins knex 3.2; this package's tests use 3.3, whose types differ a little. An app has the
    // one knex MikroORM brings, and passes it as is.
    store = new KnexStore({ knex: orm.em.getKnex() as unknown as Knex, tableName: inbox });
    await store.migrate();
  });
  afterAll(async () => {
    await orm?.close(true);
    await admin?.query(`drop table if exists ${credits}, ${inbox}`);
    await admin?.query(`drop function if exists ${inbox}_claim(text)`);
    await admin?.end();
  });

  it('credits once with MikroORM entities in em.transactional({ ctx: ctx.tx }); a throw after the flush rolls it back', async () => {
    const event = samplePaymentPaidEvent();
    const failing = failsFirstAttempt('the first attempt fails after MikroORM flushed its credit');
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      logger: { warn: () => {}, error: () => {} },
      onPaymentPaid: async (paid, ctx) => {
        await orm.em.fork().transactional(
          async (em) => {
            em.create(CreditSchema, { paymentId: paid.paymentId });
          },
          { ctx: ctx.tx },
        );
        // Flushed, inside the delivery's transaction: this throw must take the credit back with it.
        failing.afterCredit();
      },
    });
    await expectFailedAttemptThenOneCredit(
      (attempt) => handle(delivery(event, attempt)),
      () => count(event.paymentId),
    );
    expect(failing.calls()).toBe(2);
  });

  it("the natural mistake (MikroORM's own em.transactional without ctx) fails clearly and credits nothing", async () => {
    const event = samplePaymentPaidEvent();
    const logged: Array<Record<string, unknown>> = [];
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      logger: { warn: () => {}, error: (fields) => logged.push(fields as Record<string, unknown>) },
      onPaymentPaid: async (paid) => {
        await orm.em.fork().transactional(async (em) => {
          em.create(CreditSchema, { paymentId: paid.paymentId });
        });
      },
    });
    for (let attempt = 1; attempt <= 3; attempt++) expect((await handle(delivery(event, attempt))).status).toBe(500);
    expect(await count(event.paymentId)).toBe(0);
    expect(logged[0]?.err).toBeInstanceOf(OwnTransactionError);
    // Outside a delivery MikroORM's transactions work as before.
    await orm.em.fork().transactional(async (em) => {
      em.create(CreditSchema, { paymentId: `outside:${event.paymentId}` });
    });
    expect(await count(`outside:${event.paymentId}`)).toBe(1);
  });

  it('em.fork().transactional(fn, { ctx: ctx.tx }) not awaited: the store waits for its savepoint, the credit commits once with the record', async () => {
    const event = samplePaymentPaidEvent();
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => void unhandled.push(reason);
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      logger: { warn: () => {}, error: () => {} },
      onPaymentPaid: async (paid, ctx) => {
        // The mistake: MikroORM's nested transaction on ctx.tx, started and not awaited.
        void orm.em.fork().transactional(
          async (em) => {
            em.create(CreditSchema, { paymentId: paid.paymentId });
          },
          { ctx: ctx.tx },
        );
      },
    });
    process.on('unhandledRejection', note);
    try {
      expect((await handle(delivery(event, 1))).status).toBe(200);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', note);
    }
    expect(unhandled).toEqual([]);
    expect(await count(event.paymentId)).toBe(1);
    const again = await handle(delivery(event, 2));
    expect(JSON.parse(again.body)).toMatchObject({ duplicate: true });
    expect(await count(event.paymentId)).toBe(1);
  });
});
