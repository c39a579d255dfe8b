/**
 * Each MySQL store against the same client's hand-rolled transaction, on the machine's MariaDB, with
 * the SQL contest of @service-pay/test-kit (same deliveries, rounds, interleaving and ratios; `compareOn`).
 * Both verify the signature and credit the order with the client; then
 *   store:       the pipeline (MySqlStore: GET_LOCK, START TRANSACTION, read, SAVEPOINT; the ORM stores:
 *                peek, key row, the ORM's BEGIN, lock and read, SAVEPOINT); the UPDATE through ctx.tx;
 *                the inbox INSERT; COMMIT (MySqlStore: and RELEASE_LOCK);
 *   hand-rolled: the client's own transaction with INSERT IGNORE INTO inbox, then the UPDATE when it
 *                inserted: the shortest exactly-once transaction a careful user writes (it waits behind a
 *                concurrent delivery instead of answering 409, and keeps no rejection row).
 * Round trips: every statement the client sends, BEGIN and COMMIT included, counted on mysql2's
 * connections. Commits are not flushed to disk during the run (innodb_flush_log_at_trx_commit = 2, put
 * back after): both contestants commit the same way, and the round trips are what shows.
 * Targets: >= 0.9x fresh (a store may cost a little over the hand-rolled transaction, never a multiple), >=
 * 1.0x duplicates (a duplicate must never cost more than the work it saves).
 *
 *   node --import tsx bench/orm-stores.bench.ts        (MYSQL_URL for another server)
 */
import { pathToFileURL } from 'node:url';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { CONTEST_SECRET, type ContestCheck, compareOn, type Database } from '@service-pay/bench-kit/sql-contest';
import { createWebhookHandler, type PaymentPaidEvent, type TransactionalStore } from '@service-pay/core';
import { sql as drizzleSql, eq } from 'drizzle-orm';
import { boolean, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle } from 'drizzle-orm/mysql2';
import { Kysely, sql as kyselySql, MysqlDialect } from 'kysely';
import mysql from 'mysql2';
import { DrizzleStore } from '../src/drizzle.js';
import { MySqlStore } from '../src/index.js';
import { KyselyStore } from '../src/kysely.js';
import { type PrismaLike, PrismaStore } from '../src/prisma.js';
import generatePrismaClient from '../test/prisma/generate.js';

const URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const TARGETS = { fresh: 0.9, duplicate: 1.0 };
const PER_ROUND = 300;

/** The hand-rolled inbox row. */
const insertInbox = (tag: string) =>
  `INSERT IGNORE INTO bench_hand_inbox_${tag} (\`key\`, fingerprint, payment_id, delivery_id, source, outcome)
   VALUES (?, ?, ?, ?, 'webhook', 'credited')`;
const inboxValues = (event: PaymentPaidEvent, key: string, deliveryId: string) => [
  key,
  event.amount,
  event.paymentId,
  deliveryId,
];

/** A mysql2 pool whose every statement is counted, on whichever connection and API sends it. */
function countingPool(count: () => void): mysql.Pool {
  const pool = mysql.createPool({ uri: URL, connectionLimit: 4 });
  pool.on('connection', (connection) => {
    for (const method of ['query', 'execute'] as const) {
      const original = connection[method] as (...args: unknown[]) => unknown;
      (connection as unknown as Record<string, unknown>)[method] = function counted(this: unknown, ...args: unknown[]) {
        count();
        return original.apply(this, args);
      };
    }
  });
  return pool;
}

/** MySQL's tables of the contest, and plain SQL outside it, through a pool of its own (not counted). */
function setupPool() {
  const pool = mysql.createPool({ uri: URL, connectionLimit: 2 }).promise();
  const query = (text: string, params?: unknown[]) => pool.query(text, params);
  const exec = async (text: string, params?: unknown[]) => {
    await query(text, params);
  };
  const dialect: NonNullable<Database['dialect']> = {
    createTables: async (tag) => {
      await exec(
        `CREATE TABLE bench_orders_${tag} (order_no VARCHAR(64) PRIMARY KEY, paid BOOLEAN NOT NULL DEFAULT FALSE)`,
      );
      await exec(`CREATE TABLE bench_hand_inbox_${tag} LIKE bench_inbox_${tag}`);
    },
    addOrders: (tag, orderNos) =>
      exec(`INSERT INTO bench_orders_${tag} (order_no) VALUES ?`, [orderNos.map((o) => [o])]),
  };
  return { query, exec, dialect, end: () => pool.end() };
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

async function mysql2(tag: string): Promise<Database> {
  let queries = 0;
  const pool = countingPool(() => queries++).promise();
  const setup = setupPool();
  const credit = (tx: mysql.PoolConnection | import('mysql2/promise').PoolConnection, orderNo: string) =>
    (tx as import('mysql2/promise').PoolConnection).query(
      `UPDATE bench_orders_${tag} SET paid = TRUE WHERE order_no = ?`,
      [orderNo],
    );
  return {
    name: 'mysql2 3.24, MariaDB 10.11 (loopback)',
    perRound: PER_ROUND,
    roundTrips: () => queries,
    store: await storeHandler(new MySqlStore({ pool, tableName: `bench_inbox_${tag}` }), credit),
    hand: async (event, key, deliveryId) => {
      const connection = await pool.getConnection();
      try {
        await connection.query('START TRANSACTION');
        const [inserted] = await connection.query(insertInbox(tag), inboxValues(event, key, deliveryId));
        if ((inserted as { affectedRows: number }).affectedRows === 0) {
          await connection.query('ROLLBACK');
          return false;
        }
        await credit(connection, event.orderNo);
        await connection.query('COMMIT');
        return true;
      } finally {
        connection.release();
      }
    },
    exec: setup.exec,
    dialect: setup.dialect,
    close: async () => {
      await pool.end();
      await setup.end();
    },
  };
}

async function kysely(tag: string): Promise<Database> {
  let queries = 0;
  const setup = setupPool();
  // biome-ignore lint/suspicious/noExplicitAny: table names carry the run's tag
  const db = new Kysely<any>({ dialect: new MysqlDialect({ pool: countingPool(() => queries++) }) });
  // biome-ignore lint/suspicious/noExplicitAny: as above
  const credit = (tx: Kysely<any>, orderNo: string) =>
    kyselySql`UPDATE ${kyselySql.table(`bench_orders_${tag}`)} SET paid = TRUE WHERE order_no = ${orderNo}`.execute(tx);
  return {
    name: 'Kysely 0.29 on mysql2, MariaDB 10.11 (loopback)',
    perRound: PER_ROUND,
    roundTrips: () => queries,
    store: await storeHandler(new KyselyStore({ db, tableName: `bench_inbox_${tag}` }), credit),
    hand: (event, key, deliveryId) =>
      db.transaction().execute(async (trx) => {
        const [k, f, p, d] = inboxValues(event, key, deliveryId);
        const inserted = await kyselySql`INSERT IGNORE INTO ${kyselySql.table(`bench_hand_inbox_${tag}`)}
          (\`key\`, fingerprint, payment_id, delivery_id, source, outcome)
          VALUES (${k}, ${f}, ${p}, ${d}, 'webhook', 'credited')`.execute(trx);
        if (Number(inserted.numAffectedRows ?? 0) === 0) return false;
        await credit(trx, event.orderNo);
        return true;
      }),
    exec: setup.exec,
    dialect: setup.dialect,
    close: async () => {
      await setup.exec(`DROP TABLE IF EXISTS bench_inbox_${tag}_keys`);
      await db.destroy();
      await setup.end();
    },
  };
}

async function drizzleOrm(tag: string): Promise<Database> {
  let queries = 0;
  const pool = countingPool(() => queries++);
  const setup = setupPool();
  const db = drizzle({ client: pool });
  const orders = mysqlTable(`bench_orders_${tag}`, {
    orderNo: varchar('order_no', { length: 64 }).primaryKey(),
    paid: boolean('paid'),
  });
  type Tx = Parameters<Parameters<typeof db.transaction>[0]>[0];
  const credit = (tx: Tx, orderNo: string) => tx.update(orders).set({ paid: true }).where(eq(orders.orderNo, orderNo));
  return {
    name: 'Drizzle 0.45 on mysql2, MariaDB 10.11 (loopback)',
    perRound: PER_ROUND,
    roundTrips: () => queries,
    store: await storeHandler(new DrizzleStore({ db, tableName: `bench_inbox_${tag}` }), credit),
    hand: (event, key, deliveryId) =>
      db.transaction(async (trx) => {
        const [k, f, p, d] = inboxValues(event, key, deliveryId);
        const [inserted] = await trx.execute(drizzleSql`INSERT IGNORE INTO ${drizzleSql.raw(`bench_hand_inbox_${tag}`)}
          (\`key\`, fingerprint, payment_id, delivery_id, source, outcome)
          VALUES (${k}, ${f}, ${p}, ${d}, 'webhook', 'credited')`);
        if ((inserted as { affectedRows: number }).affectedRows === 0) return false;
        await credit(trx, event.orderNo);
        return true;
      }),
    exec: setup.exec,
    dialect: setup.dialect,
    close: async () => {
      await setup.exec(`DROP TABLE IF EXISTS bench_inbox_${tag}_keys`);
      await new Promise<void>((resolve) => pool.end(() => resolve()));
      await setup.end();
    },
  };
}

/** What the bench uses of the generated Prisma client (test/prisma/schema.prisma). */
interface PrismaBench extends PrismaLike {
  $disconnect(): Promise<void>;
}

async function prisma(tag: string): Promise<Database> {
  const setup = setupPool();
  generatePrismaClient();
  const generated = '../test/prisma/generated/client.ts'; // generated just above, outside git
  const { PrismaClient } = (await import(/* @vite-ignore */ generated)) as {
    PrismaClient: new (options: { adapter: PrismaMariaDb }) => PrismaBench;
  };
  const url = new globalThis.URL(URL);
  // Prisma's adapter opens a mariadb pool of its own, which the bench cannot wrap: round trips are counted
  // by the server instead.
  const adapter = new PrismaMariaDb({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    database: url.pathname.slice(1),
    connectionLimit: 4,
  });
  const client = new PrismaClient({ adapter });
  // The server's count of statements from every client, less the SHOWs that read it: nothing else runs on
  // it while a contestant is timed.
  let shows = 0;
  const questions = async () => {
    shows++;
    const [rows] = (await setup.query("SHOW GLOBAL STATUS LIKE 'Questions'")) as unknown as [Array<{ Value: string }>];
    return Number(rows[0]?.Value) - shows;
  };
  // Raw SQL for the credit in both contestants: the orders table's name carries the run's tag, which a
  // Prisma model cannot.
  const credit = async (tx: PrismaBench, orderNo: string) =>
    await tx.$executeRawUnsafe(`UPDATE bench_orders_${tag} SET paid = TRUE WHERE order_no = ?`, orderNo);
  return {
    name: 'Prisma 7.10 on adapter-mariadb, MariaDB 10.11 (loopback)',
    perRound: PER_ROUND,
    roundTrips: questions,
    store: await storeHandler(new PrismaStore({ prisma: client, tableName: `bench_inbox_${tag}` }), credit),
    hand: (event, key, deliveryId) =>
      client.$transaction(async (tx: PrismaBench) => {
        const inserted = await tx.$executeRawUnsafe(insertInbox(tag), ...inboxValues(event, key, deliveryId));
        if (inserted === 0) return false;
        await credit(tx, event.orderNo);
        return true;
      }),
    exec: setup.exec,
    dialect: setup.dialect,
    close: async () => {
      await setup.exec(`DROP TABLE IF EXISTS bench_inbox_${tag}_keys`);
      await client.$disconnect();
      await setup.end();
    },
  };
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
  const checks: ContestCheck[] = [];
  try {
    const contests: Array<[string, (tag: string) => Promise<Database>]> = [
      ['MySqlStore', mysql2],
      ['KyselyStore', kysely],
      ['DrizzleStore', drizzleOrm],
      ['PrismaStore', prisma],
    ];
    const only = process.env.ORM;
    for (const [storeName, make] of contests) {
      if (only !== undefined && !storeName.toLowerCase().startsWith(only.toLowerCase())) continue;
      checks.push(...(await compareOn(make, { storeName, targets: TARGETS })));
    }
  } finally {
    await admin.query('SET GLOBAL innodb_flush_log_at_trx_commit = ?', [flush?.v ?? 1]);
    await admin.end();
  }
  return checks;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const checks = await run();
  process.exitCode = checks.every((c) => c.met) ? 0 : 1;
}
