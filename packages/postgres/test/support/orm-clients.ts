import { PrismaPg } from '@prisma/adapter-pg';
import type { OrmClient as SharedOrmClient } from '@service-pay/sql/testing';
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

/** One ORM store as the tests use it; `marksTable` when the client cannot use the marks table made for it (Prisma's schema names its own). */
export type OrmClient<Tx> = SharedOrmClient<Tx> & { marksTable?: string; marks: string };
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
    return {
      name: 'Kysely',
      store: () => new KyselyStore({ db, pool, tableName: inbox }),
      write: async (tx, marker) => {
        await tx.insertInto(marks).values({ marker }).execute();
      },
      slowQuery: (tx, ms) => sql`select pg_sleep(${ms / 1000})`.execute(tx),
      writeInOwnTransaction: (marker) =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto(marks).values({ marker }).execute();
        }),
      close: async () => {}, // the pool is the fixture's
    };
  });
}

function drizzleClient(flavour: 'node-postgres' | 'postgres.js') {
  return withTables<Parameters<Parameters<ReturnType<typeof drizzlePg>['transaction']>[0]>[0]>(
    flavour === 'node-postgres' ? 'drizzle' : 'drizzle_js',
    async (inbox, marks) => {
      const table = pgTable(marks, { marker: text('marker').notNull() });
      const sqlJs = flavour === 'postgres.js' ? postgres(DATABASE_URL, { max: 25, onnotice: () => {} }) : undefined;
      const pool = flavour === 'node-postgres' ? await openPool() : undefined;
      const db = (sqlJs ? drizzlePostgresJs(sqlJs) : drizzlePg(pool as pg.Pool)) as ReturnType<typeof drizzlePg>;
      return {
        name: `Drizzle (${flavour})`,
        store: () => new DrizzleStore({ db, tableName: inbox }),
        write: async (tx, marker) => {
          await tx.insert(table).values({ marker });
        },
        slowQuery: (tx, ms) => tx.execute(sqlTag(ms)),
        writeInOwnTransaction: (marker) =>
          db.transaction(async (trx) => {
            await trx.insert(table).values({ marker });
          }),
        close: async () => {
          await sqlJs?.end({ timeout: 5 });
          await pool?.end();
        },
      };
    },
  );
}

const sqlTag = (ms: number) => drizzleSql`select pg_sleep(${ms / 1000})`;

export const drizzleNodePostgresClient = () => drizzleClient('node-postgres');
export const drizzlePostgresJsClient = () => drizzleClient('postgres.js');

export function knexClient() {
  return withTables<import('knex').Knex.Transaction>('knex', async (inbox, marks) => {
    const knex = knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 25 } });
    return {
      name: 'Knex',
      store: () => new KnexStore({ knex, tableName: inbox }),
      write: async (tx, marker) => {
        await tx(marks).insert({ marker });
      },
      slowQuery: (tx, ms) => tx.raw('select pg_sleep(?)', [ms / 1000]),
      raw: (tx, text) => tx.raw(text),
      writeInOwnTransaction: (marker) =>
        knex.transaction(async (trx) => {
          await trx(marks).insert({ marker });
        }),
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
    const dataSource = await new DataSource({
      type: 'postgres',
      url: DATABASE_URL,
      entities: [Mark],
      poolSize: 25,
    }).initialize();
    return {
      name: 'TypeORM',
      store: () => new TypeOrmStore({ dataSource, tableName: inbox }),
      write: async (tx, marker) => {
        await tx.getRepository(Mark).insert({ marker });
      },
      slowQuery: (tx, ms) => tx.query('select pg_sleep($1)', [ms / 1000]),
      raw: (tx, text) => tx.query(text),
      writeInOwnTransaction: (marker) =>
        dataSource.transaction(async (manager) => {
          await manager.getRepository(Mark).insert({ marker });
        }),
      close: () => dataSource.destroy(),
    };
  });
}

/** The generated client's shape as these tests use it (test/prisma/schema.prisma). */
interface PrismaMarks extends PrismaLike {
  mark: { create(args: { data: { marker: string } }): Promise<unknown> };
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
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: DATABASE_URL, max: 25 }) });
    return {
      name: 'Prisma',
      marksTable: 'service_pay_prisma_marks',
      store: () => new PrismaStore({ prisma, tableName: inbox }),
      write: async (tx, marker) => {
        await tx.mark.create({ data: { marker } });
      },
      slowQuery: async (tx, ms) => await tx.$queryRawUnsafe('select 1 as slept from pg_sleep($1::float8)', ms / 1000),
      raw: (tx, text) => tx.$queryRawUnsafe(text),
      writeInOwnTransaction: (marker) =>
        prisma.$transaction(async (trx: PrismaTx) => {
          await trx.mark.create({ data: { marker } });
        }),
      close: () => prisma.$disconnect(),
    };
  });
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
