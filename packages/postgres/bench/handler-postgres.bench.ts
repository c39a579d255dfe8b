/**
 * The core handler with PostgresStore against a hand-rolled equivalent in the same process, on PGlite and
 * on a real PostgreSQL server. Both verify the signature; then
 *   store:       the pipeline (key, fingerprint, begin, handler, commit) with the handler's UPDATE on ctx.tx;
 *   hand-rolled: BEGIN; INSERT INTO inbox ... ON CONFLICT DO NOTHING RETURNING; UPDATE orders ...; COMMIT
 *                (ROLLBACK when the insert returned nothing: a duplicate).
 * Fresh deliveries (new payments) and duplicates (payments credited before), one at a time, so round trips
 * show. Rounds run interleaved; each ratio is the median over rounds, with its range. Round trips are
 * counted on the client (every query message; PGlite's own BEGIN and COMMIT in `transaction()` included).
 * On the server, both run with synchronous_commit off: a disk flush per commit (the same for both) would
 * otherwise hide the round trips and CPU being compared.
 * Targets: >= 0.8x fresh, >= 0.9x duplicates.
 *
 *   node --import tsx bench/handler-postgres.bench.ts        (DATABASE_URL for another server)
 */
import { pathToFileURL } from 'node:url';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { CONTEST_SECRET, type ContestCheck, compareOn, type Database } from '@service-pay/bench-kit/sql-contest';
import { createWebhookHandler } from '@service-pay/core';
import { PostgresStore } from '@service-pay/postgres';
import pg from 'pg';

const TARGETS = { fresh: 0.8, duplicate: 0.9 } as const;
const CONTEST = { storeName: 'PostgresStore', targets: TARGETS };

/**
 * The contestant: the handler on `store`, crediting the same order row the hand-rolled transaction updates,
 * through the store's transaction (`ctx.tx`). Its inbox table is created first.
 */
async function storeHandler(
  store: PostgresStore<{ query(sql: string, params: unknown[]): Promise<unknown> }>,
  tag: string,
) {
  await store.migrate();
  return createWebhookHandler({
    secret: CONTEST_SECRET,
    store,
    onPaymentPaid: async (event, ctx) => {
      await ctx.tx.query(`UPDATE bench_orders_${tag} SET paid = true WHERE order_no = $1`, [event.orderNo]);
    },
  });
}

async function postgres(tag: string): Promise<Database> {
  let queries = 0;
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    max: 4,
    // Both contestants commit the same way; without the disk flush per commit (a few ms here, and noisy
    // with other work on the machine) the round trips and the CPU each one spends are what shows.
    options: '-c synchronous_commit=off',
  });
  pool.on('connect', (client) => {
    const query = client.query;
    client.query = function counted(this: pg.PoolClient, ...args: unknown[]) {
      queries++;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof client.query;
  });
  const handler = await storeHandler(new PostgresStore({ pool, tableName: `bench_inbox_${tag}` }), tag);
  return {
    name: 'PostgreSQL (loopback)',
    perRound: 400,
    roundTrips: () => queries,
    store: handler,
    hand: async (event, key, deliveryId) => {
      const client = await pool.connect();
      let failed: Error | undefined;
      try {
        await client.query('BEGIN');
        const inserted = await client.query(
          `INSERT INTO bench_hand_inbox_${tag} (key, fingerprint, payment_id, delivery_id, source, outcome)
           VALUES ($1, $2, $3, $4, 'webhook', 'credited') ON CONFLICT DO NOTHING RETURNING key`,
          [key, event.amount, event.paymentId, deliveryId],
        );
        if (inserted.rowCount === 0) {
          await client.query('ROLLBACK');
          return false;
        }
        await client.query(`UPDATE bench_orders_${tag} SET paid = true WHERE order_no = $1`, [event.orderNo]);
        await client.query('COMMIT');
        return true;
      } catch (error) {
        failed = error as Error;
        throw error;
      } finally {
        client.release(failed);
      }
    },
    exec: async (sql, params) => {
      await pool.query(sql, params);
    },
    close: () => pool.end(),
  };
}

/**
 * Counts every query message of `db` (its own BEGIN and COMMIT in transaction() too), by wrapping its
 * methods on the instance itself, as the store's guard then wraps them again: a proxy in front would be
 * the object the guard wraps, and its methods would call the guard's, which call them back.
 */
function countQueries(db: PGlite, count: () => void): PGlite {
  const counted =
    <A extends unknown[], R>(call: (...args: A) => R) =>
    (...args: A): R => {
      count();
      return call(...args);
    };
  const countedTx = (tx: Transaction): Transaction => ({
    query: counted(tx.query.bind(tx)) as Transaction['query'],
    sql: counted(tx.sql.bind(tx)) as Transaction['sql'],
    exec: counted(tx.exec.bind(tx)),
    rollback: counted(tx.rollback.bind(tx)),
    listen: (...args) => tx.listen(...args),
    get closed() {
      return tx.closed;
    },
  });
  const query = db.query.bind(db);
  const exec = db.exec.bind(db);
  const transaction = db.transaction.bind(db);
  db.query = counted(query) as PGlite['query'];
  db.exec = counted(exec);
  db.transaction = (<T>(callback: (tx: Transaction) => Promise<T>) => {
    count(); // BEGIN
    count(); // COMMIT or ROLLBACK
    return transaction((tx) => callback(countedTx(tx)));
  }) as PGlite['transaction'];
  return db;
}

async function pglite(tag: string): Promise<Database> {
  let queries = 0;
  const raw = await PGlite.create();
  // Set-up and clean-up (`exec` below) go through the methods as they were: not counted, never guarded.
  const setupQuery = raw.query.bind(raw);
  const db = countQueries(raw, () => queries++);
  const handler = await storeHandler(new PostgresStore({ pglite: db, tableName: `bench_inbox_${tag}` }), tag);
  return {
    name: 'PGlite (in process)',
    perRound: 400,
    inProcess: true,
    roundTrips: () => queries,
    store: handler,
    hand: (event, key, deliveryId) =>
      db.transaction(async (tx) => {
        const inserted = await tx.query(
          `INSERT INTO bench_hand_inbox_${tag} (key, fingerprint, payment_id, delivery_id, source, outcome)
           VALUES ($1, $2, $3, $4, 'webhook', 'credited') ON CONFLICT DO NOTHING RETURNING key`,
          [key, event.amount, event.paymentId, deliveryId],
        );
        if (inserted.rows.length === 0) return false;
        await tx.query(`UPDATE bench_orders_${tag} SET paid = true WHERE order_no = $1`, [event.orderNo]);
        return true;
      }),
    exec: async (sql, params) => {
      await setupQuery(sql, params);
    },
    close: () => raw.close(),
  };
}

/**
 * Runs both comparisons (PGlite, then the PostgreSQL server) and prints them.
 *
 * @example
 * ```ts
 * import { run } from '../packages/postgres/bench/handler-postgres.bench.ts';
 * const checks = await run();
 * ```
 */
export async function run(): Promise<ContestCheck[]> {
  return [...(await compareOn(pglite, CONTEST)), ...(await compareOn(postgres, CONTEST))];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const checks = await run();
  process.exitCode = checks.every((c) => c.met) ? 0 : 1;
}
