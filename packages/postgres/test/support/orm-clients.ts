import { PrismaPg } from '@prisma/adapter-pg';
import { type GuardSubject, type OrmClient as SharedOrmClient, typeOrmGuardWrites } from '@service-pay/sql/testing';
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { pgTable, text } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import knexFactory from 'knex';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import postgres from 'postgres';
import { DataSource, EntitySchema } from 'typeorm';
import { DrizzleStore } from '../../src/drizzle.js';
import { KnexStore } from '../../src/knex.js';
import { KyselyStore } from '../../src/kysely.js';
import { type PrismaLike, PrismaStore } from '../../src/prisma.js';
import { TypeOrmStore } from '../../src/typeorm.js';
import { DATABASE_URL, openPool, uniqueName } from './database.js';

/**
 * One ORM store as the tests use it; `marksTable` when the client cannot use the marks table made for it
 * (Prisma's schema names its own), and what the write guard's cases need beside (see `writeGuardCases`).
 */
export type OrmClient<Tx> = SharedOrmClient<Tx> & {
  marksTable?: string;
  marks: string;
  guard: Omit<GuardSubject<Tx>, 'store' | 'write' | 'count'>;
};
export type { OrmStore } from '@service-pay/sql/testing';

type Marks = Record<string, { marker: string }>;

/** Creates the inbox and marks tables through a pg pool; `finish` builds the client around them. */
async function withTables<Tx>(
  label: string,
  finish: (
    inbox: string,
    marks: string,
    pool: pg.Pool,
  ) => Promise<Omit<OrmClient<Tx>, 'inbox' | 'marks' | 'count' | 'rows'>>,
): Promise<OrmClient<Tx>> {
  const pool = await openPool();
  const inbox = uniqueName(`${label}_inbox`);
  const marks = uniqueName(`${label}_marks`);
  await pool.query(`create table ${marks} (id serial primary key, marker text not null)`);
  const client = await finish(inbox, marks, pool);
  await client.store().migrate();
  const table = client.marksTable ?? marks;
  return {
    ...client,
    inbox,
    marks: table,
    count: async (marker) =>
      Number((await pool.query(`select count(*)::int as n from ${table} where marker = $1`, [marker])).rows[0].n),
    rows: async (text, params) => (await pool.query(text, params)).rows,
    close: async () => {
      await client.close();
      await pool.query(`drop table if exists ${marks}, ${inbox}`);
      await pool.end();
    },
  };
}

export function kyselyClient() {
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

function drizzleClient(flavour: 'node-postgres' | 'postgres.js') {
  return withTables<DrizzleTx>(flavour === 'node-postgres' ? 'drizzle' : 'drizzle_js', async (inbox, marks) => {
    const table = pgTable(marks, { marker: text('marker').notNull() });
    const sqlJs = flavour === 'postgres.js' ? postgres(DATABASE_URL, { max: 25, onnotice: () => {} }) : undefined;
    const pool = flavour === 'node-postgres' ? await openPool() : undefined;
    const db = (sqlJs ? drizzlePostgresJs(sqlJs) : drizzlePg(pool as pg.Pool)) as ReturnType<typeof drizzlePg>;
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
      writeInOwnTransaction: ownTransaction,
      guard: {
        raw: {
          dialect: 'postgres',
          table: marks,
          send: (text) => db.execute(drizzleSql.raw(text)),
          textOnly: flavour === 'postgres.js',
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
          const onOne = (oneJs ? drizzlePostgresJs(oneJs) : drizzlePg(onePool as pg.Pool)) as typeof db;
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

export const drizzleNodePostgresClient = () => drizzleClient('node-postgres');
export const drizzlePostgresJsClient = () => drizzleClient('postgres.js');

export function knexClient() {
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

export function typeOrmClient() {
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
export function prismaClient() {
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

/** The app's own transaction on a node-postgres pool: a checked-out client, BEGIN, the mark, COMMIT. */
async function pgOwnTransaction(pool: pg.Pool, marks: string, marker: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`insert into ${marks} (marker) values ($1)`, [marker]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Every ORM client, for the suites that run on each. */
export const ORM_CLIENTS = [
  kyselyClient,
  drizzleNodePostgresClient,
  drizzlePostgresJsClient,
  knexClient,
  typeOrmClient,
  prismaClient,
] as const;
