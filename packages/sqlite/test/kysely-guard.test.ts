import { createWebhookHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { type GuardSubject, writeGuardCases } from '@service-pay/sql/testing';
import { Kysely, SqliteDialect, sql, type Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KyselyStore } from '../src/kysely.js';
import { open, scratchFolder } from './support/database.js';

/**
 * Kysely on SQLite is one connection, and the delivery's transaction holds it: a query through the app's
 * `db` during a delivery would wait for the delivery while the handler waits for the query, until the
 * handler's deadline rolled the delivery back; a write would then commit on its own and the retry credit
 * again. So the store refuses it at the call: a write as everywhere (WRITE_OUTSIDE_TRANSACTION), a read
 * with CONNECTION_HELD_BY_DELIVERY. Credits are counted through a second connection, in a table without a
 * unique constraint.
 */
interface Marks {
  marks: { marker: string };
}

const folder = scratchFolder();
const file = folder.file('shop.db');
const reader = open(file);
reader.exec('create table marks (marker text not null)');
const db = new Kysely<Marks>({ dialect: new SqliteDialect({ database: open(file) }) });
const count = async (marker: string) =>
  Number((reader.prepare('select count(*) as n from marks where marker = ?').get(marker) as { n: number }).n);

beforeAll(() => new KyselyStore({ db }).migrate());
afterAll(async () => {
  await db.destroy();
  reader.close();
  folder.remove();
});

describe('KyselyStore on SQLite: the delivery transaction is the only way to write', () => {
  const subject: GuardSubject<Transaction<Marks>> = {
    store: () => new KyselyStore({ db }),
    lazy: false,
    oneConnection: true,
    write: (tx, marker) => tx.insertInto('marks').values({ marker }).execute(),
    startWrite: (tx, marker) => tx.insertInto('marks').values({ marker }).execute(),
    globalWrite: (marker) => db.insertInto('marks').values({ marker }).execute(),
    // A read through `db` is refused too on one connection (its own case below): nothing to read here.
    globalRead: async () => undefined,
    ownTransactions: {
      'db.transaction()': (marker) =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto('marks').values({ marker }).execute();
        }),
      'db.startTransaction()': async (marker) => {
        const trx = await db.startTransaction().execute();
        await trx.insertInto('marks').values({ marker }).execute();
        await trx.commit().execute();
      },
    },
    count,
  };
  for (const c of writeGuardCases(subject)) it(c.name, c.run);
});

describe("KyselyStore on SQLite: a query through the app's db in the handler answers at once", () => {
  const secret = 'whsec_kysely_sqlite_guard_0123456789';
  const deliver = async (query: (marker: string) => Promise<unknown>) => {
    const errors: unknown[] = [];
    const handle = createWebhookHandler({
      secret,
      store: new KyselyStore({ db }),
      logger: { warn: () => {}, error: (fields) => void errors.push((fields as { err?: unknown }).err) },
      onPaymentPaid: async (event, ctx) => {
        await query(event.orderNo);
        await ctx.tx.insertInto('marks').values({ marker: event.orderNo }).execute();
      },
    });
    const event = samplePaymentPaidEvent();
    const { body, headers } = signWebhook({ event, secret, deliveryId: `dl_${event.orderNo}` });
    // Left waiting, the delivery would hang until the handler's deadline, past this test's timeout.
    const response = await handle({ method: 'POST', headers, rawBody: body });
    return { response, errors, marker: event.orderNo };
  };

  it.each([
    ['a read', () => db.selectFrom('marks').selectAll().execute()],
    ['a raw read', () => sql`select count(*) from marks`.execute(db)],
    ['a read through withSchema()', () => db.withSchema('main').selectFrom('marks').selectAll().execute()],
    [
      'a streamed read',
      async () => {
        for await (const _ of db.selectFrom('marks').selectAll().stream()) break;
      },
    ],
  ])('%s is refused with CONNECTION_HELD_BY_DELIVERY, not left waiting for the delivery', async (_, query) => {
    const { response, errors, marker } = await deliver(query);
    expect(response.status).toBe(500);
    expect(errors.map((e) => (e as { code?: string }).code)).toContain('CONNECTION_HELD_BY_DELIVERY');
    expect(String((errors[0] as Error).message)).toContain('ctx.tx');
    expect(await count(marker)).toBe(0);
  });

  it('a write through withSchema() is refused as a write', async () => {
    const { response, errors, marker } = await deliver((m) =>
      db
        .withSchema('main')
        .insertInto('marks')
        .values({ marker: `${m}-beside` })
        .execute(),
    );
    expect(response.status).toBe(500);
    expect(errors.map((e) => (e as { code?: string }).code)).toContain('WRITE_OUTSIDE_TRANSACTION');
    expect(await count(`${marker}-beside`)).toBe(0);
  });

  it("outside a delivery the app's db works as before", async () => {
    await db.insertInto('marks').values({ marker: 'plain-request' }).execute();
    expect(await db.selectFrom('marks').selectAll().where('marker', '=', 'plain-request').execute()).toHaveLength(1);
  });
});
