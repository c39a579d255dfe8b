import {
  appReadRoundTrips,
  ormRoundTripSubject,
  proxyServerOf,
  type RoundTripSubject,
  roundTripCases,
} from '@service-pay/sql/testing';
import { testServers } from '@service-pay/test-kit';
import { afterAll, expect, it } from 'vitest';

// Round trips of one delivery, counted by what the server answers (a proxy in front of it counts every
// ReadyForQuery), for every client. The hand-rolled transaction is the yardstick: BEGIN; INSERT ... ON
// CONFLICT DO NOTHING; the credit; COMMIT = 4 for a fresh payment, and BEGIN; the INSERT that finds the
// row; ROLLBACK = 3 for a duplicate.
const HAND_ROLLED = { fresh: 4, duplicate: 3 };

// The clients below read DATABASE_URL when their modules load: every connection goes through the proxy.
const proxy = await proxyServerOf('postgres', 'TEST_POSTGRES_URL', testServers().postgresUrl);
const { SERVER_CLIENTS } = await import('./clients/index.js');
const { openPool, uniqueName } = await import('./support/database.js');
const { PostgresStore } = await import('../src/index.js');

afterAll(() => proxy.close());

// Every client of the registry that speaks to the server (PGlite is inside the process: no wire to count).
const subjects: Array<() => Promise<RoundTripSubject<never>>> = SERVER_CLIENTS.map((c) => ormRoundTripSubject(c.open));

for (const c of roundTripCases(proxy, 'PostgreSQL', HAND_ROLLED, subjects)) it(c.name, c.run);

it("a read through the app's pool costs 3 round trips during a delivery (BEGIN READ ONLY, it, ROLLBACK), 1 outside", async () => {
  const pool = await openPool({ max: 4 });
  const inbox = uniqueName('rt_read_inbox');
  try {
    const store = new PostgresStore({ pool, tableName: inbox });
    await store.migrate();
    const { inside, outside } = await appReadRoundTrips(proxy, store, () => pool.query('select 1'));
    console.info(
      `round trips of an app read on PostgreSQL (node-postgres): inside a delivery ${inside}, outside ${outside}`,
    );
    expect({ inside, outside }).toEqual({ inside: 3, outside: 1 });
  } finally {
    await pool.query(`drop table if exists ${inbox}`);
    await pool.query(`drop function if exists ${inbox}_claim(text)`).catch(() => {});
    await pool.end();
  }
});
