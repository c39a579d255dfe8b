import type { TransactionalStore } from '@service-pay/core';
import {
  assertMissingInbox,
  autoMigrateCases,
  beginFailures,
  type EmptyDatabaseSubject,
} from '@service-pay/sql/testing';
import knexFactory from 'knex';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { KnexStore } from '../src/knex.js';
import { KyselyStore } from '../src/kysely.js';
import { SERVER_CLIENTS } from './clients/index.js';
import { DATABASE_URL, openPool, uniqueName } from './support/database.js';

// Every client of the registry on the shared server (PGlite's in-process database is made new each time).
const subjects: Array<() => Promise<EmptyDatabaseSubject>> = SERVER_CLIENTS.map((entry) => async () => {
  const client = await entry.open();
  return { ...client, store: client.store() } as EmptyDatabaseSubject;
});

const dropInbox = async ({ inbox, rows }: EmptyDatabaseSubject) => {
  await rows(`drop table ${inbox} cascade`);
  await rows(`drop function if exists ${inbox}_claim, ${inbox}_take_v2`);
};
for (const c of autoMigrateCases({ keyColumn: 'key', dropInbox }, subjects)) it(c.name, c.run);

describe('autoMigrate: false', () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = await openPool();
  });
  afterAll(() => pool.end());

  it('answers a missing table with the store that met it and how to create it, never "an older version"', async () => {
    const tableName = uniqueName('absent');
    const stores: Array<[string, TransactionalStore<unknown>]> = [
      ['PostgresStore', new PostgresStore({ pool, tableName, autoMigrate: false })],
      [
        'KyselyStore',
        new KyselyStore({ db: new Kysely({ dialect: new PostgresDialect({ pool }) }), tableName, autoMigrate: false }),
      ],
    ];
    for (const [name, store] of stores) {
      const failure = await store.begin('k', 'fp').then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(failure).toMatch(
        new RegExp(`^${name}: the inbox table ${tableName}.* does not exist; run await store\\.migrate\\(\\)`),
      );
      expect(failure).toMatch(/autoMigrate/);
      expect(failure).not.toMatch(/older version/);
    }
    expect((await pool.query('select to_regclass($1) as t', [tableName])).rows[0].t).toBeNull();
  });

  it('tells no table from a table made by hand without the claim functions, and from a table of other columns', async () => {
    const tableName = uniqueName('by_hand');
    const knex = knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 2 } });
    const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
    const stores = (): Array<[string, TransactionalStore<unknown>]> => [
      ['KyselyStore', new KyselyStore({ db, pool, tableName, autoMigrate: false })],
      ['KnexStore', new KnexStore({ knex, tableName, autoMigrate: false })],
    ];
    const failures = () => beginFailures(stores());
    try {
      assertMissingInbox(
        await failures(),
        tableName,
        /docs\/sql\/postgres-inbox\.sql/,
        /older version|or its claim function|PostgresStore/,
      );
      // The columns of the README's table, made by hand: enough for PostgresStore, not for the ORM stores.
      await pool.query(`create table ${tableName} (key text primary key, fingerprint text not null,
        payment_id text not null, delivery_id text, source text not null, outcome text not null, reason text,
        created_at timestamptz not null default now())`);
      for (const [name, failure] of await failures()) {
        expect(failure).toMatch(
          new RegExp(
            `^MissingTableError: ${name}: the inbox table ${tableName} exists but its claim functions ${tableName}_claim and ${tableName}_take_v2 do not: a table made by hand needs them too for ${name}`,
          ),
        );
      }
      await pool.query(`drop table ${tableName}`);
      await pool.query(`create table ${tableName} (id text primary key, amount int)`);
      for (const [name, failure] of await failures()) {
        expect(failure).toMatch(
          new RegExp(`^InboxTableMismatchError: ${name}: the table ${tableName} is not an inbox the store made`),
        );
      }
      // migrate() keeps that table, and says why it cannot use it instead of a raw "column does not exist".
      await expect(new KnexStore({ knex, tableName }).migrate()).rejects.toThrow(
        /^KnexStore: the table .* is not an inbox the store made \(column "created_at" does not exist\)/,
      );
    } finally {
      await pool.query(`drop table if exists ${tableName}`);
      await pool.query(`drop function if exists ${tableName}_claim, ${tableName}_take_v2`);
      await knex.destroy();
    }
  });

  it('a table an earlier version migrated (no _take_v2): named as missing with autoMigrate off, added on the first delivery with it on', async () => {
    const tableName = uniqueName('earlier');
    const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
    try {
      await new KyselyStore({ db, tableName }).migrate();
      await pool.query(
        `insert into ${tableName} (key, fingerprint, payment_id, source, outcome) values ('k_kept', 'fp', 'p', 'webhook', 'credited')`,
      );
      // What an earlier version left: the table, its rows, `_claim`, and `_take` answering a record.
      await pool.query(`drop function ${tableName}_take_v2`);
      await pool.query(
        `create function ${tableName}_take(text, text, text, text, text, out locked boolean) language sql as 'select false'`,
      );
      const draft = { paymentId: 'p_new', deliveryId: 'dl_new', source: 'webhook' } as const;
      const off = await new KyselyStore({ db, tableName, autoMigrate: false }).begin('k_new', 'fp', draft).then(
        async (claim) => {
          if (claim.state === 'claimed') await claim.session.rollback(undefined);
          return claim.state;
        },
        (error: Error) => `${error.name}: ${error.message}`,
      );
      expect(off).toMatch(
        new RegExp(
          `^MissingTableError: KyselyStore: the inbox table ${tableName} exists but its claim function ${tableName}_take_v2 does not`,
        ),
      );
      const store = new KyselyStore({ db, tableName });
      const claim = await store.begin('k_new', 'fp', draft);
      expect(claim.state).toBe('claimed');
      if (claim.state === 'claimed') await claim.session.commit({ outcome: 'credited', ...draft });
      expect(await store.begin('k_kept', 'fp', draft)).toEqual({ state: 'completed', fingerprint: 'fp' });
      expect(await store.begin('k_new', 'fp', draft)).toEqual({ state: 'completed', fingerprint: 'fp' });
    } finally {
      await pool.query(`drop table if exists ${tableName}`);
      await pool.query(`drop function if exists ${tableName}_claim, ${tableName}_take, ${tableName}_take_v2`);
    }
  });

  it('is checked: anything but a boolean is refused in the store name', () => {
    expect(() => new PostgresStore({ pool, autoMigrate: 'yes' as never })).toThrow(
      /^PostgresStore: autoMigrate must be/,
    );
  });
});
