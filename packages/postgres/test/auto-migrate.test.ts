import type { TransactionalStore } from '@service-pay/core';
import { autoMigrateCases, type EmptyDatabaseSubject } from '@service-pay/sql/testing';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { KyselyStore } from '../src/kysely.js';
import { openPool, uniqueName } from './support/database.js';
import { postgresFlavour, postgresJsFlavour } from './support/flavours.js';
import { ORM_CLIENTS } from './support/orm-clients.js';

const subjects: Array<() => Promise<EmptyDatabaseSubject>> = [
  ...ORM_CLIENTS.map((make) => async () => {
    const client = await make();
    return { ...client, store: client.store() } as unknown as EmptyDatabaseSubject;
  }),
  async () => (await postgresFlavour()) as unknown as EmptyDatabaseSubject,
  async () => (await postgresJsFlavour()) as unknown as EmptyDatabaseSubject,
];

const dropInbox = async ({ inbox, rows }: EmptyDatabaseSubject) => {
  await rows(`drop table ${inbox} cascade`);
  await rows(`drop function if exists ${inbox}_claim, ${inbox}_take`);
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

  it('is checked: anything but a boolean is refused in the store name', () => {
    expect(() => new PostgresStore({ pool, autoMigrate: 'yes' as never })).toThrow(
      /^PostgresStore: autoMigrate must be/,
    );
  });
});
