import type { TransactionalStore } from '@service-pay/core';
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

it("a read through the app's postgres.js sql or Kysely db costs 3 round trips during a delivery, 1 outside", async () => {
  const { default: postgres } = await import('postgres');
  const { Kysely, PostgresDialect } = await import('kysely');
  const { guardSql, PostgresJsStore } = await import('../src/postgres-js.js');
  const { KyselyStore } = await import('../src/kysely.js');
  const pool = await openPool({ max: 4 });
  const sql = guardSql(postgres(testServers().postgresUrl, { max: 4, onnotice: () => {} }));
  // The README's shortest Kysely form: the store given only `db`.
  const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
  const inboxes = [uniqueName('rt_read_js'), uniqueName('rt_read_kysely')];
  try {
    const asStore = (store: object) => store as TransactionalStore<never> & { migrate(): Promise<void> };
    const reads: Record<string, { store: ReturnType<typeof asStore>; read: () => PromiseLike<unknown> }> = {
      'postgres.js sql`...`': {
        store: asStore(new PostgresJsStore({ sql, tableName: inboxes[0] })),
        read: () => sql`select 1`,
      },
      'postgres.js sql.unsafe': {
        store: asStore(new PostgresJsStore({ sql, tableName: inboxes[0] })),
        read: () => sql.unsafe('select 1'),
      },
      'Kysely db, no pool given': {
        store: asStore(new KyselyStore({ db, tableName: inboxes[1] })),
        read: () => db.selectNoFrom((eb) => eb.lit(1).as('one')).execute(),
      },
    };
    // Connections opened now: the delivery holds one, and the read inside it takes another, whose opening
    // (startup, postgres.js's type lookup) is not the read's cost.
    await Promise.all([sql`select 1`, sql`select 1`, sql`select 1`]);
    await Promise.all([pool.query('select 1'), pool.query('select 1'), pool.query('select 1')]);
    for (const [name, { store, read }] of Object.entries(reads)) {
      await store.migrate();
      const { inside, outside } = await appReadRoundTrips(proxy, store, read);
      console.info(
        `round trips of an app read on PostgreSQL (${name}): inside a delivery ${inside}, outside ${outside}`,
      );
      expect({ name, inside, outside }).toEqual({ name, inside: 3, outside: 1 });
    }
  } finally {
    for (const inbox of inboxes) {
      await pool.query(`drop table if exists ${inbox}`);
      await pool.query(`drop function if exists ${inbox}_claim(text)`).catch(() => {});
    }
    await sql.end({ timeout: 5 });
    await pool.end();
  }
});
