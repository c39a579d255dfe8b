import { PostgresStore } from '../../src/index.js';
import type { PGliteTransaction } from '../../src/pglite-types.js';
import { openPGlite } from '../support/database.js';
import { type ClientFixture, type PostgresClient, untyped } from './fixture.js';

/**
 * PGlite: `PostgresStore` on an in-memory database of the fixture's own, in the test's process. One
 * connection, held by the delivery: no statement through the instance runs beside a delivery.
 */
export const pglite: PostgresClient = {
  id: 'pglite',
  name: 'PostgresStore (PGlite)',
  oneConnection: true,
  // No poolToFill: one connection inside the process, no pool to fill. No gatedStore: with one connection
  // the duplicate is answered after its ROLLBACK (its own case in duplicate-answer.test.ts).
  ownTransactions: ['pglite.transaction()'],
  open: async () => {
    const db = await openPGlite();
    const inbox = 'service_pay_inbox';
    const marks = 'marks';
    const insert = `insert into ${marks} (marker) values ($1)`;
    await db.exec(`create table ${marks} (id serial primary key, marker text not null)`);
    const ownTransaction = (marker: string) => db.transaction(async (tx) => void (await tx.query(insert, [marker])));
    const fixture: ClientFixture<PGliteTransaction> = {
      name: 'PostgresStore (PGlite)',
      inbox,
      marks,
      store: () => new PostgresStore({ pglite: db }) as never,
      write: async (tx, marker) => {
        await tx.query(insert, [marker]);
      },
      failingQuery: (tx) => tx.query('select 1 / 0'),
      statement: (tx, text) => tx.query(text),
      exec: (tx, text) => tx.query(text),
      writeInOwnTransaction: ownTransaction,
      count: async (marker) =>
        Number(
          (await db.query<{ n: number }>(`select count(*)::int as n from ${marks} where marker = $1`, [marker])).rows[0]
            ?.n,
        ),
      rows: async (text, params) => (await db.query<Record<string, unknown>>(text, params)).rows,
      guard: {
        lazy: false,
        oneConnection: true,
        startWrite: (tx, marker) => tx.query(insert, [marker]),
        globalWrite: (marker) => db.query(insert, [marker]),
        // The delivery holds the one connection: a read through the instance would wait for it to end, so
        // the read case reads through ctx-free code that does not touch the database.
        globalRead: async () => undefined,
        ownTransactions: { 'pglite.transaction()': ownTransaction },
      },
      close: () => db.close(),
    };
    await fixture.store().migrate();
    return untyped(fixture);
  },
};
