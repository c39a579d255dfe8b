import { type OrmClient, ormStoreSuite } from '@service-pay/sql/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { SQLITE_CLIENTS } from './clients/index.js';

/**
 * The SQL stores' cases, core's transactional conformance among them, on every client of the registry.
 * SQLite has one writer (`oneWriter`): a second key waits for the first delivery's commit, answered
 * in-progress (conformance.test.ts), instead of core's "keys are independent"; and no statement runs long
 * enough to be interrupted (a better-sqlite3 statement blocks the whole process).
 */
for (const client of SQLITE_CLIENTS) {
  describe(`${client.name}: the SQL stores' cases`, () => {
    const suite = ormStoreSuite(client.open as () => Promise<OrmClient<never>>, {
      param: '?',
      keyColumn: 'key',
      dropClaimSupport: (c) => c.rows(`drop table ${c.inbox}`),
      oneWriter: true,
    });
    beforeAll(suite.open);
    afterAll(suite.close);
    for (const c of suite.cases) {
      // better-sqlite3 and libsql have no transaction API but the connection's own: `db.transaction()` on
      // the delivery's connection is a savepoint inside the delivery (store.test.ts), and a transaction on
      // a second connection is a write beside ctx.tx, refused as such (the write guard's second-connection
      // case, other-connection.test.ts). There is no "own transaction" mistake to make on them.
      if (client.ownTransactions.length === 0 && c.name.startsWith('the natural mistake')) continue;
      it(c.name, c.run);
    }
  });
}
