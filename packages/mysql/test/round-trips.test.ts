import {
  appReadRoundTrips,
  ormRoundTripSubject,
  proxyServerOf,
  type RoundTripSubject,
  roundTripCases,
} from '@service-pay/sql/testing';
import { testServers } from '@service-pay/test-kit';
import { afterAll, expect, it } from 'vitest';
import { MySqlStore } from '../src/index.js';

// Round trips of one delivery, counted by what the server answers (a proxy in front of it counts every
// command that gets a reply), for every client. The hand-rolled transaction is the yardstick: BEGIN; the
// INSERT of the inbox row; the credit; COMMIT = 4 for a fresh payment, and BEGIN; the INSERT that finds
// the row; ROLLBACK = 3 for a duplicate. The stores match it on MariaDB, whose INSERT ... RETURNING lets the
// claim take the key, write the row and name its connection in one statement (a store's first delivery
// also asks the server's version, once; the count is taken after two). MySQL 8 lacks it and takes one more
// for a fresh payment.
const LIMIT = { fresh: 4, duplicate: 3 };

// The clients below read MYSQL_URL when their modules load: every connection goes through the proxy.
const proxy = await proxyServerOf('mysql', 'TEST_MYSQL_URL', testServers().mysqlUrl);
const { MYSQL_CLIENTS } = await import('./clients/index.js');
const { openPool, uniqueName } = await import('./support/database.js');

afterAll(() => proxy.close());

const subjects: Array<() => Promise<RoundTripSubject<never>>> = MYSQL_CLIENTS.map((entry) =>
  ormRoundTripSubject(() => entry.open()),
);

for (const c of roundTripCases(proxy, 'MariaDB', LIMIT, subjects)) it(c.name, c.run);

it("a read through the app's pool costs 1 round trip during a delivery (SET STATEMENT in its text), 1 outside", async () => {
  const pool = await openPool();
  const inbox = uniqueName('rt_read_inbox');
  try {
    const store = new MySqlStore({ pool, tableName: inbox });
    await store.migrate();
    const { inside, outside } = await appReadRoundTrips(proxy, store, () => pool.query('select 1'));
    console.info(`round trips of an app read on MariaDB (mysql2): inside a delivery ${inside}, outside ${outside}`);
    expect({ inside, outside }).toEqual({ inside: 1, outside: 1 });
  } finally {
    await pool.query(`drop table if exists ${inbox}, ${inbox}_keys`);
    await pool.end();
  }
});
