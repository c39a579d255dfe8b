import { randomUUID } from 'node:crypto';
import { createWebhookHandler, type PaymentPaidEvent, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { open, scratchFolder } from './support/database.js';

const SECRET = 'whsec_sqlite_other_connection_0123456789';

// A second connection to the same file, written in onPaymentPaid: the delivery holds SQLite's write lock, so
// that write can only wait for it, and better-sqlite3 waits synchronously (the busy timeout, 5 s by default)
// with the whole process blocked, the delivery that holds the lock included: it never succeeds. The README
// says to write the credit through ctx.tx; these tests hold both halves of that advice.
describe('SqliteStore: the credit written through another connection during a delivery', () => {
  const folder = scratchFolder();
  let storeDb: Database.Database;
  let store: SqliteStore;
  const errors: unknown[] = [];

  beforeAll(async () => {
    storeDb = open(folder.file('shop.db'));
    store = new SqliteStore({ database: storeDb });
    await store.migrate();
    storeDb.exec('create table credits (payment_id text not null)');
  });
  afterAll(() => {
    storeDb.close();
    folder.remove();
  });

  const credits = (paymentId: string) =>
    (storeDb.prepare('select count(*) as n from credits where payment_id = ?').get(paymentId) as { n: number }).n;
  const handler = (credit: (tx: Database.Database, paymentId: string) => void) =>
    createWebhookHandler({
      secret: SECRET,
      store,
      logger: { warn: () => {}, error: (fields) => errors.push((fields as { err?: unknown }).err) },
      onPaymentPaid: async (event, ctx) => credit(ctx.tx, event.paymentId),
    });
  const send = async (credit: (tx: Database.Database, paymentId: string) => void, event: PaymentPaidEvent) => {
    const { body, headers } = signWebhook({ event, secret: SECRET });
    return (await handler(credit)({ method: 'POST', headers, rawBody: body })).status;
  };

  it('is never credited: every attempt fails once the busy timeout has passed, named as a write beside ctx.tx', async () => {
    // A short busy timeout keeps the test fast; better-sqlite3's default (5 s) only makes each attempt block
    // the process longer before the same answer.
    const other = open(folder.file('shop.db'));
    other.pragma('busy_timeout = 50');
    const paid = samplePaymentPaidEvent({ paymentId: `p_${randomUUID()}` });
    const viaOther = (_tx: Database.Database, paymentId: string) => {
      other.prepare('insert into credits (payment_id) values (?)').run(paymentId);
    };
    errors.length = 0;
    for (let attempt = 0; attempt < 3; attempt++) expect(await send(viaOther, paid)).toBe(500);
    expect(credits(paid.paymentId)).toBe(0);
    expect(errors.map((e) => (e as { code?: unknown }).code)).toEqual([
      'WRITE_OUTSIDE_TRANSACTION',
      'WRITE_OUTSIDE_TRANSACTION',
      'WRITE_OUTSIDE_TRANSACTION',
    ]);
    // The driver's own error stays the cause: SQLITE_BUSY, "database is locked".
    expect(errors.map((e) => (e as { cause?: { code?: unknown } }).cause?.code)).toEqual([
      'SQLITE_BUSY',
      'SQLITE_BUSY',
      'SQLITE_BUSY',
    ]);
    expect(String((errors[0] as Error).message)).toMatch(/ctx\.tx/);
    // Reads through it are fine meanwhile (WAL): only a write waits for the delivery's lock.
    const readsOther = (tx: Database.Database, paymentId: string) => {
      other.prepare('select count(*) from credits').get();
      tx.prepare('insert into credits (payment_id) values (?)').run(paymentId);
    };
    expect(await send(readsOther, paid)).toBe(200);
    expect(credits(paid.paymentId)).toBe(1);
    other.close();
  });

  it('through ctx.tx, as the README says: credited once, the duplicate answered without a second credit', async () => {
    const paid = samplePaymentPaidEvent({ paymentId: `p_${randomUUID()}` });
    const viaTx = (tx: Database.Database, paymentId: string) => {
      tx.prepare('insert into credits (payment_id) values (?)').run(paymentId);
    };
    expect(await send(viaTx, paid)).toBe(200);
    expect(await send(viaTx, paid)).toBe(200);
    expect(credits(paid.paymentId)).toBe(1);
  });
});
