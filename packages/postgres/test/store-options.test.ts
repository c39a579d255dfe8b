import { drizzle } from 'drizzle-orm/node-postgres';
import knexFactory from 'knex';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DrizzleStore } from '../src/drizzle.js';
import { PostgresStore } from '../src/index.js';
import { KnexStore } from '../src/knex.js';
import { KyselyStore } from '../src/kysely.js';
import { PostgresJsStore } from '../src/postgres-js.js';
import { PrismaStore } from '../src/prisma.js';
import { TypeOrmStore } from '../src/typeorm.js';

// A store's option mistakes are said in its own name: each store was once a copy whose table-name check
// said "PostgresStore" whichever store it was. No database is reached: these are constructor checks.
const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', max: 1 });
const knex = knexFactory({ client: 'pg', connection: 'postgres://nobody@127.0.0.1:1/none' });
afterAll(async () => {
  await knex.destroy();
  await pool.end();
});

// Shapes the constructors accept; their methods are never called here.
const prisma = { $transaction: async () => {}, $queryRawUnsafe: async () => [], $executeRawUnsafe: async () => 0 };
const dataSource = {
  transaction: async () => {},
  query: async () => [],
  options: { type: 'postgres' },
  isInitialized: true,
  manager: { transaction: async () => {} },
};
const sql = Object.assign(() => {}, { begin: async () => {}, unsafe: async () => [] });

const stores: Array<[string, (tableName: string) => { prune(o: { olderThanMs: number }): Promise<number> }]> = [
  ['PostgresStore', (tableName) => new PostgresStore({ pool, tableName })],
  ['PostgresJsStore', (tableName) => new PostgresJsStore({ sql: sql as never, tableName })],
  [
    'KyselyStore',
    (tableName) => new KyselyStore({ db: new Kysely({ dialect: new PostgresDialect({ pool }) }), tableName }),
  ],
  ['DrizzleStore', (tableName) => new DrizzleStore({ db: drizzle(pool), tableName })],
  ['KnexStore', (tableName) => new KnexStore({ knex, tableName })],
  ['TypeOrmStore', (tableName) => new TypeOrmStore({ dataSource: dataSource as never, tableName })],
  ['PrismaStore', (tableName) => new PrismaStore({ prisma: prisma as never, tableName })],
];

describe.each(stores)('%s', (name, make) => {
  it('names itself when the table name is not one', () => {
    expect(() => make('bad-name')).toThrow(new RegExp(`^${name}: tableName must be`));
  });

  it('names itself when the prune age is not one', async () => {
    await expect(make('service_pay_inbox').prune({ olderThanMs: -1 })).rejects.toThrow(
      new RegExp(`^${name}\\.prune: olderThanMs must be`),
    );
  });
});

describe('stores on one node-postgres pool', () => {
  it('leave one acquire listener on it, however many there are (no MaxListenersExceededWarning)', () => {
    const shared = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', max: 1 });
    const db = new Kysely({ dialect: new PostgresDialect({ pool: shared }) });
    for (let i = 0; i < 50; i++) new KyselyStore({ db, pool: shared });
    for (let i = 0; i < 50; i++) new DrizzleStore({ db: drizzle(shared) });
    expect(shared.listenerCount('acquire')).toBe(1);
    expect(shared.listenerCount('error')).toBe(1);
  });
});
