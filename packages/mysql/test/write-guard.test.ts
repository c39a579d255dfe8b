import type { TransactionalStore } from '@service-pay/core';
import { type GuardSubject, writeGuardCases } from '@service-pay/sql/testing';
import { bigint, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle } from 'drizzle-orm/mysql2';
import knexFactory, { type Knex } from 'knex';
import { Kysely, MysqlDialect } from 'kysely';
import mysqlCallback from 'mysql2';
import type mysql from 'mysql2/promise';
import { DataSource, EntitySchema } from 'typeorm';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DrizzleStore } from '../src/drizzle.js';
import { MySqlStore } from '../src/index.js';
import { KnexStore } from '../src/knex.js';
import { KyselyStore } from '../src/kysely.js';
import { TypeOrmStore } from '../src/typeorm.js';
import { DATABASE_URL, openPool, uniqueName } from './support/database.js';

/**
 * The write guard's cases (the delivery's transaction is the only way to write) on every mysql2-based
 * client on the machine's MariaDB. Credits are counted in a table without a unique constraint, so a second
 * one would show. (Prisma on MariaDB builds its own pool in @prisma/adapter-mariadb: nothing public to
 * guard, which the store says at construction; its own-transaction and un-awaited cases run in
 * orm-stores.test.ts.)
 */
const marks = uniqueName('guard_marks');
const inboxes: string[] = [];
let admin: mysql.Pool;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  admin = await openPool({ connectionLimit: 4 });
  await admin.query(`create table ${marks} (id bigint auto_increment primary key, marker varchar(255) not null)`);
});
afterAll(async () => {
  for (const close of closers) await close();
  await admin.query(`drop table if exists ${[marks, ...inboxes.flatMap((i) => [i, `${i}_keys`])].join(', ')}`);
  await admin.end();
});

const count = async (marker: string) => {
  const [rows] = await admin.query(`select count(*) as n from ${marks} where marker = ?`, [marker]);
  return Number((rows as Array<{ n: unknown }>)[0]?.n);
};
const insert = `insert into ${marks} (marker) values (?)`;

function inbox(): string {
  const name = uniqueName('guard_inbox');
  inboxes.push(name);
  return name;
}

/** A mysql2 promise pool's own transaction: a checked-out connection, beginTransaction, the mark, commit. */
async function mysql2OwnTransaction(pool: mysql.Pool, marker: string): Promise<void> {
  const connection = await pool.getConnection();
  try {
    await connection.beginTransaction();
    await connection.query(insert, [marker]);
    await connection.commit();
  } finally {
    connection.release();
  }
}

/** The subject, with its store made on first use (after beforeAll opened the client). */
type Subject<Tx> = Omit<GuardSubject<Tx>, 'count'>;

function run<Tx>(name: string, ownTransactions: string[], open: () => Promise<Subject<Tx>>) {
  describe(`${name} on MariaDB: the delivery transaction is the only way to write`, () => {
    let subject: Subject<Tx>;
    beforeAll(async () => {
      subject = await open();
      await (subject.store() as unknown as { migrate(): Promise<void> }).migrate();
    });
    const cases = writeGuardCases<Tx>({
      store: () => subject.store(),
      write: (tx, marker) => subject.write(tx, marker),
      startWrite: (tx, marker) => subject.startWrite(tx, marker),
      get lazy() {
        return subject.lazy;
      },
      globalWrite: (marker) => subject.globalWrite(marker),
      globalRead: () => subject.globalRead(),
      ownTransactions: Object.fromEntries(
        ownTransactions.map((form) => [
          form,
          (marker: string) => (subject.ownTransactions[form] as (m: string) => PromiseLike<unknown>)(marker),
        ]),
      ),
      stepwise: ['pool.getConnection() + beginTransaction()'],
      count,
      poolOfOne: () => (subject.poolOfOne as NonNullable<Subject<Tx>['poolOfOne']>)(),
    });
    for (const c of cases) it(c.name, c.run);
  });
}

run<mysql.PoolConnection>('MySqlStore (mysql2)', ['pool.getConnection() + beginTransaction()'], async () => {
  const pool = await openPool({ connectionLimit: 10 });
  closers.push(() => pool.end());
  const tableName = inbox();
  return {
    store: () => new MySqlStore({ pool, tableName }),
    lazy: false,
    write: (tx, marker) => tx.query(insert, [marker]),
    startWrite: (tx, marker) => tx.query(insert, [marker]),
    globalWrite: (marker) => pool.query(insert, [marker]),
    globalRead: () => pool.query(`select * from ${marks} limit 1`),
    ownTransactions: { 'pool.getConnection() + beginTransaction()': (marker) => mysql2OwnTransaction(pool, marker) },
    poolOfOne: async () => {
      const one = await openPool({ connectionLimit: 1 });
      return {
        store: new MySqlStore({ pool: one, tableName }) as TransactionalStore<mysql.PoolConnection>,
        write: (tx, marker) => tx.query(insert, [marker]),
        globalWrite: (marker) => one.query(insert, [marker]),
        close: () => one.end(),
      };
    },
  };
});

interface Marks {
  [table: string]: { id: number; marker: string };
}

run<import('kysely').Transaction<Marks>>('KyselyStore', ['db.transaction()'], async () => {
  const on = (limit: number) => {
    const pool = mysqlCallback.createPool({ uri: DATABASE_URL, connectionLimit: limit });
    return { pool, db: new Kysely<Marks>({ dialect: new MysqlDialect({ pool }) }) };
  };
  const { pool, db } = on(10);
  closers.push(() => db.destroy());
  const tableName = inbox();
  const write = (db: Kysely<Marks>, marker: string) =>
    db
      .insertInto(marks)
      .values({ marker } as never)
      .execute();
  return {
    store: () => new KyselyStore({ db, pool, tableName }),
    lazy: false,
    write: (tx, marker) => write(tx, marker),
    startWrite: (tx, marker) => write(tx, marker),
    globalWrite: (marker) => write(db, marker),
    globalRead: () => db.selectFrom(marks).selectAll().limit(1).execute(),
    ownTransactions: { 'db.transaction()': (marker) => db.transaction().execute((trx) => write(trx, marker)) },
    poolOfOne: async () => {
      const one = on(1);
      return {
        store: new KyselyStore({ db: one.db, pool: one.pool, tableName }),
        write: (tx, marker) => write(tx, marker),
        // Through the pool: Kysely's own builder asks for a connection before it says its statement (no
        // public hook before), so on a pool its delivery has exhausted it is refused only once it gets one.
        globalWrite: (marker) => one.pool.promise().query(insert, [marker]),
        close: () => one.db.destroy(),
      };
    },
  };
});

const drizzleMarks = mysqlTable(marks, {
  id: bigint('id', { mode: 'number' }).primaryKey().autoincrement(),
  marker: varchar('marker', { length: 255 }).notNull(),
});

function drizzleOn(limit: number) {
  const pool = mysqlCallback.createPool({ uri: DATABASE_URL, connectionLimit: limit });
  return { pool, db: drizzle({ client: pool }) };
}
type DrizzleDb = ReturnType<typeof drizzleOn>['db'];
type DrizzleTx = Parameters<Parameters<DrizzleDb['transaction']>[0]>[0];

run<DrizzleTx>('DrizzleStore (mysql2)', ['db.transaction()'], async () => {
  const { pool, db } = drizzleOn(10);
  closers.push(() => new Promise((resolve) => pool.end(resolve)));
  const tableName = inbox();
  return {
    store: () => new DrizzleStore({ db, tableName }),
    lazy: true,
    write: async (tx, marker) => await tx.insert(drizzleMarks).values({ marker }),
    startWrite: (tx, marker) => tx.insert(drizzleMarks).values({ marker }),
    globalWrite: (marker) => db.insert(drizzleMarks).values({ marker }),
    globalRead: () => db.select().from(drizzleMarks).limit(1),
    ownTransactions: {
      'db.transaction()': (marker) =>
        db.transaction(async (trx) => {
          await trx.insert(drizzleMarks).values({ marker });
        }),
    },
    poolOfOne: async () => {
      const one = drizzleOn(1);
      return {
        store: new DrizzleStore({ db: one.db, tableName }),
        write: async (tx, marker) => await tx.insert(drizzleMarks).values({ marker }),
        globalWrite: (marker) => one.db.insert(drizzleMarks).values({ marker }),
        close: () => new Promise<void>((resolve) => one.pool.end(() => resolve())),
      };
    },
  };
});

run<Knex.Transaction>('KnexStore', ['knex.transaction()', 'knex.transactionProvider()'], async () => {
  const on = (max: number) => knexFactory({ client: 'mysql2', connection: DATABASE_URL, pool: { min: 0, max } });
  const knex = on(10);
  closers.push(() => knex.destroy());
  const tableName = inbox();
  return {
    store: () => new KnexStore({ knex, tableName }),
    lazy: true,
    write: async (tx, marker) => await tx(marks).insert({ marker }),
    startWrite: (tx, marker) => tx(marks).insert({ marker }),
    globalWrite: (marker) => knex(marks).insert({ marker }),
    globalRead: () => knex(marks).select('marker').limit(1),
    ownTransactions: {
      'knex.transaction()': (marker) => knex.transaction(async (trx) => void (await trx(marks).insert({ marker }))),
      'knex.transactionProvider()': async (marker) => {
        const trx = await knex.transactionProvider()();
        await trx(marks).insert({ marker });
        await trx.commit();
      },
    },
    poolOfOne: async () => {
      const one = on(1);
      return {
        store: new KnexStore({ knex: one, tableName }),
        write: async (tx, marker) => await tx(marks).insert({ marker }),
        globalWrite: (marker) => one(marks).insert({ marker }),
        close: () => one.destroy(),
      };
    },
  };
});

const Mark = new EntitySchema<{ id: number; marker: string }>({
  name: 'GuardMark',
  tableName: marks,
  columns: { id: { type: Number, primary: true, generated: true }, marker: { type: String } },
});

run<import('typeorm').EntityManager>(
  'TypeOrmStore',
  ['dataSource.transaction()', 'queryRunner.startTransaction()'],
  async () => {
    const on = (poolSize: number) =>
      new DataSource({ type: 'mysql', url: DATABASE_URL, entities: [Mark], poolSize }).initialize();
    const dataSource = await on(10);
    closers.push(() => dataSource.destroy());
    const tableName = inbox();
    return {
      store: () => new TypeOrmStore({ dataSource, tableName }),
      lazy: false,
      write: (tx, marker) => tx.getRepository(Mark).insert({ marker }),
      startWrite: (tx, marker) => tx.getRepository(Mark).insert({ marker }),
      globalWrite: (marker) => dataSource.getRepository(Mark).insert({ marker }),
      globalRead: () => dataSource.getRepository(Mark).find({ take: 1 }),
      ownTransactions: {
        'dataSource.transaction()': (marker) =>
          dataSource.transaction((manager) => manager.getRepository(Mark).insert({ marker })),
        'queryRunner.startTransaction()': async (marker) => {
          const runner = dataSource.createQueryRunner();
          try {
            await runner.startTransaction();
            await runner.manager.getRepository(Mark).insert({ marker });
            await runner.commitTransaction();
          } finally {
            await runner.release();
          }
        },
      },
      poolOfOne: async () => {
        const one = await on(1);
        return {
          store: new TypeOrmStore({ dataSource: one, tableName }),
          write: (tx, marker) => tx.getRepository(Mark).insert({ marker }),
          globalWrite: (marker) => one.getRepository(Mark).insert({ marker }),
          close: () => one.destroy(),
        };
      },
    };
  },
);
