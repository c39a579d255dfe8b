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
import { PGlite, type PGliteInterface, type Transaction } from '@electric-sql/pglite';
import {
  createWebhookHandler,
  type PaymentPaidEvent,
  signWebhook,
  verifyWebhook,
  type WebhookRequest,
} from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import pg from 'pg';
import { PostgresStore } from '../src/index.js';

const SECRET = 'whsec_bench_postgres_0123456789abcdef';
const ROUNDS = 7;
const TARGETS = { fresh: 0.8, duplicate: 0.9 } as const;

export type Kind = keyof typeof TARGETS;

/** One database as both contestants see it. */
export interface Database {
  name: string;
  perRound: number;
  /** How many query messages went to the database so far (a promise where the server is asked). */
  roundTrips(): number | Promise<number>;
  /** The handler with PostgresStore. */
  store: (request: WebhookRequest) => Promise<{ status: number }>;
  /** The hand-rolled transaction; true when it credited. */
  hand: (event: PaymentPaidEvent, key: string, deliveryId: string) => Promise<boolean>;
  /** Plain SQL outside the contest (setup, clean-up). */
  exec: (sql: string, params?: unknown[]) => Promise<void>;
  /**
   * Another SQL dialect's set-up (MySQL): the orders table and the hand-rolled inbox, and orders added.
   * Default: PostgreSQL's.
   */
  dialect?: {
    createTables(tag: string): Promise<void>;
    addOrders(tag: string, orderNos: string[]): Promise<void>;
  };
  close: () => Promise<void>;
}

/** What one comparison measured. */
export interface PostgresBenchCheck {
  of: string;
  over: string;
  atLeast: number;
  ratio: number;
  met: boolean;
}

/** A signed delivery: bytes and headers, as both contestants receive it. */
type Delivery = WebhookRequest & { rawBody: string };

export function signed(event: PaymentPaidEvent): Delivery {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  return { method: 'POST', headers, rawBody: body };
}

async function handRolledDelivery(db: Database, request: Delivery): Promise<void> {
  const { event, deliveryId } = await verifyWebhook(request, { secret: SECRET });
  await db.hand(event, `payment.paid:${event.paymentId}`, deliveryId);
}

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
    secret: SECRET,
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

/** A PGlite whose every query message is counted (its own BEGIN and COMMIT in transaction() too). */
function countingPGlite(db: PGlite, count: () => void): PGliteInterface {
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
  return new Proxy(db, {
    get(target, property, receiver) {
      if (property === 'query' || property === 'exec') {
        return counted((target[property] as (...a: unknown[]) => unknown).bind(target));
      }
      if (property === 'transaction') {
        return <T>(callback: (tx: Transaction) => Promise<T>) => {
          count(); // BEGIN
          count(); // COMMIT or ROLLBACK
          return target.transaction((tx) => callback(countedTx(tx)));
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

async function pglite(tag: string): Promise<Database> {
  let queries = 0;
  const raw = await PGlite.create();
  const db = countingPGlite(raw, () => queries++);
  const handler = await storeHandler(new PostgresStore({ pglite: db, tableName: `bench_inbox_${tag}` }), tag);
  return {
    name: 'PGlite (in process)',
    perRound: 400,
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
      await raw.query(sql, params);
    },
    close: () => raw.close(),
  };
}

/** PostgreSQL's tables of the contest: the orders, and the hand-rolled inbox as a copy of the store's. */
function postgresDialect(db: Database): NonNullable<Database['dialect']> {
  return {
    createTables: async (tag) => {
      await db.exec(
        `CREATE TABLE bench_orders_${tag} (order_no text PRIMARY KEY, paid boolean NOT NULL DEFAULT false)`,
      );
      await db.exec(`CREATE TABLE bench_hand_inbox_${tag} (LIKE bench_inbox_${tag} INCLUDING ALL)`);
    },
    addOrders: (tag, orderNos) =>
      db.exec(`INSERT INTO bench_orders_${tag} (order_no) SELECT unnest($1::text[])`, [orderNos]),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Times `deliver` over `requests`, one at a time; returns deliveries per second and round trips each. */
async function timed(
  db: Database,
  requests: Delivery[],
  deliver: (request: Delivery) => Promise<void>,
): Promise<{ perSec: number; roundTrips: number }> {
  const before = await db.roundTrips();
  const started = performance.now();
  for (const request of requests) await deliver(request);
  const seconds = (performance.now() - started) / 1000;
  return { perSec: requests.length / seconds, roundTrips: ((await db.roundTrips()) - before) / requests.length };
}

/** Who competes, and what the store must reach against the hand-rolled transaction. */
export interface Contest {
  /** The store's name in the printed heading and the checks (`PostgresStore`, `PrismaStore`, ...). */
  storeName: string;
  targets: Record<Kind, number>;
}

/**
 * Runs one database's contest: the store's handler against the hand-rolled transaction, fresh and duplicate
 * deliveries, interleaved rounds; prints the ratios and round trips and returns the checks. `make` gets a
 * tag for its table names: the store's inbox must be `bench_inbox_<tag>` (the hand-rolled inbox copies it)
 * and the handlers credit `bench_orders_<tag>`, which this creates once `make` has run.
 */
export async function compareOn(
  make: (tag: string) => Promise<Database>,
  contest: Contest = { storeName: 'PostgresStore', targets: TARGETS },
): Promise<PostgresBenchCheck[]> {
  const { storeName, targets } = contest;
  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const db = await make(tag);
  const checks: PostgresBenchCheck[] = [];
  try {
    const dialect = db.dialect ?? postgresDialect(db);
    await dialect.createTables(tag);
    const ordersFor = (events: PaymentPaidEvent[]) =>
      dialect.addOrders(
        tag,
        events.map((e) => e.orderNo),
      );
    // Payments credited once by each contestant before the clock starts: the duplicates of every round.
    const seen = Array.from({ length: db.perRound }, () => samplePaymentPaidEvent());
    await ordersFor(seen);
    for (const event of seen) {
      const request = signed(event);
      if ((await db.store(request)).status !== 200) throw new Error('bench: the store did not credit');
      await handRolledDelivery(db, signed(event));
    }
    const samples: Record<`${Kind}:${'store' | 'hand'}`, { perSec: number[]; roundTrips: number }> = {
      'fresh:store': { perSec: [], roundTrips: 0 },
      'fresh:hand': { perSec: [], roundTrips: 0 },
      'duplicate:store': { perSec: [], roundTrips: 0 },
      'duplicate:hand': { perSec: [], roundTrips: 0 },
    };
    const storeDeliver = async (request: Delivery) => {
      const { status } = await db.store(request);
      if (status !== 200) throw new Error(`bench: the store answered ${status}`);
    };
    const handDeliver = (request: Delivery) => handRolledDelivery(db, request);
    // Round 0 warms up (JIT, plans, connections) and is not counted.
    for (let round = 0; round <= ROUNDS; round++) {
      const fresh = Array.from({ length: db.perRound * 2 }, () => samplePaymentPaidEvent());
      await ordersFor(fresh);
      const freshStore = fresh.slice(0, db.perRound).map(signed);
      const freshHand = fresh.slice(db.perRound).map(signed);
      const dupStore = seen.map(signed);
      const dupHand = seen.map(signed);
      const runs: Array<[keyof typeof samples, () => Promise<{ perSec: number; roundTrips: number }>]> = [
        ['fresh:store', () => timed(db, freshStore, storeDeliver)],
        ['fresh:hand', () => timed(db, freshHand, handDeliver)],
        ['duplicate:store', () => timed(db, dupStore, storeDeliver)],
        ['duplicate:hand', () => timed(db, dupHand, handDeliver)],
      ];
      // Alternate the order so neither contestant always runs right after the other's garbage.
      if (round % 2 === 1) runs.reverse();
      for (const [name, measure] of runs) {
        const { perSec, roundTrips } = await measure();
        if (round > 0) {
          samples[name].perSec.push(perSec);
          samples[name].roundTrips = roundTrips;
        }
      }
    }
    console.log(`\n## ${storeName} vs hand-rolled transaction, ${db.name}, one delivery at a time, ${ROUNDS} rounds`);
    for (const kind of ['fresh', 'duplicate'] as const) {
      const store = samples[`${kind}:store`];
      const hand = samples[`${kind}:hand`];
      const ratios = store.perSec.map((s, i) => s / (hand.perSec[i] as number));
      const ratio = median(ratios);
      const met = ratio >= targets[kind];
      console.log(
        `  ${kind.padEnd(9)} store ${Math.round(median(store.perSec))}/s, hand-rolled ${Math.round(median(hand.perSec))}/s: ` +
          `${ratio.toFixed(2)}x (range ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}; target >= ${targets[kind]}x) ` +
          `${met ? 'MET' : 'MISSED'}; round trips per delivery: store ${store.roundTrips.toFixed(0)}, hand-rolled ${hand.roundTrips.toFixed(0)}`,
      );
      checks.push({
        of: `handler with ${storeName}, ${kind}, ${db.name}`,
        over: 'hand-rolled transaction',
        atLeast: targets[kind],
        ratio,
        met,
      });
    }
  } finally {
    await db
      .exec(`DROP TABLE IF EXISTS bench_orders_${tag}, bench_hand_inbox_${tag}, bench_inbox_${tag}`)
      .catch(() => {});
    await db.close();
  }
  return checks;
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
export async function run(): Promise<PostgresBenchCheck[]> {
  return [...(await compareOn(pglite)), ...(await compareOn(postgres))];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const checks = await run();
  process.exitCode = checks.every((c) => c.met) ? 0 : 1;
}
