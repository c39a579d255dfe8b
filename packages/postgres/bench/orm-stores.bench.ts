/**
 * Each ORM store against the same client's hand-rolled transaction, on the machine's PostgreSQL, with
 * the SQL contest of @service-pay/test-kit (same deliveries, rounds, interleaving and ratios). Both verify the
 * signature and credit the order with the client; then
 *   store:       the pipeline in the client's own transaction (lock, read, savepoint; the UPDATE through
 *                ctx.tx; the inbox INSERT; COMMIT);
 *   hand-rolled: the client's own transaction with INSERT INTO inbox ... ON CONFLICT DO NOTHING RETURNING,
 *                then the UPDATE when it inserted: the shortest exactly-once transaction a careful user
 *                writes (it waits behind a concurrent delivery instead of answering 409, and keeps no
 *                rejection row).
 * Round trips: every statement the client sends, BEGIN and COMMIT included, counted on its node-postgres
 * connections (TypeORM keeps its pool to itself: counted by its query log, which sees the same statements).
 * Targets: >= 0.9x fresh (a store may cost a little over the hand-rolled transaction, never a multiple), >=
 * 1.0x duplicates (a duplicate must never cost more than the work it saves).
 *
 *   node --import tsx bench/orm-stores.bench.ts        (DATABASE_URL for another server)
 */
import { pathToFileURL } from 'node:url';
import { PrismaPg } from '@prisma/adapter-pg';
import { CONTEST_SECRET, type ContestCheck, compareOn, type Database } from '@service-pay/bench-kit/sql-contest';
import { createWebhookHandler, type PaymentPaidEvent, type TransactionalStore } from '@service-pay/core';
import { sql as drizzleSql, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { boolean, pgTable, text } from 'drizzle-orm/pg-core';
import knexFactory from 'knex';
import { Kysely, sql as kyselySql, PostgresDialect } from 'kysely';
import pg from 'pg';
import { DataSource, type Logger } from 'typeorm';
import { DrizzleStore } from '../src/drizzle.js';
import { KnexStore } from '../src/knex.js';
import { KyselyStore } from '../src/kysely.js';
import { type PrismaLike, PrismaStore } from '../src/prisma.js';
import { TypeOrmStore } from '../src/typeorm.js';
import generatePrismaClient from '../test/prisma/generate.js';

const URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TARGETS = { fresh: 0.9, duplicate: 1.0 };
const PER_ROUND = 300;
/** Both contestants commit the same way; without a disk flush per commit the round trips show. */
const NO_FLUSH = '-c synchronous_commit=off';

/** The hand-rolled inbox row, with `$n` placeholders (Knex: `?`). */
const insertInbox = (tag: string, placeholder: (n: number) => string = (n) => `$${n}`) =>
  `INSERT INTO bench_hand_inbox_${tag} (key, fingerprint, payment_id, delivery_id, source, outcome)
   VALUES (${[1, 2, 3, 4].map(placeholder).join(', ')}, 'webhook', 'credited') ON CONFLICT DO NOTHING RETURNING key`;
const inboxValues = (event: PaymentPaidEvent, key: string, deliveryId: string) => [
  key,
  event.amount,
  event.paymentId,
  deliveryId,
];

/** A node-postgres pool whose every query message is counted. */
function countingPool(count: () => void): pg.Pool {
  const pool = new pg.Pool({ connectionString: URL, max: 4, options: NO_FLUSH });
  pool.on('connect', (client) => countQueries(client, count));
  return pool;
}

function countQueries(client: { query: (...args: never[]) => unknown }, count: () => void): void {
  const query = client.query;
  client.query = function counted(this: unknown, ...args: never[]) {
    count();
    return query.apply(this, args);
  } as typeof client.query;
}

/** The contestant: the handler on `store`, crediting through `credit(ctx.tx, orderNo)`. */
async function storeHandler<Tx>(
  store: TransactionalStore<Tx> & { migrate(): Promise<void> },
  credit: (tx: Tx, orderNo: string) => Promise<unknown>,
): Promise<Database['store']> {
  await store.migrate();
  return createWebhookHandler({
    secret: CONTEST_SECRET,
    store,
    onPaymentPaid: async (event, ctx) => {
      await credit((ctx as unknown as { tx: Tx }).tx, event.orderNo);
    },
  });
}

/** Plain SQL outside the contest, through a pool of its own (not counted). */
function setupPool() {
  const pool = new pg.Pool({ connectionString: URL, max: 2 });
  return {
    exec: async (text: string, params?: unknown[]) => {
      await pool.query(text, params);
    },
    end: () => pool.end(),
  };
}

async function kysely(tag: string): Promise<Database> {
  let queries = 0;
  const pool = countingPool(() => queries++);
  const setup = setupPool();
  // biome-ignore lint/suspicious/noExplicitAny: table names carry the run's tag
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  // biome-ignore lint/suspicious/noExplicitAny: as above
  const credit = (tx: Kysely<any>, orderNo: string) =>
    kyselySql`UPDATE ${kyselySql.table(`bench_orders_${tag}`)} SET paid = true WHERE order_no = ${orderNo}`.execute(tx);
  return {
    name: 'Kysely 0.29 on node-postgres, PostgreSQL (loopback)',
    perRound: PER_ROUND,
    roundTrips: () => queries,
    store: await storeHandler(new KyselyStore({ db, tableName: `bench_inbox_${tag}` }), credit),
    hand: (event, key, deliveryId) =>
      db.transaction().execute(async (trx) => {
        const [k, f, p, d] = inboxValues(event, key, deliveryId);
        const inserted = await kyselySql`INSERT INTO ${kyselySql.table(`bench_hand_inbox_${tag}`)}
          (key, fingerprint, payment_id, delivery_id, source, outcome)
          VALUES (${k}, ${f}, ${p}, ${d}, 'webhook', 'credited') ON CONFLICT DO NOTHING RETURNING key`.execute(trx);
        if (inserted.rows.length === 0) return false;
        await credit(trx, event.orderNo);
        return true;
      }),
    exec: setup.exec,
    close: async () => {
      await db.destroy();
      await setup.end();
    },
  };
}

async function drizzleOrm(tag: string): Promise<Database> {
  let queries = 0;
  const pool = countingPool(() => queries++);
  const setup = setupPool();
  const db = drizzle(pool);
  const orders = pgTable(`bench_orders_${tag}`, { orderNo: text('order_no').primaryKey(), paid: boolean('paid') });
  type Tx = Parameters<Parameters<typeof db.transaction>[0]>[0];
  const credit = (tx: Tx, orderNo: string) => tx.update(orders).set({ paid: true }).where(eq(orders.orderNo, orderNo));
  return {
    name: 'Drizzle 0.45 on node-postgres, PostgreSQL (loopback)',
    perRound: PER_ROUND,
    roundTrips: () => queries,
    store: await storeHandler(new DrizzleStore({ db, tableName: `bench_inbox_${tag}` }), credit),
    hand: (event, key, deliveryId) =>
      db.transaction(async (trx) => {
        const [k, f, p, d] = inboxValues(event, key, deliveryId);
        const inserted = await trx.execute(drizzleSql`INSERT INTO ${drizzleSql.raw(`bench_hand_inbox_${tag}`)}
          (key, fingerprint, payment_id, delivery_id, source, outcome)
          VALUES (${k}, ${f}, ${p}, ${d}, 'webhook', 'credited') ON CONFLICT DO NOTHING RETURNING key`);
        if (inserted.rows.length === 0) return false;
        await credit(trx, event.orderNo);
        return true;
      }),
    exec: setup.exec,
    close: async () => {
      await pool.end();
      await setup.end();
    },
  };
}

async function knex(tag: string): Promise<Database> {
  let queries = 0;
  const setup = setupPool();
  const db = knexFactory({
    client: 'pg',
    connection: { connectionString: URL, options: NO_FLUSH },
    pool: {
      min: 0,
      max: 4,
      afterCreate: (connection: pg.Client, done: (error: Error | null, connection: pg.Client) => void) => {
        countQueries(connection, () => queries++);
        done(null, connection);
      },
    },
  });
  const credit = (tx: typeof db, orderNo: string) =>
    tx(`bench_orders_${tag}`).where({ order_no: orderNo }).update({ paid: true });
  return {
    name: 'Knex 3.3, PostgreSQL (loopback)',
    perRound: PER_ROUND,
    roundTrips: () => queries,
    store: await storeHandler(new KnexStore({ knex: db, tableName: `bench_inbox_${tag}` }), credit),
    hand: (event, key, deliveryId) =>
      db.transaction(async (trx) => {
        const inserted = await trx.raw(
          insertInbox(tag, () => '?'),
          inboxValues(event, key, deliveryId),
        );
        if (inserted.rows.length === 0) return false;
        await credit(trx, event.orderNo);
        return true;
      }),
    exec: setup.exec,
    close: async () => {
      await db.destroy();
      await setup.end();
    },
  };
}

async function typeOrm(tag: string): Promise<Database> {
  let queries = 0;
  const setup = setupPool();
  const counter: Logger = {
    logQuery: () => {
      queries++;
    },
    logQueryError: () => {},
    logQuerySlow: () => {},
    logSchemaBuild: () => {},
    logMigration: () => {},
    log: () => {},
  };
  const dataSource = await new DataSource({
    type: 'postgres',
    url: URL,
    poolSize: 4,
    extra: { options: NO_FLUSH },
    logging: true,
    logger: counter,
  }).initialize();
  const credit = (tx: { query(text: string, params: unknown[]): Promise<unknown> }, orderNo: string) =>
    tx.query(`UPDATE bench_orders_${tag} SET paid = true WHERE order_no = $1`, [orderNo]);
  return {
    name: 'TypeORM 1.1, PostgreSQL (loopback)',
    perRound: PER_ROUND,
    roundTrips: () => queries,
    store: await storeHandler(new TypeOrmStore({ dataSource, tableName: `bench_inbox_${tag}` }), credit),
    hand: (event, key, deliveryId) =>
      dataSource.transaction(async (manager) => {
        const inserted = (await manager.query(insertInbox(tag), inboxValues(event, key, deliveryId))) as unknown[];
        if (inserted.length === 0) return false;
        await credit(manager, event.orderNo);
        return true;
      }),
    exec: setup.exec,
    close: async () => {
      await dataSource.destroy();
      await setup.end();
    },
  };
}

/** What the bench uses of the generated Prisma client. */
interface PrismaBench extends PrismaLike {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $disconnect(): Promise<void>;
}

async function prisma(tag: string): Promise<Database> {
  let queries = 0;
  const pool = countingPool(() => queries++);
  const setup = setupPool();
  generatePrismaClient();
  const generated = '../test/prisma/generated/client.ts'; // generated just above, outside git
  const { PrismaClient } = (await import(/* @vite-ignore */ generated)) as {
    PrismaClient: new (options: { adapter: PrismaPg }) => PrismaBench;
  };
  const client = new PrismaClient({ adapter: new PrismaPg(pool) });
  // Raw SQL for the credit in both contestants: the orders table's name carries the run's tag, which a
  // Prisma model cannot.
  const credit = (tx: PrismaBench, orderNo: string) =>
    tx.$executeRawUnsafe(`UPDATE bench_orders_${tag} SET paid = true WHERE order_no = $1`, orderNo);
  return {
    name: 'Prisma 7.10 on adapter-pg, PostgreSQL (loopback)',
    perRound: PER_ROUND,
    roundTrips: () => queries,
    store: await storeHandler(new PrismaStore({ prisma: client, tableName: `bench_inbox_${tag}` }), credit),
    hand: (event, key, deliveryId) =>
      client.$transaction(async (tx: PrismaBench) => {
        const inserted = await tx.$executeRawUnsafe(insertInbox(tag), ...inboxValues(event, key, deliveryId));
        if (inserted === 0) return false;
        await credit(tx, event.orderNo);
        return true;
      }),
    exec: setup.exec,
    close: async () => {
      await client.$disconnect();
      await setup.end();
    },
  };
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
export async function run(): Promise<ContestCheck[]> {
  const checks: ContestCheck[] = [];
  const contests: Array<[string, (tag: string) => Promise<Database>]> = [
    ['PrismaStore', prisma],
    ['DrizzleStore', drizzleOrm],
    ['KyselyStore', kysely],
    ['KnexStore', knex],
    ['TypeOrmStore', typeOrm],
  ];
  const only = process.env.ORM;
  for (const [storeName, make] of contests) {
    if (only !== undefined && !storeName.toLowerCase().startsWith(only.toLowerCase())) continue;
    checks.push(...(await compareOn(make, { storeName, targets: TARGETS })));
  }
  return checks;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const checks = await run();
  process.exitCode = checks.every((c) => c.met) ? 0 : 1;
}
