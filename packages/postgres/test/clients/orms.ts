import { PrismaPg } from '@prisma/adapter-pg';
import { typeOrmGuardWrites } from '@service-pay/sql/testing';
import { sql as drizzleSql, type SQL } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { pgTable, text } from 'drizzle-orm/pg-core';
import { drizzle as drizzleOnPostgresJs } from 'drizzle-orm/postgres-js';
import knexFactory, { type Knex } from 'knex';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import type pg from 'pg';
import postgres from 'postgres';
import { DataSource, type EntityManager, EntitySchema } from 'typeorm';
import { DrizzleStore } from '../../src/drizzle.js';
import { KnexStore } from '../../src/knex.js';
import { KyselyStore } from '../../src/kysely.js';
import { type PrismaLike, PrismaStore } from '../../src/prisma.js';
import { TypeOrmStore } from '../../src/typeorm.js';
import { DATABASE_URL, openPool } from '../support/database.js';
import {
  type AppClient,
  type PostgresClient,
  pgGatedStore,
  pgOwnTransaction,
  pgPoolToFill,
  placeholders,
  untyped,
  withTables,
} from './fixture.js';

type Marks = Record<string, { marker: string }>;

function openKysely() {
  return withTables<import('kysely').Transaction<Marks>>('kysely', async (inbox, marks, pool) => {
    const db = new Kysely<Marks>({ dialect: new PostgresDialect({ pool }) });
    // The natural mistake: the ORM's own transaction in the handler.
    const ownTransaction = (marker: string) =>
      db.transaction().execute(async (trx) => {
        await trx.insertInto(marks).values({ marker }).execute();
      });
    return {
      name: 'Kysely',
      store: () => new KyselyStore({ db, pool, tableName: inbox }),
      write: async (tx, marker) => {
        await tx.insertInto(marks).values({ marker }).execute();
      },
      slowQuery: (tx, ms) => sql`select pg_sleep(${ms / 1000})`.execute(tx),
      failingQuery: (tx) => sql`select 1 / 0`.execute(tx),
      statement: (tx, text) => sql.raw(text).execute(tx),
      exec: (tx, text) => sql.raw(text).execute(tx),
      writeInOwnTransaction: ownTransaction,
      guard: {
        raw: { dialect: 'postgres', table: marks, send: (text) => sql.raw(text).execute(db) },
        lazy: false,
        startWrite: (tx, marker) => tx.insertInto(marks).values({ marker }).execute(),
        globalWrite: (marker) => db.insertInto(marks).values({ marker }).execute(),
        globalRead: () => db.selectFrom(marks).selectAll().limit(1).execute(),
        ownTransactions: {
          'db.transaction()': ownTransaction,
          'db.startTransaction()': async (marker) => {
            const trx = await db.startTransaction().execute();
            await trx.insertInto(marks).values({ marker }).execute();
            await trx.commit().execute();
          },
          'pool.connect() + BEGIN': (marker) => pgOwnTransaction(pool, marks, marker),
        },
        poolOfOne: async () => {
          const one = await openPool({ max: 1 });
          const onOne = new Kysely<Marks>({ dialect: new PostgresDialect({ pool: one }) });
          return {
            store: new KyselyStore({ db: onOne, pool: one, tableName: inbox }),
            write: (tx, marker) => tx.insertInto(marks).values({ marker }).execute(),
            globalWrite: (marker) => one.query(`insert into ${marks} (marker) values ($1)`, [marker]),
            close: () => one.end(),
          };
        },
      },
      close: async () => {}, // the pool is the fixture's
    };
  });
}

type DrizzleTx = Parameters<Parameters<ReturnType<typeof drizzlePg>['transaction']>[0]>[0];

function openDrizzle(flavour: 'node-postgres' | 'postgres.js') {
  return withTables<DrizzleTx>(flavour === 'node-postgres' ? 'drizzle' : 'drizzle_js', async (inbox, marks) => {
    const table = pgTable(marks, { marker: text('marker').notNull() });
    const sqlJs = flavour === 'postgres.js' ? postgres(DATABASE_URL, { max: 25, onnotice: () => {} }) : undefined;
    const pool = flavour === 'node-postgres' ? await openPool() : undefined;
    const db = (sqlJs ? drizzleOnPostgresJs(sqlJs) : drizzlePg(pool as pg.Pool)) as ReturnType<typeof drizzlePg>;
    // The natural mistake: the ORM's own transaction in the handler.
    const ownTransaction = (marker: string) =>
      db.transaction(async (trx) => {
        await trx.insert(table).values({ marker });
      });
    return {
      name: `Drizzle (${flavour})`,
      store: () => new DrizzleStore({ db, tableName: inbox }),
      write: async (tx, marker) => {
        await tx.insert(table).values({ marker });
      },
      slowQuery: (tx, ms) => tx.execute(sqlTag(ms)),
      failingQuery: (tx) => tx.execute(drizzleSql`select 1 / 0`),
      // postgres.js fails its transaction on any failed statement, even one rolled back to a savepoint
      // sent as SQL (its own savepoints are sql.savepoint()): no raw savepoint case there.
      ...(flavour === 'node-postgres'
        ? { statement: (tx: DrizzleTx, text: string) => tx.execute(drizzleSql.raw(text)) }
        : {}),
      exec: (tx, text) => tx.execute(drizzleSql.raw(text)),
      writeInOwnTransaction: ownTransaction,
      guard: {
        raw: {
          dialect: 'postgres',
          table: marks,
          send: (text) => db.execute(drizzleSql.raw(text)),
        },
        lazy: true,
        startWrite: (tx, marker) => tx.insert(table).values({ marker }),
        globalWrite: (marker) => db.insert(table).values({ marker }),
        globalRead: () => db.select().from(table).limit(1),
        ownTransactions: {
          'db.transaction()': ownTransaction,
          ...(sqlJs
            ? {
                'sql.begin()': (marker: string) =>
                  sqlJs.begin(async (trx) => {
                    await trx.unsafe(`insert into ${marks} (marker) values ($1)`, [marker]);
                  }),
              }
            : { 'pool.connect() + BEGIN': (marker: string) => pgOwnTransaction(pool as pg.Pool, marks, marker) }),
        },
        poolOfOne: async () => {
          const oneJs = sqlJs ? postgres(DATABASE_URL, { max: 1, onnotice: () => {} }) : undefined;
          const onePool = sqlJs ? undefined : await openPool({ max: 1 });
          const onOne = (oneJs ? drizzleOnPostgresJs(oneJs) : drizzlePg(onePool as pg.Pool)) as typeof db;
          return {
            store: new DrizzleStore({ db: onOne, tableName: inbox }),
            write: async (tx, marker) => await tx.insert(table).values({ marker }),
            globalWrite: (marker) => onOne.insert(table).values({ marker }),
            close: async () => {
              await oneJs?.end({ timeout: 5 });
              await onePool?.end();
            },
          };
        },
      },
      close: async () => {
        await sqlJs?.end({ timeout: 5 });
        await pool?.end();
      },
    };
  });
}

const sqlTag = (ms: number) => drizzleSql`select pg_sleep(${ms / 1000})`;

function openKnex() {
  return withTables<import('knex').Knex.Transaction>('knex', async (inbox, marks) => {
    const knex = knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 25 } });
    // The natural mistake: the ORM's own transaction in the handler.
    const ownTransaction = (marker: string) =>
      knex.transaction(async (trx) => {
        await trx(marks).insert({ marker });
      });
    return {
      name: 'Knex',
      store: () => new KnexStore({ knex, tableName: inbox }),
      write: async (tx, marker) => {
        await tx(marks).insert({ marker });
      },
      slowQuery: (tx, ms) => tx.raw('select pg_sleep(?)', [ms / 1000]),
      failingQuery: (tx) => tx.raw('select 1 / 0'),
      statement: (tx, text) => tx.raw(text),
      raw: (tx, text) => tx.raw(text),
      exec: (tx, text) => tx.raw(text),
      writeInOwnTransaction: ownTransaction,
      guard: {
        raw: { dialect: 'postgres', table: marks, send: (text) => knex.raw(text) },
        lazy: true,
        startWrite: (tx, marker) => tx(marks).insert({ marker }),
        globalWrite: (marker) => knex(marks).insert({ marker }),
        globalRead: () => knex(marks).select('marker').limit(1),
        ownTransactions: {
          'knex.transaction()': ownTransaction,
          'knex.transactionProvider()': async (marker) => {
            const trx = await knex.transactionProvider()();
            await trx(marks).insert({ marker });
            await trx.commit();
          },
        },
        poolOfOne: async () => {
          const one = knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
          return {
            store: new KnexStore({ knex: one, tableName: inbox }),
            write: async (tx, marker) => await tx(marks).insert({ marker }),
            globalWrite: (marker) => one(marks).insert({ marker }),
            close: () => one.destroy(),
          };
        },
      },
      close: () => knex.destroy(),
    };
  });
}

function openTypeOrm() {
  return withTables<import('typeorm').EntityManager>('typeorm', async (inbox, marks) => {
    const Mark = new EntitySchema<{ id: number; marker: string }>({
      name: 'Mark',
      tableName: marks,
      columns: { id: { type: Number, primary: true, generated: true }, marker: { type: String } },
    });
    const dataSource = new DataSource({ type: 'postgres', url: DATABASE_URL, entities: [Mark], poolSize: 25 });
    // Made before the DataSource is initialized, as an app that builds its store at start-up may: the
    // store guards the driver's pool once initialize() resolves (every case here runs on this store).
    const store = new TypeOrmStore({ dataSource, tableName: inbox });
    await dataSource.initialize();
    return {
      name: 'TypeORM',
      store: () => store,
      write: async (tx, marker) => {
        await tx.getRepository(Mark).insert({ marker });
      },
      slowQuery: (tx, ms) => tx.query('select pg_sleep($1)', [ms / 1000]),
      failingQuery: (tx) => tx.query('select 1 / 0'),
      statement: (tx, text) => tx.query(text),
      raw: (tx, text) => tx.query(text),
      exec: (tx, text) => tx.query(text),
      writeInOwnTransaction: (marker) =>
        dataSource.transaction(async (manager) => {
          await manager.getRepository(Mark).insert({ marker });
        }),
      guard: {
        raw: { dialect: 'postgres', table: marks, send: (text) => dataSource.query(text) },
        ...typeOrmGuardWrites(dataSource, Mark),
        poolOfOne: async () => {
          const one = await new DataSource({
            type: 'postgres',
            url: DATABASE_URL,
            entities: [Mark],
            poolSize: 1,
          }).initialize();
          return {
            store: new TypeOrmStore({ dataSource: one, tableName: inbox }),
            write: (tx, marker) => tx.getRepository(Mark).insert({ marker }),
            globalWrite: (marker) => one.getRepository(Mark).insert({ marker }),
            close: () => one.destroy(),
          };
        },
      },
      close: () => dataSource.destroy(),
    };
  });
}

/** The generated client's shape as these tests use it (test/prisma/schema.prisma). */
interface PrismaMarks extends PrismaLike {
  mark: {
    create(args: { data: { marker: string } }): Promise<unknown>;
    findFirst(): Promise<unknown>;
  };
  $disconnect(): Promise<void>;
}
type PrismaTx = Omit<PrismaMarks, '$transaction' | '$disconnect'>;

/**
 * Prisma 7 on @prisma/adapter-pg. The client is generated by the project's global setup
 * (test/prisma/generate.ts) into a folder outside git; it is imported by a computed path so that type
 * checks, which run before any test, do not need it.
 */
function openPrisma() {
  return withTables<PrismaTx>('prisma', async (inbox, _marks, pool) => {
    const generated = '../prisma/generated/client.ts';
    const { PrismaClient } = (await import(/* @vite-ignore */ generated)) as {
      PrismaClient: new (options: { adapter: PrismaPg }) => PrismaMarks;
    };
    await pool.query(
      'create table if not exists service_pay_prisma_marks (id serial primary key, marker text not null)',
    );
    // The adapter on a pool of the app's, given to the store too: the store guards it.
    const prismaPool = await openPool();
    const prisma = new PrismaClient({ adapter: new PrismaPg(prismaPool) });
    const table = 'service_pay_prisma_marks';
    // The natural mistake: the ORM's own transaction in the handler.
    const ownTransaction = (marker: string) =>
      prisma.$transaction(async (trx: PrismaTx) => {
        await trx.mark.create({ data: { marker } });
      });
    return {
      name: 'Prisma',
      marksTable: table,
      store: () => new PrismaStore({ prisma, pool: prismaPool, tableName: inbox }),
      write: async (tx, marker) => {
        await tx.mark.create({ data: { marker } });
      },
      slowQuery: async (tx, ms) => await tx.$queryRawUnsafe('select 1 as slept from pg_sleep($1::float8)', ms / 1000),
      failingQuery: (tx) => tx.$queryRawUnsafe('select 1 / 0'),
      statement: (tx, text) => tx.$executeRawUnsafe(text),
      exec: (tx, text) => tx.$executeRawUnsafe(text),
      raw: (tx, text) => tx.$queryRawUnsafe(text),
      writeInOwnTransaction: ownTransaction,
      guard: {
        raw: { dialect: 'postgres', table, send: (text) => prisma.$executeRawUnsafe(text) },
        lazy: true,
        startWrite: (tx, marker) => tx.mark.create({ data: { marker } }),
        globalWrite: (marker) => prisma.mark.create({ data: { marker } }),
        globalRead: () => prisma.mark.findFirst(),
        ownTransactions: {
          'prisma.$transaction(fn)': ownTransaction,
          'prisma.$transaction([...])': (marker) =>
            (prisma.$transaction as unknown as (queries: unknown[]) => Promise<unknown>)([
              prisma.mark.create({ data: { marker } }),
            ]),
        },
        poolOfOne: async () => {
          const one = await openPool({ max: 1 });
          const onOne = new PrismaClient({ adapter: new PrismaPg(one) });
          return {
            store: new PrismaStore({ prisma: onOne, pool: one, tableName: inbox }),
            write: (tx, marker) => tx.mark.create({ data: { marker } }),
            globalWrite: (marker) => onOne.mark.create({ data: { marker } }),
            close: async () => {
              await onOne.$disconnect();
              await one.end();
            },
          };
        },
      },
      close: async () => {
        await prisma.$disconnect();
        await prismaPool.end();
      },
    };
  });
}

/** Drizzle's `sql` of `text` with `$n` placeholders bound to `params`. */
const drizzleQuery = (text: string, params: unknown[]): SQL =>
  drizzleSql.join(
    placeholders(text).map((part, i) => (i % 2 === 0 ? drizzleSql.raw(part) : drizzleSql`${params[Number(part) - 1]}`)),
  );

/** Kysely: `KyselyStore` on the app's `Kysely` and its node-postgres pool. */
export const kysely: PostgresClient = {
  id: 'kysely',
  name: 'KyselyStore (Kysely on node-postgres)',
  ownTransactions: ['db.transaction()', 'db.startTransaction()', 'pool.connect() + BEGIN'],
  stepwise: ['pool.connect() + BEGIN'],
  open: () => untyped(openKysely()),
  poolToFill: async (tableName) => {
    const one = await openPool({ max: 1 });
    const db = new Kysely({ dialect: new PostgresDialect({ pool: one }) });
    return pgPoolToFill(one, new KyselyStore({ db, pool: one, tableName }), () => one.end());
  },
  gatedStore: async (tableName, patch) => {
    const pool = await openPool({ max: 6 });
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    return pgGatedStore(pool, patch, new KyselyStore({ db, tableName }), () => pool.end());
  },
  app: (_databaseUrl, pool): AppClient => {
    interface Tables {
      credits: { payment_id: string; instance: string };
    }
    const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
    const query = (text: string, params: unknown[]) =>
      sql.join(
        placeholders(text).map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql`${params[Number(part) - 1]}`)),
        sql.raw(''),
      );
    return {
      store: new KyselyStore({ db, pool }),
      exec: (tx, text, params = []) => query(text, params).execute(tx as Transaction<Tables>),
      credit: (tx, paymentId, instance) =>
        (tx as Transaction<Tables>).insertInto('credits').values({ payment_id: paymentId, instance }).execute(),
      close: () => db.destroy(),
    };
  },
};

/** Drizzle ORM on node-postgres: `DrizzleStore` on the app's `drizzle(pool)`. */
export const drizzleNodePostgres: PostgresClient = {
  id: 'drizzle',
  name: 'DrizzleStore (Drizzle ORM on node-postgres)',
  ownTransactions: ['db.transaction()', 'pool.connect() + BEGIN'],
  stepwise: ['pool.connect() + BEGIN'],
  open: () => untyped(openDrizzle('node-postgres')),
  poolToFill: async (tableName) => {
    const one = await openPool({ max: 1 });
    return pgPoolToFill(one, new DrizzleStore({ db: drizzlePg(one), tableName }), () => one.end());
  },
  gatedStore: async (tableName, patch) => {
    const pool = await openPool({ max: 6 });
    return pgGatedStore(pool, patch, new DrizzleStore({ db: drizzlePg(pool), tableName }), () => pool.end());
  },
  app: (_databaseUrl, pool): AppClient => {
    const db = drizzlePg(pool);
    type Tx = Parameters<Parameters<typeof db.transaction>[0]>[0];
    const credits = pgTable('credits', {
      paymentId: text('payment_id').notNull(),
      instance: text('instance').notNull(),
    });
    return {
      store: new DrizzleStore({ db }),
      exec: (tx, text, params = []) => (tx as Tx).execute(drizzleQuery(text, params)),
      credit: (tx, paymentId, instance) => (tx as Tx).insert(credits).values({ paymentId, instance }),
      close: async () => {},
    };
  },
};

/** Drizzle ORM on postgres.js: `DrizzleStore` on the app's `drizzle(sql)`. */
export const drizzlePostgresJs: PostgresClient = {
  id: 'drizzle-postgres-js',
  name: 'DrizzleStore (Drizzle ORM on postgres.js)',
  ownTransactions: ['db.transaction()', 'sql.begin()'],
  open: () => untyped(openDrizzle('postgres.js')),
  // No poolToFill: postgres.js shows no count of its connections, so a full pool is a plain timeout.
  // No gatedStore: postgres.js's connections have no `query` to hold a ROLLBACK at.
};

/** Knex (client 'pg'): `KnexStore` on the app's `knex`. */
export const knex: PostgresClient = {
  id: 'knex',
  name: 'KnexStore (Knex)',
  ownTransactions: ['knex.transaction()', 'knex.transactionProvider()'],
  open: () => untyped(openKnex()),
  poolToFill: async (tableName) => {
    const one = knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
    const tarn = (one.client as { pool: { numUsed(): number; numPendingAcquires(): number } }).pool;
    return {
      store: new KnexStore({ knex: one, tableName }),
      // The app's own transaction, left open, holds tarn's one connection.
      holdPool: async () => {
        let free = () => {};
        const held = new Promise<void>((resolve) => (free = resolve));
        let started = () => {};
        const running = new Promise<void>((resolve) => (started = resolve));
        const transaction = one.transaction(async (trx: Knex.Transaction) => {
          await trx.raw('select 1');
          started();
          await held;
        });
        await running;
        return () => {
          free();
          transaction.catch(() => {});
        };
      },
      idle: () => tarn.numUsed() + tarn.numPendingAcquires() === 0,
      close: () => one.destroy(),
    };
  },
  // Knex makes its pg connections itself (tarn, no pg.Pool): each is patched as it is made.
  gatedStore: async (tableName, patch) => {
    const gated = knexFactory({
      client: 'pg',
      connection: DATABASE_URL,
      pool: {
        min: 0,
        max: 6,
        afterCreate: (connection: object, done: (error: Error | null, connection: object) => void) => {
          patch(connection);
          done(null, connection);
        },
      },
    });
    const tarn = (gated.client as { pool: { numUsed(): number; numPendingAcquires(): number } }).pool;
    return {
      store: new KnexStore({ knex: gated, tableName }),
      idle: () => tarn.numUsed() + tarn.numPendingAcquires() === 0,
      close: () => gated.destroy(),
    };
  },
  app: (databaseUrl): AppClient => {
    const knex = knexFactory({
      client: 'pg',
      connection: databaseUrl,
      pool: { min: 0, max: 20 },
      acquireConnectionTimeout: 2_000,
    });
    return {
      store: new KnexStore({ knex }),
      exec: (tx, text, params = []) => (tx as Knex.Transaction).raw(text.replace(/\$\d+/g, '?'), params as never[]),
      credit: (tx, paymentId, instance) =>
        (tx as Knex.Transaction)('credits').insert({ payment_id: paymentId, instance }),
      close: () => knex.destroy(),
    };
  },
};

/** TypeORM: `TypeOrmStore` on the app's `DataSource`. */
export const typeOrm: PostgresClient = {
  id: 'typeorm',
  name: 'TypeOrmStore (TypeORM)',
  ownTransactions: ['dataSource.transaction()', 'dataSource.manager.transaction()', 'queryRunner.startTransaction()'],
  open: () => untyped(openTypeOrm()),
  poolToFill: async (tableName) => {
    const one = await new DataSource({ type: 'postgres', url: DATABASE_URL, poolSize: 1 }).initialize();
    const master = (one.driver as unknown as { master: pg.Pool }).master;
    return pgPoolToFill(master, new TypeOrmStore({ dataSource: one, tableName }), () => one.destroy());
  },
  gatedStore: async (tableName, patch) => {
    const dataSource = await new DataSource({ type: 'postgres', url: DATABASE_URL, poolSize: 6 }).initialize();
    const master = (dataSource.driver as unknown as { master: pg.Pool }).master;
    return pgGatedStore(master, patch, new TypeOrmStore({ dataSource, tableName }), () => dataSource.destroy());
  },
  app: async (databaseUrl): Promise<AppClient> => {
    const Credit = new EntitySchema<{ id: string; paymentId: string; instance: string }>({
      name: 'Credit',
      tableName: 'credits',
      columns: {
        id: { type: 'bigint', primary: true, generated: true },
        paymentId: { type: String, name: 'payment_id' },
        instance: { type: String },
      },
    });
    const dataSource = await new DataSource({
      type: 'postgres',
      url: databaseUrl,
      entities: [Credit],
      poolSize: 20,
      connectTimeoutMS: 2_000,
    }).initialize();
    return {
      store: new TypeOrmStore({ dataSource }),
      exec: (tx, text, params) => (tx as EntityManager).query(text, params),
      credit: (tx, paymentId, instance) => (tx as EntityManager).getRepository(Credit).insert({ paymentId, instance }),
      close: () => dataSource.destroy(),
    };
  },
};

/** What the fault app uses of the generated Prisma client (test/prisma/schema.prisma). */
interface PrismaCredits extends PrismaLike {
  credit: { create(args: { data: { paymentId: string; instance: string } }): Promise<unknown> };
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $disconnect(): Promise<void>;
}

/** Prisma 7 on @prisma/adapter-pg: `PrismaStore` on the app's client and the adapter's pool. */
export const prisma: PostgresClient = {
  id: 'prisma',
  name: 'PrismaStore (Prisma 7 on @prisma/adapter-pg)',
  ownTransactions: ['prisma.$transaction(fn)', 'prisma.$transaction([...])'],
  open: () => untyped(openPrisma()),
  gatedStore: async (tableName, patch) => {
    const generated = '../prisma/generated/client.ts'; // a computed path: type checks run before it exists
    const { PrismaClient } = (await import(/* @vite-ignore */ generated)) as {
      PrismaClient: new (options: { adapter: PrismaPg }) => PrismaMarks;
    };
    const pool = await openPool({ max: 6 });
    const onPool = new PrismaClient({ adapter: new PrismaPg(pool) });
    return pgGatedStore(pool, patch, new PrismaStore({ prisma: onPool, pool, tableName }), async () => {
      await onPool.$disconnect();
      await pool.end();
    });
  },
  poolToFill: async (tableName) => {
    const generated = '../prisma/generated/client.ts'; // a computed path: type checks run before it exists
    const { PrismaClient } = (await import(/* @vite-ignore */ generated)) as {
      PrismaClient: new (options: { adapter: PrismaPg }) => PrismaMarks;
    };
    const one = await openPool({ max: 1 });
    const onOne = new PrismaClient({ adapter: new PrismaPg(one) });
    return pgPoolToFill(one, new PrismaStore({ prisma: onOne, pool: one, tableName }), async () => {
      await onOne.$disconnect();
      await one.end();
    });
  },
  app: async (databaseUrl): Promise<AppClient> => {
    const generated = '../prisma/generated/client.ts'; // a computed path: type checks run before it exists
    const { PrismaClient } = (await import(/* @vite-ignore */ generated)) as {
      PrismaClient: new (options: { adapter: PrismaPg }) => PrismaCredits;
    };
    const adapter = new PrismaPg({ connectionString: databaseUrl, max: 20, connectionTimeoutMillis: 2_000 });
    const prisma = new PrismaClient({ adapter });
    return {
      store: new PrismaStore({ prisma }),
      exec: (tx, text, params = []) => (tx as PrismaCredits).$executeRawUnsafe(text, ...params),
      credit: (tx, paymentId, instance) => (tx as PrismaCredits).credit.create({ data: { paymentId, instance } }),
      close: () => prisma.$disconnect(),
    };
  },
};
