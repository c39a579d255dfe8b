import type { InboxDraft, TransactionalStore } from '@service-pay/core';
import {
  assertMissingInbox,
  autoMigrateCases,
  beginFailures,
  type EmptyDatabaseSubject,
} from '@service-pay/sql/testing';
import { Kysely, MysqlDialect } from 'kysely';
import { createPool } from 'mysql2';
import type { Pool } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MySqlStore } from '../src/index.js';
import { KyselyStore } from '../src/kysely.js';
import { MYSQL_CLIENTS } from './clients/index.js';
import { DATABASE_URL, openPool, uniqueName } from './support/database.js';

// The first delivery on an empty database is credited: each store creates its inbox and lock slots when a
// delivery finds them missing (autoMigrate, on by default), here with a payment id of core's longest, 256
// characters (the column was one short).
let pool: Pool;
beforeAll(async () => {
  pool = await openPool();
});
afterAll(() => pool.end());

const subjects: Array<() => Promise<EmptyDatabaseSubject>> = MYSQL_CLIENTS.map((entry) => async () => {
  const client = await entry.open();
  return { ...client, store: client.store() } as unknown as EmptyDatabaseSubject;
});

const longest = `p_${'x'.repeat(254)}`;
const draft: InboxDraft = { paymentId: longest, deliveryId: 'dl_test', source: 'webhook' };

const dropInbox = ({ inbox, rows }: EmptyDatabaseSubject) => rows(`drop table if exists ${inbox}, ${inbox}_keys`);
for (const c of autoMigrateCases({ keyColumn: '`key`', dropInbox }, subjects)) it(c.name, c.run);

describe('an inbox made by an earlier version', () => {
  it('is widened by migrate(): payment_id VARCHAR(255) takes core’s 256 characters after it', async () => {
    const inbox = uniqueName('old_inbox');
    try {
      await pool.query(`create table ${inbox} (
        \`key\` varchar(512) not null primary key, fingerprint varchar(255) not null, payment_id varchar(255) not null,
        delivery_id varchar(255) null, source varchar(16) not null, outcome varchar(16) not null, reason text null,
        created_at timestamp(3) not null default current_timestamp(3)
      ) engine=InnoDB default charset=utf8mb4 collate=utf8mb4_bin`);
      const store = new MySqlStore({ pool, tableName: inbox });
      await store.migrate();
      const claim = await store.begin('old:1', 'fp', draft);
      if (claim.state !== 'claimed') throw new Error(`expected a claim, got ${claim.state}`);
      await claim.session.commit({ outcome: 'credited', ...draft });
      const [rows] = await pool.query(`select payment_id from ${inbox}`);
      expect((rows as Array<{ payment_id: string }>)[0]?.payment_id).toBe(longest);
    } finally {
      await pool.query(`drop table if exists ${inbox}, ${inbox}_keys`);
    }
  });
});

describe('autoMigrate: false', () => {
  it('answers a missing table with the store that met it and how to create it', async () => {
    const tableName = uniqueName('absent');
    const failure = await new MySqlStore({ pool, tableName, autoMigrate: false }).begin('k', 'fp').then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failure).toMatch(
      new RegExp(`^MySqlStore: the inbox table ${tableName} .*does not exist; run await store\\.migrate\\(\\)`),
    );
    expect(failure).toMatch(/autoMigrate/);
    const [rows] = await pool.query('select count(*) as n from information_schema.tables where table_name = ?', [
      tableName,
    ]);
    expect(Number((rows as Array<{ n: unknown }>)[0]?.n)).toBe(0);
  });

  it('tells no table from an inbox without its lock slots, and from a table of other columns', async () => {
    const tableName = uniqueName('by_hand');
    const callback = createPool({ uri: DATABASE_URL, connectionLimit: 2 });
    const db = new Kysely({ dialect: new MysqlDialect({ pool: callback }) });
    const stores = (): Array<[string, TransactionalStore<unknown>]> => [
      ['MySqlStore', new MySqlStore({ pool, tableName, autoMigrate: false }) as TransactionalStore<unknown>],
      ['KyselyStore', new KyselyStore({ db, tableName, autoMigrate: false }) as TransactionalStore<unknown>],
    ];
    const failures = () => beginFailures(stores());
    try {
      assertMissingInbox(await failures(), tableName, /docs\/sql\/mysql-inbox\.sql/, /older version|_keys\)/);
      // An inbox made by hand without its lock slots.
      await new MySqlStore({ pool, tableName }).migrate();
      await pool.query(`drop table ${tableName}_keys`);
      for (const [name, failure] of await failures()) {
        expect(failure).toMatch(
          new RegExp(
            `^MissingTableError: ${name}: the lock slots table ${tableName}_keys does not exist: a table made by hand needs it too`,
          ),
        );
      }
      await pool.query(`drop table ${tableName}`);
      await pool.query(`create table ${tableName} (id varchar(20) primary key, amount int)`);
      await new MySqlStore({ pool, tableName }).migrate().catch(() => undefined); // the slots: the inbox is kept
      for (const [name, failure] of await failures()) {
        expect(failure).toMatch(
          new RegExp(`^InboxTableMismatchError: ${name}: the table ${tableName} is not an inbox the store made`),
        );
      }
    } finally {
      await pool.query(`drop table if exists ${tableName}, ${tableName}_keys`);
      await db.destroy();
    }
  });
});
