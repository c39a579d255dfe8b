import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { sql as drizzleSql } from 'drizzle-orm';
import { bigint, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle } from 'drizzle-orm/mysql2';
import { Kysely, MysqlDialect, sql } from 'kysely';
import mysql from 'mysql2';
import type { PoolConnection } from 'mysql2/promise';
import { DrizzleStore } from '../../src/drizzle.js';
import { MySqlStore } from '../../src/index.js';
import { KyselyStore } from '../../src/kysely.js';
import { type PrismaLike, PrismaStore } from '../../src/prisma.js';
import { DATABASE_URL, openPool, uniqueName } from '../support/database.js';

export type { OrmClient, OrmStore } from '@service-pay/sql/testing';

import type { OrmClient } from '@service-pay/sql/testing';

/**
 * The inbox (migrated) and marks tables, and a pool of the test's own to read them with. `fixedMarks`: a
 * marks table named by the client's schema (Prisma's), shared by runs; markers are unique per test.
 */
async function tables(label: string, fixedMarks?: string) {
  const inbox = uniqueName(`${label}_inbox`);
  const marks = fixedMarks ?? uniqueName(`${label}_marks`);
  const admin = await openPool({ connectionLimit: 2 });
  await admin.query(
    `create table if not exists ${marks} (id bigint auto_increment primary key, marker varchar(255) not null)`,
  );
  const rows = async (text: string, params: unknown[] = []) =>
    (await admin.query(text, params))[0] as Array<Record<string, unknown>>;
  const count = async (marker: string) =>
    Number((await rows(`select count(*) as n from ${marks} where marker = ?`, [marker]))[0]?.n);
  const drop = async () => {
    await admin.query(`drop table if exists ${fixedMarks ? '' : `${marks}, `}${inbox}, ${inbox}_keys`);
    await admin.end();
  };
  return { inbox, marks, rows, count, drop };
}

interface Marks {
  [table: string]: { id: number; marker: string };
}

/** mysql2: `MySqlStore` on the app's promise pool, `ctx.tx` a `PoolConnection`. */
export async function mysql2Client(): Promise<OrmClient<PoolConnection>> {
  const t = await tables('m2');
  const pool = await openPool();
  const insert = `insert into ${t.marks} (marker) values (?)`;
  const store = () => new MySqlStore({ pool, tableName: t.inbox });
  await store().migrate();
  return {
    name: 'mysql2',
    inbox: t.inbox,
    store,
    write: async (tx, marker) => {
      await tx.query(insert, [marker]);
    },
    slowQuery: (tx, ms) => tx.query('select sleep(?)', [ms / 1000]),
    statement: (tx, text) => tx.query(text),
    writeInOwnTransaction: async (marker) => {
      const connection = await pool.getConnection();
      try {
        await connection.beginTransaction();
        await connection.query(insert, [marker]);
        await connection.commit();
      } finally {
        connection.release();
      }
    },
    count: t.count,
    rows: t.rows,
    close: async () => {
      await pool.end();
      await t.drop();
    },
  };
}

export async function kyselyClient(): Promise<OrmClient<import('kysely').Transaction<Marks>>> {
  const t = await tables('ky');
  const pool = mysql.createPool({ uri: DATABASE_URL, connectionLimit: 10 });
  const db = new Kysely<Marks>({ dialect: new MysqlDialect({ pool }) });
  const store = () => new KyselyStore({ db, tableName: t.inbox });
  await store().migrate();
  return {
    name: 'Kysely',
    inbox: t.inbox,
    store,
    write: async (tx, marker) => {
      await tx
        .insertInto(t.marks)
        .values({ marker } as never)
        .execute();
    },
    slowQuery: (tx, ms) => sql`select sleep(${ms / 1000})`.execute(tx),
    statement: (tx, text) => sql.raw(text).execute(tx),
    writeInOwnTransaction: (marker) =>
      db.transaction().execute(async (own) => {
        await own
          .insertInto(t.marks)
          .values({ marker } as never)
          .execute();
      }),
    count: t.count,
    rows: t.rows,
    close: async () => {
      await db.destroy();
      await t.drop();
    },
  };
}

export async function drizzleClient() {
  const t = await tables('dz');
  const pool = mysql.createPool({ uri: DATABASE_URL, connectionLimit: 10 });
  const db = drizzle({ client: pool });
  const marks = mysqlTable(t.marks, {
    id: bigint('id', { mode: 'number' }).primaryKey().autoincrement(),
    marker: varchar('marker', { length: 255 }).notNull(),
  });
  const store = () => new DrizzleStore({ db, tableName: t.inbox });
  type Tx = Parameters<Parameters<typeof db.transaction>[0]>[0];
  await store().migrate();
  const client: OrmClient<Tx> = {
    name: 'Drizzle',
    inbox: t.inbox,
    store,
    write: async (tx, marker) => {
      await tx.insert(marks).values({ marker });
    },
    slowQuery: (tx, ms) => tx.execute(drizzleSql`select sleep(${ms / 1000})`),
    statement: (tx, text) => tx.execute(drizzleSql.raw(text)),
    writeInOwnTransaction: (marker) =>
      db.transaction(async (own) => {
        await own.insert(marks).values({ marker });
      }),
    count: t.count,
    rows: t.rows,
    close: async () => {
      await new Promise<void>((resolve) => pool.end(() => resolve()));
      await t.drop();
    },
  };
  return client;
}

/** The generated client's shape as these tests use it (test/prisma/schema.prisma). */
interface PrismaMarks extends PrismaLike {
  mark: { create(args: { data: { marker: string } }): Promise<unknown> };
  $disconnect(): Promise<void>;
}
type PrismaTx = Omit<PrismaMarks, '$transaction' | '$disconnect'>;

/**
 * Prisma 7 on @prisma/adapter-mariadb. The client is generated by the project's global setup
 * (test/prisma/generate.ts) into a folder outside git; it is imported by a computed path so that type
 * checks, which run before any test, do not need it.
 */
export async function prismaClient(): Promise<OrmClient<PrismaTx>> {
  const t = await tables('pr', 'service_pay_prisma_marks');
  const generated = '../prisma/generated/client.ts';
  const { PrismaClient } = (await import(/* @vite-ignore */ generated)) as {
    PrismaClient: new (options: { adapter: PrismaMariaDb }) => PrismaMarks;
  };
  const url = new URL(DATABASE_URL);
  const adapter = new PrismaMariaDb({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
    connectionLimit: 10,
  });
  const prisma = new PrismaClient({ adapter });
  const store = () => new PrismaStore({ prisma, tableName: t.inbox });
  await store().migrate();
  return {
    name: 'Prisma',
    inbox: t.inbox,
    store,
    write: async (tx, marker) => {
      await tx.mark.create({ data: { marker } });
    },
    slowQuery: async (tx, ms) => await tx.$queryRawUnsafe('select sleep(?) as slept', ms / 1000),
    statement: (tx, text) => tx.$executeRawUnsafe(text),
    writeInOwnTransaction: (marker) =>
      prisma.$transaction(async (trx: PrismaTx) => {
        await trx.mark.create({ data: { marker } });
      }),
    count: t.count,
    rows: t.rows,
    close: async () => {
      await prisma.$disconnect();
      await t.drop();
    },
  };
}

/**
 * Every client of the app's a MySQL/MariaDB store is offered on that the shared lists built on `OrmClient`
 * loop over (the SQL stores' case list with core's conformance, round trips, autoMigrate): a new client is
 * its fixture here and one line in this list.
 */
export const MYSQL_CLIENTS = [mysql2Client, kyselyClient, drizzleClient, prismaClient] as const;
