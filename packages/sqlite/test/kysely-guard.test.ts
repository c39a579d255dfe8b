import { createWebhookHandler, type PaymentPaidContext, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { Kysely, SqliteDialect, sql, type Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KyselyStore } from '../src/kysely.js';
import { open, scratchFolder } from './support/database.js';

/**
 * Kysely on SQLite is one connection, and the delivery's transaction holds it: a query through the app's
 * `db` during a delivery, left to Kysely, would wait for the delivery while the handler waits for it (until
 * the handler's deadline), then run on its own and commit what the delivery rolled back. The store runs it
 * in the delivery's transaction instead, and refuses at once what cannot join. Credits are counted through
 * a second connection, in a table without a unique constraint. (Each case answers at once: left waiting, a
 * delivery would hang until the handler's deadline, past the test's timeout.)
 */
interface Marks {
  marks: { marker: string };
}

const folder = scratchFolder();
const file = folder.file('shop.db');
const reader = open(file);
reader.exec('create table marks (marker text not null)');
const db = new Kysely<Marks>({ dialect: new SqliteDialect({ database: open(file) }) });
const count = (marker: string) =>
  Number((reader.prepare('select count(*) as n from marks where marker = ?').get(marker) as { n: number }).n);

beforeAll(() => new KyselyStore({ db }).migrate());
afterAll(async () => {
  await db.destroy();
  reader.close();
  folder.remove();
});

const secret = 'whsec_kysely_sqlite_guard_0123456789';

/** Two attempts of one payment on a fresh store (a second store on the same db, as an app may make). */
async function attempts(
  onPaymentPaid: (orderNo: string, ctx: { tx: Transaction<Marks> }, attempt: number) => Promise<void>,
) {
  const errors: Array<{ code?: string; message?: string }> = [];
  let attempt = 0;
  const handle = createWebhookHandler({
    secret,
    store: new KyselyStore({ db }),
    logger: { warn: () => {}, error: (fields) => void errors.push((fields as { err?: never }).err ?? {}) },
    onPaymentPaid: async (event, ctx: PaymentPaidContext & { tx: Transaction<Marks> }) => {
      attempt += 1;
      await onPaymentPaid(event.orderNo, ctx, attempt);
    },
  });
  const event = samplePaymentPaidEvent();
  const send = async () => {
    const { body, headers } = signWebhook({ event, secret, deliveryId: `dl_${event.orderNo}_${attempt}` });
    return (await handle({ method: 'POST', headers, rawBody: body })).status;
  };
  return { send, errors, marker: event.orderNo };
}

describe("KyselyStore on SQLite: the app's db during a delivery", () => {
  it.each([
    ['db', (m: string) => db.insertInto('marks').values({ marker: m }).execute()],
    ['db.withSchema()', (m: string) => db.withSchema('main').insertInto('marks').values({ marker: m }).execute()],
    ['a raw query on db', (m: string) => sql`insert into marks (marker) values (${m})`.execute(db)],
  ])('a write through %s joins the delivery: rolled back with a failed attempt, credited once', async (_, write) => {
    const { send, marker } = await attempts(async (orderNo, _ctx, attempt) => {
      await write(orderNo);
      if (attempt === 1) throw new Error('the first attempt fails after its write');
    });
    expect(await send()).toBe(500);
    expect(count(marker)).toBe(0);
    expect(await send()).toBe(200);
    expect(count(marker)).toBe(1);
  });

  it("a read through db sees the delivery's own uncommitted write", async () => {
    let seen = -1;
    const { send, marker } = await attempts(async (orderNo, ctx) => {
      await ctx.tx.insertInto('marks').values({ marker: orderNo }).execute();
      seen = (await db.selectFrom('marks').selectAll().where('marker', '=', orderNo).execute()).length;
    });
    expect(await send()).toBe(200);
    expect(seen).toBe(1);
    expect(count(marker)).toBe(1);
  });

  it.each([
    [
      'a streamed read',
      'CONNECTION_HELD_BY_DELIVERY',
      async () => {
        for await (const _ of db.selectFrom('marks').selectAll().stream()) break;
      },
    ],
    [
      'db.connection()',
      'CONNECTION_HELD_BY_DELIVERY',
      () => db.connection().execute((c) => c.selectFrom('marks').selectAll().execute()),
    ],
    ['a COMMIT through db', 'OWN_TRANSACTION_IN_HANDLER', () => sql`commit`.execute(db)],
  ])('%s cannot join and is refused at once (%s), nothing credited', async (_, code, query) => {
    const { send, errors, marker } = await attempts(async (orderNo, ctx) => {
      await ctx.tx.insertInto('marks').values({ marker: orderNo }).execute();
      await query();
    });
    expect(await send()).toBe(500);
    expect(errors.map((e) => e.code)).toContain(code);
    expect(String(errors[0]?.message)).toContain('ctx.tx');
    expect(count(marker)).toBe(0);
  });

  it("outside a delivery the app's db works as before", async () => {
    await db.insertInto('marks').values({ marker: 'plain-request' }).execute();
    expect(count('plain-request')).toBe(1);
  });
});
