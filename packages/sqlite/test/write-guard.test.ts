import { namedOwnTransactions, writeGuardCases } from '@service-pay/sql/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type ClientFixture, SQLITE_CLIENTS } from './clients/index.js';

/**
 * The write guard's cases on every client of the registry. On SQLite the app's client is the store's own
 * connection, the delivery's transaction open on it: a write sent through it beside `ctx.tx` is not refused
 * but joins that transaction (`joinsDelivery`), so it commits or rolls back with the delivery and still
 * credits once. A client's own transactions (Kysely's) are refused as on every other database; a
 * better-sqlite3 or libsql transaction opened on the delivery's connection is a savepoint inside the
 * delivery's transaction (store.test.ts). Credits are counted on a connection of the test's own, in a table
 * without a unique constraint, so a second one would show.
 *
 * No talk-around spellings (`raw`, `apiForms`): those cases expect a write through the app's client to be
 * refused however it is spelled, and on SQLite that write joins the delivery instead (the first case, and
 * kysely-guard.test.ts for Kysely's own spellings); no `poolOfOne` or `callbackPool`: a SQLite client is
 * one connection, with no pool and no callback API.
 */
for (const client of SQLITE_CLIENTS) {
  describe(`${client.name}: a write beside ctx.tx joins the delivery, credited once`, () => {
    let fixture: ClientFixture<never> | undefined;
    const opened = () => {
      if (fixture === undefined) throw new Error(`${client.name}: the fixture is not open`);
      return fixture;
    };
    beforeAll(async () => {
      fixture = await client.open();
    });
    afterAll(() => fixture?.close());
    const cases = writeGuardCases<never>({
      store: () => opened().store(),
      write: (tx, marker) => opened().write(tx, marker),
      startWrite: (tx, marker) => opened().guard.startWrite(tx, marker),
      lazy: false,
      joinsDelivery: true,
      globalWrite: (marker) => opened().guard.globalWrite(marker),
      globalRead: () => opened().guard.globalRead(),
      ownTransactions: namedOwnTransactions(client.ownTransactions, () => opened().guard.ownTransactions),
      count: (marker) => opened().count(marker),
      secondConnectionWrite: (marker) => {
        const write = opened().guard.secondConnectionWrite;
        if (write === undefined) throw new Error(`${client.name}: the fixture has no second connection`);
        return write(marker);
      },
    });
    for (const c of cases) it(c.name, c.run);
  });
}
