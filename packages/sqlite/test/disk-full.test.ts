import { randomUUID } from 'node:crypto';
import type { PaymentPaidEvent, TransactionalStore } from '@service-pay/core';
import { samplePaymentPaidEvent, sendSigned, storeHandler } from '@service-pay/core/testing';
import type Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { KyselyStore } from '../src/kysely.js';
import { open, scratchFolder } from './support/database.js';

/**
 * SQLite rolls the whole transaction back by itself on some errors (a full disk, an I/O error, no memory),
 * and every statement after runs in autocommit. A handler that catches such an error and writes again
 * would commit that write on its own while its credit before it is gone: the store must refuse it and fail
 * the delivery, and the retry credit once. The disk fills for real: the store's connection may grow the
 * file by a few pages only (`max_page_count`), and the handler writes a megabyte. Credits go to a table
 * WITHOUT a unique constraint (a second credit would show).
 */
const SECRET = 'whsec_sqlite_disk_full_tests_0123456789';
const quiet = { warn: () => {}, error: () => {} };
const folder = scratchFolder();
let reader: Database.Database;

beforeAll(() => {
  const setup = open(folder.file('shop.db'));
  setup.exec('create table credits (marker text not null); create table attachments (data blob)');
  setup.close();
  reader = open(folder.file('shop.db'));
});
afterAll(() => {
  reader.close();
  folder.remove();
});

const count = (marker: string) =>
  (reader.prepare('select count(*) as n from credits where marker = ?').get(marker) as { n: number }).n;

/** Lets `db` grow the file by a few pages only (`full`), or as SQLite's default allows. */
function diskOf(db: Database.Database, full: boolean): void {
  const pages = Number(db.pragma('page_count', { simple: true }));
  db.pragma(`max_page_count = ${full ? pages + 8 : 1_073_741_823}`);
}

/** Runs two deliveries of one payment: the first with the disk full after its credit. */
async function fullDiskThenRetry<Tx>(
  db: Database.Database,
  store: TransactionalStore<Tx>,
  writes: {
    credit: (tx: Tx, marker: string) => unknown;
    attach: (tx: Tx) => unknown;
  },
) {
  const event: PaymentPaidEvent = samplePaymentPaidEvent({ paymentId: `p_${randomUUID()}` });
  const seen: { full?: unknown; after?: unknown } = {};
  let calls = 0;
  const handle = storeHandler<Tx>({ store, secret: SECRET, logger: quiet }, async (paid, tx) => {
    calls += 1;
    await writes.credit(tx, paid.paymentId);
    if (calls > 1) return;
    // The handler treats the attachment as optional: it catches the failure and goes on to write.
    seen.full = await Promise.resolve()
      .then(() => writes.attach(tx))
      .then(
        () => 'attached',
        (error: unknown) => error,
      );
    seen.after = await Promise.resolve()
      .then(() => writes.credit(tx, `after:${paid.paymentId}`))
      .then(
        () => 'written',
        (error: unknown) => error,
      );
  });
  diskOf(db, true);
  const first = await sendSigned(handle, event, SECRET);
  diskOf(db, false);
  expect(first.status, first.body).toBe(500);
  expect(JSON.stringify((seen.full as { code?: unknown }).code ?? (seen.full as Error).cause)).toMatch(/SQLITE_FULL/);
  expect(String((seen.after as Error).message)).toMatch(/ended the transaction/);
  expect(count(event.paymentId)).toBe(0);
  expect(count(`after:${event.paymentId}`)).toBe(0);
  expect((await sendSigned(handle, event, SECRET)).status).toBe(200);
  expect(count(event.paymentId)).toBe(1);
}

describe('a full disk the handler caught: SQLite rolled the transaction back', () => {
  it('SqliteStore: the write after it is refused, 500, nothing credited; the retry credits once', async () => {
    const db = open(folder.file('shop.db'));
    try {
      const store = new SqliteStore({ database: db });
      await fullDiskThenRetry<Database.Database>(db, store, {
        credit: (tx, marker) => tx.prepare('insert into credits (marker) values (?)').run(marker),
        attach: (tx) => tx.prepare('insert into attachments (data) values (zeroblob(?))').run(1_000_000),
      });
    } finally {
      db.close();
    }
  });

  it('KyselyStore: the same', async () => {
    const db = open(folder.file('shop.db'));
    interface Shop {
      credits: { marker: string };
    }
    const kysely = new Kysely<Shop>({ dialect: new SqliteDialect({ database: db }) });
    try {
      const store = new KyselyStore({ db: kysely });
      await fullDiskThenRetry<Transaction<Shop>>(db, store, {
        credit: (tx, marker) => tx.insertInto('credits').values({ marker }).execute(),
        attach: (tx) => sql`insert into attachments (data) values (zeroblob(${1_000_000}))`.execute(tx),
      });
    } finally {
      await kysely.destroy();
    }
  });
});
