/**
 * Each ORM store against the same client's hand-rolled transaction, on the machine's PostgreSQL, with
 * the SQL contest of @service-pay/test-kit (same deliveries, rounds, interleaving and ratios). Both verify the
 * signature and credit the order with the client; then
 *   store:       the pipeline in the client's own transaction (BEGIN; the claim that takes the key and
 *                writes the inbox row; the UPDATE through ctx.tx; COMMIT);
 *   hand-rolled: the client's own transaction with INSERT INTO inbox ... ON CONFLICT DO NOTHING RETURNING,
 *                then the UPDATE when it inserted: the shortest exactly-once transaction a careful user
 *                writes (it waits behind a concurrent delivery instead of answering 409, and keeps no
 *                rejection row).
 * Round trips: every statement the client sends, BEGIN and COMMIT included, counted on its node-postgres
 * connections (TypeORM keeps its pool to itself: counted by its query log, which sees the same statements).
 * Targets: >= 0.95x fresh (at equal round trips a store may cost a little client work over the hand-rolled
 * transaction, never more), >= 1.0x duplicates (a duplicate must never cost more than the work it saves).
 *
 *   node --import tsx bench/orm-stores.bench.ts        (DATABASE_URL for another server)
 */
import { PrismaPg } from '@prisma/adapter-pg';
import {
  type ContestCheck,
  contestant,
  type Database,
  type InboxRow,
  queryCountingLogger,
  runContests,
  runWhenMain,
} from '@service-pay/bench-kit/sql-contest';
import { DrizzleStore } from '@service-pay/postgres/drizzle';
import { KnexStore } from '@service-pay/postgres/knex';
import { KyselyStore } from '@service-pay/postgres/kysely';
import { type PrismaLike, PrismaStore } from '@service-pay/postgres/prisma';
import { TypeOrmStore } from '@service-pay/postgres/typeorm';
import { sql as drizzleSql, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { boolean, pgTable, text } from 'drizzle-orm/pg-core';
import knexFactory from 'knex';
import { Kysely, sql as kyselySql, PostgresDialect } from 'kysely';
import pg from 'pg';
import { DataSource } from 'typeorm';
import generatePrismaClient from '../test/prisma/generate.js';

const URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TARGETS = { fresh: 0.95, duplicate: 1.0 };
/** Both contestants commit the same way; without a disk flush per commit the round trips show. */
const NO_FLUSH = '-c synchronous_commit=off';

/** The hand-rolled inbox row, with `$n` placeholders (Knex: `?`). */
const insertInbox = (tag: string, placeholder: (n: number) => string = (n) => `$${n}`) =>
  `INSERT INTO bench_hand_inbox_${tag} (key, fingerprint, payment_id, delivery_id, source, outcome)
   VALUES (${[1, 2, 3, 4].map(placeholder).join(', ')}, 'webhook', 'credited') ON CONFLICT DO NOTHING RETURNING key`;

function countQueries(client: { query: (...args: never[]) => unknown }, count: () => void): void {
  const query = client.query;
  client.query = function counted(this: unknown, ...args: never[]) {
    count();
    return query.apply(this, args);
  } as typeof client.query;
}

/**
 * What every contestant starts from: a counter of query messages, a node-postgres pool that counts each
 * one, and plain SQL outside the contest through a pool of its own (not counted).
 */
function counted() {
  let queries = 0;
  const count = () => {
    queries++;
  };
  const countingPool = () => {
    const pool = new pg.Pool({ connectionString: URL, max: 4, options: NO_FLUSH });
    pool.on('connect', (client) => countQueries(client, count));
    return pool;
  };
  const setupPool = new pg.Pool({ connectionString: URL, max: 2 });
  const setup = {
    exec: async (text: string, params?: unknown[]) => {
      await setupPool.query(text, params);
    },
    end: () => setupPool.end(),
  };
  return { count, roundTrips: () => queries, countingPool, setup };
}

async function kysely(tag: string): Promise<Database> {
  const { countingPool, roundTrips, setup } = counted();
  // biome-ignore lint/suspicious/noExplicitAny: table names carry the run's tag
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: countingPool() }) });
  return contestant({
    name: 'Kysely 0.29 on node-postgres, PostgreSQL (loopback)',
    roundTrips,
    store: new KyselyStore({ db, tableName: `bench_inbox_${tag}` }),
    credit: (tx, orderNo) =>
      kyselySql`UPDATE ${kyselySql.table(`bench_orders_${tag}`)} SET paid = true WHERE order_no = ${orderNo}`.execute(
        tx,
      ),
    transaction: (work) => db.transaction().execute(work),
    insertInbox: async (trx, [k, f, p, d]) => {
      const inserted = await kyselySql`INSERT INTO ${kyselySql.table(`bench_hand_inbox_${tag}`)}
        (key, fingerprint, payment_id, delivery_id, source, outcome)
        VALUES (${k}, ${f}, ${p}, ${d}, 'webhook', 'credited') ON CONFLICT DO NOTHING RETURNING key`.execute(trx);
      return inserted.rows.length > 0;
    },
    setup,
    close: () => db.destroy(),
  });
}

async function drizzleOrm(tag: string): Promise<Database> {
  const { countingPool, roundTrips, setup } = counted();
  const pool = countingPool();
  const db = drizzle(pool);
  const orders = pgTable(`bench_orders_${tag}`, { orderNo: text('order_no').primaryKey(), paid: boolean('paid') });
  type Tx = Parameters<Parameters<typeof db.transaction>[0]>[0];
  return contestant<Tx>({
    name: 'Drizzle 0.45 on node-postgres, PostgreSQL (loopback)',
    roundTrips,
    store: new DrizzleStore({ db, tableName: `bench_inbox_${tag}` }),
    credit: (tx, orderNo) => tx.update(orders).set({ paid: true }).where(eq(orders.orderNo, orderNo)),
    transaction: (work) => db.transaction(work),
    insertInbox: async (trx, [k, f, p, d]) => {
      const inserted = await trx.execute(drizzleSql`INSERT INTO ${drizzleSql.raw(`bench_hand_inbox_${tag}`)}
        (key, fingerprint, payment_id, delivery_id, source, outcome)
        VALUES (${k}, ${f}, ${p}, ${d}, 'webhook', 'credited') ON CONFLICT DO NOTHING RETURNING key`);
      return inserted.rows.length > 0;
    },
    setup,
    close: () => pool.end(),
  });
}

async function knex(tag: string): Promise<Database> {
  const { count, roundTrips, setup } = counted();
  const db = knexFactory({
    client: 'pg',
    connection: { connectionString: URL, options: NO_FLUSH },
    pool: {
      min: 0,
      max: 4,
      afterCreate: (connection: pg.Client, done: (error: Error | null, connection: pg.Client) => void) => {
        countQueries(connection, count);
        done(null, connection);
      },
    },
  });
  return contestant<typeof db>({
    name: 'Knex 3.3, PostgreSQL (loopback)',
    roundTrips,
    store: new KnexStore({ knex: db, tableName: `bench_inbox_${tag}` }),
    credit: (tx, orderNo) => tx(`bench_orders_${tag}`).where({ order_no: orderNo }).update({ paid: true }),
    transaction: (work) => db.transaction(work),
    insertInbox: async (trx, row: InboxRow) =>
      (
        await trx.raw(
          insertInbox(tag, () => '?'),
          row,
        )
      ).rows.length > 0,
    setup,
    close: () => db.destroy(),
  });
}

async function typeOrm(tag: string): Promise<Database> {
  // TypeORM keeps its pool to itself: counted by its query log, which sees the same statements.
  const { count, roundTrips, setup } = counted();
  const dataSource = await new DataSource({
    type: 'postgres',
    url: URL,
    poolSize: 4,
    extra: { options: NO_FLUSH },
    logging: true,
    logger: queryCountingLogger(count),
  }).initialize();
  type Tx = { query(text: string, params: unknown[]): Promise<unknown> };
  return contestant<Tx>({
    name: 'TypeORM 1.1, PostgreSQL (loopback)',
    roundTrips,
    store: new TypeOrmStore({ dataSource, tableName: `bench_inbox_${tag}` }),
    credit: (tx, orderNo) => tx.query(`UPDATE bench_orders_${tag} SET paid = true WHERE order_no = $1`, [orderNo]),
    transaction: (work) => dataSource.transaction(work),
    insertInbox: async (manager, row) => ((await manager.query(insertInbox(tag), row)) as unknown[]).length > 0,
    setup,
    close: () => dataSource.destroy(),
  });
}

/** What the bench uses of the generated Prisma client. */
interface PrismaBench extends PrismaLike {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $disconnect(): Promise<void>;
}

async function prisma(tag: string): Promise<Database> {
  const { countingPool, roundTrips, setup } = counted();
  generatePrismaClient();
  const generated = '../test/prisma/generated/client.ts'; // generated just above, outside git
  const { PrismaClient } = (await import(/* @vite-ignore */ generated)) as {
    PrismaClient: new (options: { adapter: PrismaPg }) => PrismaBench;
  };
  // The adapter on a pool given to the store too, as the README sets it up (the store guards the pool).
  const pool = countingPool();
  const client = new PrismaClient({ adapter: new PrismaPg(pool) });
  return contestant<PrismaBench>({
    name: 'Prisma 7.10 on adapter-pg, PostgreSQL (loopback)',
    roundTrips,
    store: new PrismaStore({ prisma: client, pool, tableName: `bench_inbox_${tag}` }),
    // Raw SQL for the credit in both contestants: the orders table's name carries the run's tag, which a
    // Prisma model cannot.
    credit: (tx, orderNo) =>
      tx.$executeRawUnsafe(`UPDATE bench_orders_${tag} SET paid = true WHERE order_no = $1`, orderNo),
    transaction: (work) => client.$transaction(work),
    insertInbox: async (tx, row) => (await tx.$executeRawUnsafe(insertInbox(tag), ...row)) > 0,
    setup,
    close: async () => {
      await client.$disconnect(); // the adapter leaves a pool it was given to its owner
      await pool.end();
    },
  });
}

/**
 * Runs every ORM's contest and prints them.
 *
 * @example
 * ```ts
 * import { run } from '../packages/postgres/bench/orm-stores.bench.ts';
 * const checks = await run();
 * ```
 */
export function run(): Promise<ContestCheck[]> {
  return runContests(
    [
      ['PrismaStore', prisma],
      ['DrizzleStore', drizzleOrm],
      ['KyselyStore', kysely],
      ['KnexStore', knex],
      ['TypeOrmStore', typeOrm],
    ],
    TARGETS,
  );
}

await runWhenMain(import.meta.url, run);
