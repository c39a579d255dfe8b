import { drizzle } from 'drizzle-orm/mysql2';
import { Kysely, MysqlDialect } from 'kysely';
import mariadb from 'mariadb';
import { createPool as createCallbackPool } from 'mysql2';
import mysql from 'mysql2/promise';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DrizzleStore } from '../src/drizzle.js';
import { MySqlStore } from '../src/index.js';
import { KyselyStore } from '../src/kysely.js';
import { PrismaStore } from '../src/prisma.js';

// A store's option mistakes are said in its own name: each store was once a copy whose table-name check
// said "MySqlStore" whichever store it was. No database is reached: these are constructor checks.
const url = 'mysql://nobody@127.0.0.1:1/none';
const pool = mysql.createPool(url);
const callbackPool = createCallbackPool(url);
// A mariadb pool connects only when first used: none of its connections is ever opened here.
const mariadbPool = mariadb.createPool({ host: '127.0.0.1', port: 1, user: 'nobody', connectionLimit: 1 });
afterAll(async () => {
  await pool.end();
  await new Promise((resolve) => callbackPool.end(resolve));
  await mariadbPool.end();
});

// The shape the constructor accepts; its methods are never called here.
const prisma = { $transaction: async () => {}, $queryRawUnsafe: async () => [], $executeRawUnsafe: async () => 0 };

const stores: Array<[string, (tableName: string) => { prune(o: { olderThanMs: number }): Promise<number> }]> = [
  ['MySqlStore', (tableName) => new MySqlStore({ pool, tableName })],
  [
    'KyselyStore',
    (tableName) =>
      new KyselyStore({ db: new Kysely({ dialect: new MysqlDialect({ pool: callbackPool }) }), tableName }),
  ],
  ['DrizzleStore', (tableName) => new DrizzleStore({ db: drizzle({ client: pool }), tableName })],
  ['PrismaStore', (tableName) => new PrismaStore({ prisma: prisma as never, tableName })],
];

describe.each(stores)('%s', (name, make) => {
  it('names itself when the table name is not one, or leaves no room for its lock slots', () => {
    expect(() => make('bad-name')).toThrow(new RegExp(`^${name}: tableName must be`));
    expect(() => make('x'.repeat(62))).toThrow(new RegExp(`^${name}: tableName "x+" is too long`));
  });

  it('names itself when the prune age is not one', async () => {
    await expect(make('service_pay_inbox').prune({ olderThanMs: -1 })).rejects.toThrow(
      new RegExp(`^${name}\\.prune: olderThanMs must be`),
    );
  });
});

describe('PrismaStore and the pool of its adapter', () => {
  const newPrisma = () => ({ ...prisma });
  const unguardedWarnings = (make: () => unknown) => {
    const emit = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      make();
      return emit.mock.calls.filter(([, options]) => (options as { code?: string })?.code === 'SERVICE_PAY_UNGUARDED');
    } finally {
      emit.mockRestore();
    }
  };

  it('without the mariadb pool, says once at construction that prisma writes beside ctx.tx are unguarded', () => {
    const client = newPrisma();
    const said = unguardedWarnings(() => {
      new PrismaStore({ prisma: client as never });
      new PrismaStore({ prisma: client as never });
    });
    expect(said).toHaveLength(1);
    expect(String(said[0]?.[0])).toMatch(/^PrismaStore: .*new PrismaMariaDb\(pool\).*options\.pool/);
  });

  it('given the mariadb pool, guards it and says nothing; anything else as pool is refused', () => {
    expect(unguardedWarnings(() => new PrismaStore({ prisma: newPrisma() as never, pool: mariadbPool }))).toEqual([]);
    expect(() => new PrismaStore({ prisma: newPrisma() as never, pool: pool as never })).toThrow(
      /^PrismaStore: options\.pool must be the mariadb pool your adapter was built on/,
    );
  });
});
