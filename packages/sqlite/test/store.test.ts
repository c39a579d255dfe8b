import { randomUUID } from 'node:crypto';
import type { PaymentPaidEvent, WebhookRequestHandler } from '@service-pay/core';
import { samplePaymentPaidEvent, sendSigned, storeHandler } from '@service-pay/core/testing';
import { sleep, waitFor } from '@service-pay/test-kit';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { open, scratchFolder } from './support/database.js';

const SECRET = 'whsec_sqlite_store_tests_0123456789abcdef';
const quiet = { warn: () => {}, error: () => {} };

describe('the webhook handler with SqliteStore (better-sqlite3)', () => {
  const folder = scratchFolder();
  let db: Database.Database;
  let app: Database.Database;
  let store: SqliteStore;

  beforeAll(async () => {
    db = open(folder.file('shop.db'));
    app = open(folder.file('shop.db'));
    store = new SqliteStore({ database: db });
    await store.migrate();
    await store.migrate(); // idempotent
    app.exec('create table credits (payment_id text not null)');
  });
  afterAll(() => {
    db.close();
    app.close();
    folder.remove();
  });

  const credits = (paymentId: string) =>
    (app.prepare('select count(*) as n from credits where payment_id = ?').get(paymentId) as { n: number }).n;
  const send = (handle: WebhookRequestHandler, event: PaymentPaidEvent) => sendSigned(handle, event, SECRET);
  const handler = (
    onPaymentPaid: (event: PaymentPaidEvent, tx: Database.Database) => Promise<void>,
    handlerTimeoutMs?: number,
  ) => storeHandler({ store, secret: SECRET, logger: quiet, handlerTimeoutMs }, onPaymentPaid);
  const credit = (tx: Database.Database, paymentId: string) =>
    tx.prepare('insert into credits (payment_id) values (?)').run(paymentId);
  const event = () => samplePaymentPaidEvent({ paymentId: `p_${randomUUID()}` });

  // Credit once and a kept rejection run on every client in handler.test.ts.
  it('a handler past its deadline: rolled back, and its late writes through ctx.tx are refused', async () => {
    const paid = event();
    let late: unknown;
    const handle = handler(async (e, tx) => {
      const statement = tx.prepare('insert into credits (payment_id) values (?)');
      statement.run(e.paymentId);
      await sleep(300);
      try {
        statement.run(e.paymentId);
      } catch (error) {
        late = error;
      }
    }, 100);
    expect((await send(handle, paid)).status).toBe(500);
    await waitFor('the late write to be tried', () => late !== undefined, { timeoutMs: 10_000 }, 20);
    expect(String(late)).toMatch(/transaction has ended/);
    expect(credits(paid.paymentId)).toBe(0);
    expect(() => credit(db, paid.paymentId)).not.toThrow(); // the store's own connection is usable again
    app.prepare('delete from credits where payment_id = ?').run(paid.paymentId);
  });

  it('refuses BEGIN, COMMIT and ROLLBACK and close through ctx.tx; nested transaction() is a savepoint', async () => {
    const paid = event();
    const refusals: string[] = [];
    const handle = handler(async (e, tx) => {
      for (const sql of ['COMMIT', 'begin immediate', 'ROLLBACK', 'END']) {
        try {
          tx.exec(sql);
        } catch (error) {
          refusals.push((error as Error).message);
        }
      }
      try {
        tx.close();
      } catch (error) {
        refusals.push((error as Error).message);
      }
      tx.exec('SAVEPOINT mine; ROLLBACK TO mine; RELEASE mine');
      tx.transaction(() => credit(tx, e.paymentId))();
      // better-sqlite3 nests transaction() inside an open one as a savepoint: the inner failure undoes its own
      // write only.
      expect(() =>
        tx.transaction(() => {
          credit(tx, e.paymentId);
          throw new Error('inner');
        })(),
      ).toThrow('inner');
    });
    expect((await send(handle, paid)).status).toBe(200);
    expect(refusals.slice(0, 4).every((m) => /already in the delivery transaction/.test(m))).toBe(true);
    expect(refusals[4]).toMatch(/do not close ctx.tx/);
    expect(credits(paid.paymentId)).toBe(1);
  });

  it('prunes rows older than asked, in batches, and checks its argument', async () => {
    const before = (app.prepare('select count(*) as n from service_pay_inbox').get() as { n: number }).n;
    expect(before).toBeGreaterThan(0);
    expect(await store.prune({ olderThanMs: 60_000 })).toBe(0);
    await sleep(5);
    expect(await store.prune({ olderThanMs: 0 })).toBe(before);
    await expect(store.prune({ olderThanMs: -1 })).rejects.toThrow(RangeError);
    await expect(store.prune({} as { olderThanMs: number })).rejects.toThrow(/olderThanMs/);
  });

  it('says how to fix a missing table and bad options', async () => {
    const fresh = new Database(':memory:');
    await expect(new SqliteStore({ database: fresh, autoMigrate: false }).begin('k', 'fp')).rejects.toThrow(
      /run await store.migrate\(\)/,
    );
    // The failed begin left nothing open: the store can be migrated and used.
    await new SqliteStore({ database: fresh }).migrate();
    expect((await new SqliteStore({ database: fresh, autoMigrate: false }).begin('k', 'fp')).state).toBe('claimed');
    fresh.close();
    expect(() => new SqliteStore({} as never)).toThrow(/pass \{ database \}/);
    expect(() => new SqliteStore({ database: {} as never })).toThrow(/must be a better-sqlite3 \(or libsql\) Database/);
    expect(() => new SqliteStore({ database: db, tableName: 'x; drop table y' })).toThrow(/tableName/);
    const readonly = new Database(folder.file('shop.db'), { readonly: true });
    expect(() => new SqliteStore({ database: readonly })).toThrow(/read-only/);
    readonly.close();
  });

  it('works on an attached database (schema.name), with its indexes', async () => {
    const main = new Database(':memory:');
    main.exec(`attach database '${folder.file('billing.db')}' as billing`);
    const attached = new SqliteStore({ database: main, tableName: 'billing.inbox' });
    await attached.migrate();
    const claim = await attached.begin('k', 'fp');
    if (claim.state !== 'claimed') throw new Error(claim.state);
    await claim.session.commit({
      outcome: 'credited',
      paymentId: 'p',
      deliveryId: undefined,
      source: 'reconciliation',
    });
    expect(await attached.begin('k', 'fp')).toEqual({ state: 'completed', fingerprint: 'fp' });
    const indexes = main
      .prepare("select name from billing.sqlite_master where type = 'index' and tbl_name = 'inbox'")
      .all();
    const names = indexes.map((i) => (i as { name: string }).name).filter((name) => !name.startsWith('sqlite_'));
    expect(names.sort()).toEqual(['inbox_created_at_idx', 'inbox_payment_id_idx']);
    main.close();
  });
});
