/**
 * Each MySQL store against the same client's hand-rolled transaction, on the machine's MariaDB, with
 * the SQL contest of @service-pay/test-kit (same deliveries, rounds, interleaving and ratios; `compareOn`).
 * Both verify the signature and credit the order with the client; then
 *   store:       the pipeline in the client's own transaction: BEGIN; the claim (the key's lock slot, and
 *                on MariaDB the inbox row written in the same statement); the UPDATE through ctx.tx;
 *                COMMIT (where the server lacks INSERT ... RETURNING, MySQL 8, the inbox INSERT before it);
 *   hand-rolled: the client's own transaction with INSERT IGNORE INTO inbox, then the UPDATE when it
 *                inserted: the shortest exactly-once transaction a careful user writes (it waits behind a
 *                concurrent delivery instead of answering 409, and keeps no rejection row).
 * Round trips: every statement the client sends, BEGIN and COMMIT included, counted on mysql2's
 * connections. Commits are not flushed to disk during the run (innodb_flush_log_at_trx_commit = 2, put
 * back after): both contestants commit the same way, and the round trips are what shows.
 * Targets: >= 0.8x fresh (the store answers 409 at once where the hand-rolled transaction waits, and names
 * its connection for interrupting a hung handler), >= 1.0x duplicates (a duplicate must never cost more
 * than the work it saves).
 *
 *   node --import tsx bench/orm-stores.bench.ts        (MYSQL_URL for another server)
 */
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import {
  type ContestCheck,
  contestant,
  type Database,
  queryCountingLogger,
  runContests,
  runWhenMain,
} from '@service-pay/bench-kit/sql-contest';
import { MySqlStore } from '@service-pay/mysql';
import { DrizzleStore } from '@service-pay/mysql/drizzle';
import { KnexStore } from '@service-pay/mysql/knex';
import { KyselyStore } from '@service-pay/mysql/kysely';
import { type PrismaLike, PrismaStore } from '@service-pay/mysql/prisma';
import { TypeOrmStore } from '@service-pay/mysql/typeorm';
import { sql as drizzleSql, eq } from 'drizzle-orm';
import { boolean, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle } from 'drizzle-orm/mysql2';
import knexFactory from 'knex';
import { Kysely, sql as kyselySql, MysqlDialect } from 'kysely';
import mariadb from 'mariadb';
import mysql from 'mysql2';
import type { PoolConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import generatePrismaClient from '../test/prisma/generate.js';

const URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const TARGETS = { fresh: 0.8, duplicate: 1.0 };

/** The hand-rolled inbox row. */
const insertInbox = (tag: string) =>
  `INSERT IGNORE INTO bench_hand_inbox_${tag} (\`key\`, fingerprint, payment_id, delivery_id, source, outcome)
   VALUES (?, ?, ?, ?, 'webhook', 'credited')`;
const affected = (result: unknown) => (result as { affectedRows: number }).affectedRows > 0;

/**
 * A counter of statements: a mysql2 pool that counts each, on whichever connection and API sends it;
 * `countOn` for a connection another pool made (Knex's); `count` for a client that only logs its queries.
 */
function counted() {
  let queries = 0;
  const count = () => {
    queries++;
  };
  const countOn = (connection: object) => {
    for (const method of ['query', 'execute'] as const) {
      const original = (connection as Record<string, unknown>)[method] as (...args: unknown[]) => unknown;
      (connection as Record<string, unknown>)[method] = function counted(this: unknown, ...args: unknown[]) {
        queries++;
        return original.apply(this, args);
      };
    }
  };
  const countingPool = () => {
    const pool = mysql.createPool({ uri: URL, connectionLimit: 4 });
    pool.on('connection', countOn);
    return pool;
  };
  return { roundTrips: () => queries, count, countOn, countingPool };
}

/**
 * MySQL's tables of the contest, and plain SQL outside it, through a pool of its own (not counted); its end
 * drops the key table the ORM stores keep beside the inbox.
 */
function setupPool(tag: string) {
  const pool = mysql.createPool({ uri: URL, connectionLimit: 2 }).promise();
  const query = (text: string, params?: unknown[]) => pool.query(text, params);
  const exec = async (text: string, params?: unknown[]) => {
    await query(text, params);
  };
  const dialect: NonNullable<Database['dialect']> = {
    createTables: async () => {
      await exec(
        `CREATE TABLE bench_orders_${tag} (order_no VARCHAR(64) PRIMARY KEY, paid BOOLEAN NOT NULL DEFAULT FALSE)`,
      );
      await exec(`CREATE TABLE bench_hand_inbox_${tag} LIKE bench_inbox_${tag}`);
    },
    addOrders: (_, orderNos) => exec(`INSERT INTO bench_orders_${tag} (order_no) VALUES ?`, [orderNos.map((o) => [o])]),
    dropAll: () =>
      exec(
        `DROP TABLE IF EXISTS bench_orders_${tag}, bench_hand_inbox_${tag}, bench_inbox_${tag}, bench_inbox_${tag}_keys`,
      ),
    serverProcesses: ['mariadbd', 'mysqld'],
  };
  const end = () => pool.end();
  return { query, exec, dialect, end };
}

async function mysql2(tag: string): Promise<Database> {
  const { countingPool, roundTrips } = counted();
  const pool = countingPool().promise();
  return contestant<PoolConnection>({
    name: 'mysql2 3.24, MariaDB 10.11 (loopback)',
    roundTrips,
    store: new MySqlStore({ pool, tableName: `bench_inbox_${tag}` }),
    credit: (tx, orderNo) => tx.query(`UPDATE bench_orders_${tag} SET paid = TRUE WHERE order_no = ?`, [orderNo]),
    transaction: async (work) => {
      const connection = await pool.getConnection();
      try {
        await connection.query('START TRANSACTION');
        const credited = await work(connection);
        await connection.query(credited ? 'COMMIT' : 'ROLLBACK');
        return credited;
      } finally {
        connection.release();
      }
    },
    insertInbox: async (connection, row) => affected((await connection.query(insertInbox(tag), row))[0]),
    setup: setupPool(tag),
    close: () => pool.end(),
  });
}

async function kysely(tag: string): Promise<Database> {
  const { countingPool, roundTrips } = counted();
  // biome-ignore lint/suspicious/noExplicitAny: table names carry the run's tag
  const db = new Kysely<any>({ dialect: new MysqlDialect({ pool: countingPool() }) });
  return contestant({
    name: 'Kysely 0.29 on mysql2, MariaDB 10.11 (loopback)',
    roundTrips,
    store: new KyselyStore({ db, tableName: `bench_inbox_${tag}` }),
    credit: (tx, orderNo) =>
      kyselySql`UPDATE ${kyselySql.table(`bench_orders_${tag}`)} SET paid = TRUE WHERE order_no = ${orderNo}`.execute(
        tx,
      ),
    transaction: (work) => db.transaction().execute(work),
    insertInbox: async (trx, [k, f, p, d]) => {
      const inserted = await kyselySql`INSERT IGNORE INTO ${kyselySql.table(`bench_hand_inbox_${tag}`)}
        (\`key\`, fingerprint, payment_id, delivery_id, source, outcome)
        VALUES (${k}, ${f}, ${p}, ${d}, 'webhook', 'credited')`.execute(trx);
      return Number(inserted.numAffectedRows ?? 0) > 0;
    },
    setup: setupPool(tag),
    close: () => db.destroy(),
  });
}

async function drizzleOrm(tag: string): Promise<Database> {
  const { countingPool, roundTrips } = counted();
  const pool = countingPool();
  const db = drizzle({ client: pool });
  const orders = mysqlTable(`bench_orders_${tag}`, {
    orderNo: varchar('order_no', { length: 64 }).primaryKey(),
    paid: boolean('paid'),
  });
  type Tx = Parameters<Parameters<typeof db.transaction>[0]>[0];
  return contestant<Tx>({
    name: 'Drizzle 0.45 on mysql2, MariaDB 10.11 (loopback)',
    roundTrips,
    store: new DrizzleStore({ db, tableName: `bench_inbox_${tag}` }),
    credit: (tx, orderNo) => tx.update(orders).set({ paid: true }).where(eq(orders.orderNo, orderNo)),
    transaction: (work) => db.transaction(work),
    insertInbox: async (trx, [k, f, p, d]) => {
      const [inserted] = await trx.execute(drizzleSql`INSERT IGNORE INTO ${drizzleSql.raw(`bench_hand_inbox_${tag}`)}
        (\`key\`, fingerprint, payment_id, delivery_id, source, outcome)
        VALUES (${k}, ${f}, ${p}, ${d}, 'webhook', 'credited')`);
      return affected(inserted);
    },
    setup: setupPool(tag),
    close: () => new Promise<void>((resolve) => pool.end(() => resolve())),
  });
}

async function knex(tag: string): Promise<Database> {
  const { countOn, roundTrips } = counted();
  const db = knexFactory({
    client: 'mysql2',
    connection: URL,
    pool: {
      min: 0,
      max: 4,
      afterCreate: (connection: object, done: (error: Error | null, connection: object) => void) => {
        countOn(connection);
        done(null, connection);
      },
    },
  });
  return contestant<typeof db>({
    name: 'Knex 3.3 on mysql2, MariaDB 10.11 (loopback)',
    roundTrips,
    store: new KnexStore({ knex: db, tableName: `bench_inbox_${tag}` }),
    credit: (tx, orderNo) => tx(`bench_orders_${tag}`).where({ order_no: orderNo }).update({ paid: true }),
    transaction: (work) => db.transaction(work),
    insertInbox: async (trx, row) => affected((await trx.raw(insertInbox(tag), row))[0]),
    setup: setupPool(tag),
    close: () => db.destroy(),
  });
}

async function typeOrm(tag: string): Promise<Database> {
  // TypeORM keeps its pool to itself: counted by its query log, which sees the same statements.
  const { count, roundTrips } = counted();
  const dataSource = await new DataSource({
    type: 'mysql',
    url: URL,
    poolSize: 4,
    logging: true,
    logger: queryCountingLogger(count),
  }).initialize();
  type Tx = { query(text: string, params: unknown[]): Promise<unknown> };
  return contestant<Tx>({
    name: 'TypeORM 1.1 on mysql2, MariaDB 10.11 (loopback)',
    roundTrips,
    store: new TypeOrmStore({ dataSource, tableName: `bench_inbox_${tag}` }),
    credit: (tx, orderNo) => tx.query(`UPDATE bench_orders_${tag} SET paid = TRUE WHERE order_no = ?`, [orderNo]),
    transaction: (work) => dataSource.transaction(work),
    insertInbox: async (manager, row) => affected(await manager.query(insertInbox(tag), row)),
    setup: setupPool(tag),
    close: () => dataSource.destroy(),
  });
}

/** What the bench uses of the generated Prisma client (test/prisma/schema.prisma). */
interface PrismaBench extends PrismaLike {
  $disconnect(): Promise<void>;
}

async function prisma(tag: string): Promise<Database> {
  const setup = setupPool(tag);
  generatePrismaClient();
  const generated = '../test/prisma/generated/client.ts'; // generated just above, outside git
  const { PrismaClient } = (await import(/* @vite-ignore */ generated)) as {
    PrismaClient: new (options: { adapter: PrismaMariaDb }) => PrismaBench;
  };
  const url = new globalThis.URL(URL);
  // The adapter on a mariadb pool given to the store too, as the README sets it up (the store guards the
  // pool). Round trips are counted by the server: the bench cannot wrap that driver's connections.
  const pool = mariadb.createPool({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    database: url.pathname.slice(1),
    connectionLimit: 4,
  });
  const adapter = new PrismaMariaDb(pool);
  const client = new PrismaClient({ adapter });
  // The server's count of statements from every client, less the SHOWs that read it: nothing else runs on
  // it while a contestant is timed.
  let shows = 0;
  const questions = async () => {
    shows++;
    const [rows] = (await setup.query("SHOW GLOBAL STATUS LIKE 'Questions'")) as unknown as [Array<{ Value: string }>];
    return Number(rows[0]?.Value) - shows;
  };
  return contestant<PrismaBench>({
    name: 'Prisma 7.10 on adapter-mariadb, MariaDB 10.11 (loopback)',
    roundTrips: questions,
    store: new PrismaStore({ prisma: client, pool, tableName: `bench_inbox_${tag}` }),
    // Raw SQL for the credit in both contestants: the orders table's name carries the run's tag, which a
    // Prisma model cannot.
    credit: (tx, orderNo) =>
      tx.$executeRawUnsafe(`UPDATE bench_orders_${tag} SET paid = TRUE WHERE order_no = ?`, orderNo),
    transaction: (work) => client.$transaction(work),
    insertInbox: async (tx, row) => (await tx.$executeRawUnsafe(insertInbox(tag), ...row)) > 0,
    setup,
    close: async () => {
      await client.$disconnect();
      await pool.end();
    },
  });
}

/**
 * Runs every MySQL store's contest and prints them.
 *
 * @example
 * ```ts
 * import { run } from '../packages/mysql/bench/orm-stores.bench.ts';
 * const checks = await run();
 * ```
 */
export async function run(): Promise<ContestCheck[]> {
  const admin = mysql.createPool({ uri: URL, connectionLimit: 1 }).promise();
  const [[flush]] = (await admin.query('SELECT @@GLOBAL.innodb_flush_log_at_trx_commit AS v')) as unknown as [
    Array<{ v: number }>,
  ];
  await admin.query('SET GLOBAL innodb_flush_log_at_trx_commit = 2');
  try {
    return await runContests(
      [
        ['MySqlStore', mysql2],
        ['KyselyStore', kysely],
        ['DrizzleStore', drizzleOrm],
        ['PrismaStore', prisma],
        ['KnexStore', knex],
        ['TypeOrmStore', typeOrm],
      ],
      TARGETS,
    );
  } finally {
    await admin.query('SET GLOBAL innodb_flush_log_at_trx_commit = ?', [flush?.v ?? 1]);
    await admin.end();
  }
}

await runWhenMain(import.meta.url, run);
