import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import type { TransactionalStore } from '@service-pay/core';
import { createWebhookHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { type GuardSubject, namedOwnTransactions, typeOrmGuardWrites, writeGuardCases } from '@service-pay/sql/testing';
import { sql as drizzleSql } from 'drizzle-orm';
import { bigint, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle } from 'drizzle-orm/mysql2';
import knexFactory, { type Knex } from 'knex';
import { Kysely, MysqlDialect, sql } from 'kysely';
import mariadb from 'mariadb';
import mysqlCallback from 'mysql2';
import type mysql from 'mysql2/promise';
import { DataSource, EntitySchema } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DrizzleStore } from '../src/drizzle.js';
import { MySqlStore } from '../src/index.js';
import { KnexStore } from '../src/knex.js';
import { KyselyStore } from '../src/kysely.js';
import { type PrismaLike, PrismaStore } from '../src/prisma.js';
import { TypeOrmStore } from '../src/typeorm.js';
import { DATABASE_URL, mariadbPoolConfig, openPool, uniqueName } from './support/database.js';

/**
 * The write guard's cases (the delivery's transaction is the only way to write) on every client on the
 * machine's MariaDB: the mysql2-based ones, and Prisma on @prisma/adapter-mariadb built on a `mariadb` pool
 * the store is given too. Credits are counted in a table without a unique constraint, so a second one
 * would show.
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

/** The clients whose app-client statements only the text check judges (no read-only run on the server). */
const TEXT_ONLY = new Set<string>([]);

/** The client-API talk-around forms each subject names (listed before the client opens). */
const API_FORMS: Record<string, string[]> = {
  'MySqlStore (mysql2)': [
    'pool.execute(/*! insert */)',
    'pool.execute(select credit_fn(?))',
    'conn.query({ sql: select credit_fn(?) })',
    'getConnection() + conn.prepare(insert) + stmt.execute()',
    'getConnection() + conn.prepare(select credit_fn(?)) + stmt.execute()',
  ],
};

/** A mysql2 checked-out connection's prepared statement of `text`, executed with `marker`. */
async function prepared(pool: mysql.Pool, text: string, marker: string): Promise<unknown> {
  const connection = await pool.getConnection();
  try {
    const statement = await connection.prepare(text);
    try {
      return await statement.execute([marker]);
    } finally {
      await statement.close();
    }
  } finally {
    connection.release();
  }
}

/** The subject, with its store made on first use (after beforeAll opened the client); `count` if not `marks`. */
type Subject<Tx> = Omit<GuardSubject<Tx>, 'count'> & { count?: GuardSubject<Tx>['count'] };

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
      ownTransactions: namedOwnTransactions(ownTransactions, () => subject.ownTransactions),
      stepwise: ['pool.getConnection() + beginTransaction()'],
      count: (marker) => (subject.count ?? count)(marker),
      poolOfOne: () => (subject.poolOfOne as NonNullable<Subject<Tx>['poolOfOne']>)(),
      raw: {
        dialect: 'mysql',
        get table() {
          return subject?.raw?.table ?? '';
        },
        send: (text) => (subject.raw as NonNullable<Subject<Tx>['raw']>).send(text),
        textOnly: TEXT_ONLY.has(name),
      },
      apiForms: Object.fromEntries(
        (API_FORMS[name] ?? []).map((form) => [
          form,
          (marker: string) => ((subject.apiForms ?? {})[form] as (m: string) => PromiseLike<unknown>)(marker),
        ]),
      ),
      ...(name === 'MySqlStore (mysql2)'
        ? { callbackPool: () => (subject.callbackPool as NonNullable<Subject<Tx>['callbackPool']>)() }
        : {}),
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
    raw: { dialect: 'mysql', table: marks, send: (text) => pool.query(text) },
    apiForms: {
      'pool.execute(/*! insert */)': (marker) =>
        pool.execute(`/*! insert into ${marks} (marker) values (?) */`, [marker]),
      'pool.execute(select credit_fn(?))': (marker) => pool.execute(`select ${marks}_credit(?)`, [marker]),
      'conn.query({ sql: select credit_fn(?) })': async (marker) => {
        const connection = await pool.getConnection();
        try {
          return await connection.query({ sql: `select ${marks}_credit(?)`, values: [marker] });
        } finally {
          connection.release();
        }
      },
      'getConnection() + conn.prepare(insert) + stmt.execute()': (marker) => prepared(pool, insert, marker),
      'getConnection() + conn.prepare(select credit_fn(?)) + stmt.execute()': (marker) =>
        prepared(pool, `select ${marks}_credit(?)`, marker),
    },
    callbackPool: async () => {
      const two = await openPool({ connectionLimit: 2 });
      return {
        store: new MySqlStore({ pool: two, tableName }) as TransactionalStore<mysql.PoolConnection>,
        write: (tx, marker) => tx.query(insert, [marker]),
        callbackQuery: (text, callback) => void two.pool.query(text, (error: unknown) => callback(error)),
        close: () => two.end(),
      };
    },
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
    raw: { dialect: 'mysql', table: marks, send: (text) => sql.raw(text).execute(db) },
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
    raw: { dialect: 'mysql', table: marks, send: (text) => db.execute(drizzleSql.raw(text)) },
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
    raw: { dialect: 'mysql', table: marks, send: (text) => knex.raw(text) },
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
  ['dataSource.transaction()', 'dataSource.manager.transaction()', 'queryRunner.startTransaction()'],
  async () => {
    const on = (poolSize: number) =>
      new DataSource({ type: 'mysql', url: DATABASE_URL, entities: [Mark], poolSize }).initialize();
    const dataSource = await on(10);
    closers.push(() => dataSource.destroy());
    const tableName = inbox();
    return {
      store: () => new TypeOrmStore({ dataSource, tableName }),
      write: (tx, marker) => tx.getRepository(Mark).insert({ marker }),
      ...typeOrmGuardWrites(dataSource, Mark),
      raw: { dialect: 'mysql', table: marks, send: (text: string) => dataSource.query(text) },
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

/** The generated client's shape as these tests use it (test/prisma/schema.prisma). */
interface PrismaMarks extends PrismaLike {
  mark: {
    create(args: { data: { marker: string } }): Promise<unknown>;
    createMany(args: { data: Array<{ marker: string }> }): Promise<unknown>;
    findFirst(): Promise<unknown>;
  };
  $disconnect(): Promise<void>;
}
type PrismaTx = Omit<PrismaMarks, '$transaction' | '$disconnect'>;

run<PrismaTx>(
  'PrismaStore (@prisma/adapter-mariadb on a mariadb pool)',
  ['prisma.$transaction(fn)', 'prisma.$transaction([...])', 'pool.getConnection() + beginTransaction()'],
  async () => {
    // The client is generated by the project's global setup (test/prisma/generate.ts), outside git.
    const generated = './prisma/generated/client.ts';
    const { PrismaClient } = (await import(/* @vite-ignore */ generated)) as {
      PrismaClient: new (options: { adapter: PrismaMariaDb }) => PrismaMarks;
    };
    // The table the schema names, shared with orm-stores.test.ts: markers are unique per case.
    const table = 'service_pay_prisma_marks';
    await admin.query(
      `create table if not exists ${table} (id bigint auto_increment primary key, marker varchar(255) not null)`,
    );
    const on = (connectionLimit: number) => {
      const pool = mariadb.createPool(mariadbPoolConfig(connectionLimit));
      return { pool, prisma: new PrismaClient({ adapter: new PrismaMariaDb(pool) }) };
    };
    const close = async ({ pool, prisma }: ReturnType<typeof on>) => {
      await prisma.$disconnect();
      await pool.end();
    };
    const app = on(10);
    const { pool, prisma } = app;
    closers.push(() => close(app));
    const tableName = inbox();
    const create = (client: PrismaTx, marker: string) => client.mark.create({ data: { marker } });
    return {
      store: () => new PrismaStore({ prisma, pool, tableName }),
      lazy: true,
      write: async (tx, marker) => await create(tx, marker),
      startWrite: (tx, marker) => create(tx, marker),
      // On MySQL Prisma runs one `create` in a transaction of its own (the INSERT, then a read of the row).
      globalWrite: (marker) => create(prisma, marker),
      globalRead: () => prisma.mark.findFirst(),
      raw: { dialect: 'mysql', table, send: (text) => prisma.$executeRawUnsafe(text) },
      ownTransactions: {
        'prisma.$transaction(fn)': (marker) => prisma.$transaction((trx: PrismaTx) => create(trx, marker)),
        'prisma.$transaction([...])': (marker) =>
          (prisma.$transaction as unknown as (queries: unknown[]) => Promise<unknown>)([create(prisma, marker)]),
        'pool.getConnection() + beginTransaction()': async (marker) => {
          const connection = await pool.getConnection();
          try {
            await connection.beginTransaction();
            await connection.query(`insert into ${table} (marker) values (?)`, [marker]);
            await connection.commit();
          } finally {
            await connection.release();
          }
        },
      },
      count: async (marker) => {
        const [rows] = await admin.query(`select count(*) as n from ${table} where marker = ?`, [marker]);
        return Number((rows as Array<{ n: unknown }>)[0]?.n);
      },
      poolOfOne: async () => {
        const one = on(1);
        return {
          store: new PrismaStore({ prisma: one.prisma, pool: one.pool, tableName }),
          write: async (tx, marker) => await create(tx, marker),
          // A `create` first checks a connection out for Prisma's own transaction, which on a pool the
          // delivery exhausted waits for the delivery to end; `createMany` is one statement, sent through
          // `pool.execute` and judged at the call.
          globalWrite: (marker) => one.prisma.mark.createMany({ data: [{ marker }] }),
          close: () => close(one),
        };
      },
    };
  },
);

it('nothing of the read-only mode outlives a read: the pool serves the next request read-write', async () => {
  const two = await openPool({ connectionLimit: 2 });
  const secret = 'whsec_read_only_after_0123456789abcdef';
  try {
    const store = new MySqlStore({ pool: two, tableName: inbox() });
    await store.migrate();
    const event = samplePaymentPaidEvent();
    const handle = createWebhookHandler({
      secret,
      store,
      onPaymentPaid: async (paid, ctx) => {
        await two.query('select 1');
        await two.execute('select ?', [1]);
        const connection = await two.getConnection();
        try {
          await connection.query('select 1');
        } finally {
          connection.release();
        }
        await (ctx.tx as mysql.PoolConnection).query(insert, [paid.paymentId]);
      },
    });
    const { body, headers } = signWebhook({ event, secret, deliveryId: 'dl_read_only_after' });
    expect((await handle({ method: 'POST', headers, rawBody: body })).status).toBe(200);
    const [a, b] = await Promise.all([two.getConnection(), two.getConnection()]);
    try {
      for (const connection of [a, b]) {
        const [rows] = await connection.query('select @@tx_read_only as ro');
        expect(Number((rows as Array<{ ro: unknown }>)[0]?.ro)).toBe(0);
        await connection.query(insert, [`after:${event.paymentId}`]);
      }
    } finally {
      a.release();
      b.release();
    }
    expect(await count(`after:${event.paymentId}`)).toBe(2);
  } finally {
    await two.end();
  }
});
