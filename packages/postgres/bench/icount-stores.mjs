// One delivery through an ORM store, or through the same client's hand-rolled exactly-once transaction,
// for `../shared/tools/icount` and bench/icount (instructions per delivery under valgrind, not time):
// `node packages/postgres/bench/icount-stores.mjs <contestant> <N> <K>`.
//
// Both sides verify the signature with core's verifyWebhook options and credit the order with the client
// (UPDATE orders). The store runs the core handler (claim, ctx.tx, commit); the hand-rolled side runs
// `BEGIN; INSERT INTO inbox ... ON CONFLICT DO NOTHING RETURNING key; UPDATE orders (when inserted);
// COMMIT`, as packages/postgres/bench/orm-stores.bench.ts times them. Both send the same number of
// statements (fresh 4, duplicate 3), so the driver's instructions are on both sides and the difference is
// the store's own work.
//
// The clients run on a stand-in for node-postgres' Pool (`InProcessPostgres`) that answers every statement
// the two sides send from Maps in this process, one event-loop turn later: a real server's answers arrive
// when they arrive, and under valgrind the count of the same run moved by 15% between runs (other
// processes' load changes how the answers' packets are read). With the stand-in, counts repeat, and what
// is counted is the clients' work and ours, without pg's protocol and socket (the same on both sides at
// equal round trips). `ICOUNT_DATABASE_URL=postgres://...` runs both sides on that server instead (its own
// tables, a random suffix, dropped at exit), to count the driver's share.
//
// Plain JavaScript on the built packages (`pnpm -s build` first): no TypeScript loader on the stack.
import { AsyncLocalStorage } from 'node:async_hooks';
import { deliveries, runContestant, SECRET } from '@service-pay/bench-kit/icount';
import { createWebhookHandler, verifyWebhook } from '@service-pay/core';
import { sql as drizzleSql, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { boolean, pgTable, text } from 'drizzle-orm/pg-core';
import { Kysely, sql as kyselySql, PostgresDialect } from 'kysely';
import pg from 'pg';
import { DrizzleStore } from '../dist/drizzle.js';
import { KyselyStore } from '../dist/kysely.js';

const URL = process.env.ICOUNT_DATABASE_URL;
const TAG = `icount_${process.pid.toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const INBOX = `bench_inbox_${TAG}`;
const HAND_INBOX = `bench_hand_inbox_${TAG}`;
const ORDERS = `bench_orders_${TAG}`;
/**
 * Valgrind runs node some 30 times slower: the deliveries of a run (signed before it starts) must stay in
 * the window, and no store call may hit its bound. The same options for both sides.
 */
const VERIFY = { secret: SECRET, toleranceSec: 3_600 };
const HANDLER = { ...VERIFY, storeTimeoutMs: 600_000, handlerTimeoutMs: 600_000 };

/**
 * The first two quoted literals of a statement (the store writes its values in as literals), read with
 * indexOf: `matchAll` with a global RegExp clones the RegExp and walks an iterator on every call, about 7,000
 * instructions a claim that the stand-in charged to the store's side and the hand-rolled side (parameters,
 * no parse) never paid. A server's parse is not this process's work, so the stand-in's is kept small.
 */
function firstTwoLiterals(text) {
  const literals = [];
  let at = text.indexOf("'");
  while (at !== -1 && literals.length < 2) {
    let end = text.indexOf("'", at + 1);
    while (end !== -1 && text.charCodeAt(end + 1) === 0x27) end = text.indexOf("'", end + 2); // '' inside
    if (end === -1) break;
    const literal = text.slice(at + 1, end);
    // replaceAll looks its search value up as a possible RegExp (about 700 instructions a call): only when needed.
    literals.push(literal.includes("''") ? literal.replaceAll("''", "'") : literal);
    at = text.indexOf("'", end + 1);
  }
  return literals;
}

/**
 * What the two sides' statements do on PostgreSQL, answered from Maps: the inbox rows committed, and those
 * written by the open transaction (kept at COMMIT, dropped at ROLLBACK). One delivery at a time, so one
 * transaction at a time. Answers `{ command, rowCount, rows }` as node-postgres does, on the next turn of
 * the event loop (as a socket's data would arrive).
 */
class InProcessPostgres {
  #committed = new Map();
  #pending = new Map();

  answer(text, params) {
    const head = text.trimStart().slice(0, 6).toLowerCase();
    if (head === 'begin') return { command: 'BEGIN', rowCount: null, rows: [] };
    if (head === 'commit') {
      for (const [key, fingerprint] of this.#pending) this.#committed.set(key, fingerprint);
      this.#pending.clear();
      return { command: 'COMMIT', rowCount: null, rows: [] };
    }
    if (head === 'rollba') {
      this.#pending.clear();
      return { command: 'ROLLBACK', rowCount: null, rows: [] };
    }
    if (head === 'update') return { command: 'UPDATE', rowCount: 1, rows: [] };
    if (text.includes('_take_v2(') || text.includes('_take_v2"(')) {
      // The store's claim: lock (always free here), insert unless recorded, or the recorded fingerprint.
      const [key, fingerprint] = firstTwoLiterals(text);
      const found = this.#committed.get(key);
      if (found === undefined) this.#pending.set(key, fingerprint);
      // The function's answer, as the server gives it: written (with pid and the transaction's start) or recorded.
      return { command: 'SELECT', rowCount: 1, rows: [{ take: found === undefined ? 'w,1,1' : `r,${found}` }] };
    }
    if (head === 'insert' && text.includes(HAND_INBOX)) {
      // The hand-rolled inbox row: INSERT ... ON CONFLICT DO NOTHING RETURNING key.
      const [key, fingerprint] = params;
      if (this.#committed.has(key)) return { command: 'INSERT', rowCount: 0, rows: [] };
      this.#pending.set(key, fingerprint);
      return { command: 'INSERT', rowCount: 1, rows: [{ key }] };
    }
    // migrate()'s statements: nothing to keep.
    return { command: 'SELECT', rowCount: 0, rows: [] };
  }
}

/** node-postgres' Pool as the clients use it: `connect()` to a client with `query` and `release`. */
class InProcessPool {
  constructor() {
    const db = new InProcessPostgres();
    this.client = {
      query: (config, params) => {
        const text = typeof config === 'string' ? config : config.text;
        const values = params ?? (typeof config === 'string' ? undefined : config.values);
        return new Promise((resolve) => setImmediate(() => resolve(db.answer(text, values))));
      },
      release: () => {},
    };
    this.options = {};
  }
  connect() {
    return new Promise((resolve) => setImmediate(() => resolve(this.client)));
  }
  query(config, params) {
    return this.client.query(config, params);
  }
  end() {
    return Promise.resolve();
  }
}

/** The setup connection on a real server (not counted: it does not run in the loop). */
const setup = URL === undefined ? undefined : new pg.Pool({ connectionString: URL, max: 1 });
/** The connections under test: one delivery at a time, so one is enough. */
const pool = () =>
  URL === undefined
    ? new InProcessPool()
    : new pg.Pool({ connectionString: URL, max: 2, options: '-c synchronous_commit=off' });

async function tables(size) {
  const items = deliveries(size);
  if (setup === undefined) return items;
  await setup.query(`CREATE TABLE ${ORDERS} (order_no text PRIMARY KEY, paid boolean NOT NULL DEFAULT false)`);
  await setup.query(`CREATE TABLE ${HAND_INBOX} (LIKE ${INBOX} INCLUDING ALL)`);
  const orderNos = items.map((d) => JSON.parse(d.body.toString('utf8')).orderNo);
  await setup.query(`INSERT INTO ${ORDERS} (order_no) SELECT unnest($1::text[])`, [orderNos]);
  return items;
}

async function dropTables() {
  if (setup === undefined) return;
  await setup.query(`DROP TABLE IF EXISTS ${ORDERS}, ${HAND_INBOX}, ${INBOX}`).catch(() => {});
  await setup.query(`DROP FUNCTION IF EXISTS ${INBOX}_claim, ${INBOX}_take_v2`).catch(() => {});
  await setup.end();
}

/** The store's handler: `credit(ctx.tx, orderNo)` in onPaymentPaid. */
function storeOp(store, credit) {
  const handle = createWebhookHandler({
    ...HANDLER,
    store,
    onPaymentPaid: async (event, ctx) => {
      await credit(ctx.tx, event.orderNo);
    },
  });
  return (d) => handle({ method: 'POST', headers: d.headers, rawBody: d.body });
}

/**
 * The hand-rolled delivery: verify, then the client's own transaction. In a process where an
 * AsyncLocalStorage is on, as the store's guards turn it on: on Node 20 that makes every promise of the
 * process pay async hooks, and the timed contest (both sides in one process) has them on both sides, as has
 * any app with OpenTelemetry or a request context. `ICOUNT_HAND_WITHOUT_ALS=1` counts it without.
 */
function handOp(transaction, insertInbox, credit) {
  return async (d) => {
    const { event, deliveryId } = await verifyWebhook({ rawBody: d.body, headers: d.headers }, VERIFY);
    const key = `payment.paid:${event.paymentId}`;
    await transaction(async (tx) => {
      if (!(await insertInbox(tx, [key, event.amount, event.paymentId, deliveryId]))) return false;
      await credit(tx, event.orderNo);
      return true;
    });
  };
}

const clients = {
  kysely: () => {
    const db = new Kysely({ dialect: new PostgresDialect({ pool: pool() }) });
    const credit = (tx, orderNo) =>
      kyselySql`UPDATE ${kyselySql.table(ORDERS)} SET paid = true WHERE order_no = ${orderNo}`.execute(tx);
    return {
      store: new KyselyStore({ db, tableName: INBOX }),
      storeCredit: credit,
      hand: handOp(
        (work) => db.transaction().execute(work),
        async (trx, [k, f, p, d]) => {
          const inserted = await kyselySql`INSERT INTO ${kyselySql.table(HAND_INBOX)}
            (key, fingerprint, payment_id, delivery_id, source, outcome)
            VALUES (${k}, ${f}, ${p}, ${d}, 'webhook', 'credited') ON CONFLICT DO NOTHING RETURNING key`.execute(trx);
          return inserted.rows.length > 0;
        },
        credit,
      ),
    };
  },
  drizzle: () => {
    const db = drizzle(pool());
    const orders = pgTable(ORDERS, { orderNo: text('order_no').primaryKey(), paid: boolean('paid') });
    const credit = (tx, orderNo) => tx.update(orders).set({ paid: true }).where(eq(orders.orderNo, orderNo));
    return {
      store: new DrizzleStore({ db, tableName: INBOX }),
      storeCredit: credit,
      hand: handOp(
        (work) => db.transaction(work),
        async (trx, [k, f, p, d]) => {
          const inserted = await trx.execute(drizzleSql`INSERT INTO ${drizzleSql.raw(HAND_INBOX)}
            (key, fingerprint, payment_id, delivery_id, source, outcome)
            VALUES (${k}, ${f}, ${p}, ${d}, 'webhook', 'credited') ON CONFLICT DO NOTHING RETURNING key`);
          return inserted.rows.length > 0;
        },
        credit,
      ),
    };
  },
};

/** `<client>-store`, `<client>-store-duplicate`, `<client>-hand`, `<client>-hand-duplicate`. */
export const CONTESTANTS = {};
for (const [name, make] of Object.entries(clients)) {
  for (const side of ['store', 'hand']) {
    for (const fresh of [true, false]) {
      CONTESTANTS[`${name}-${side}${fresh ? '' : '-duplicate'}`] = {
        fresh,
        make: async (size) => {
          const client = make();
          await client.store.migrate();
          const items = await tables(size);
          // Only in the hand-rolled side's process: a second storage in the store's would cost its promises more.
          if (side === 'hand' && process.env.ICOUNT_HAND_WITHOUT_ALS !== '1') new AsyncLocalStorage().enterWith({});
          const op = side === 'store' ? storeOp(client.store, client.storeCredit) : client.hand;
          return { pool: items, op };
        },
      };
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    await runContestant(CONTESTANTS, 'icount-stores.mjs');
  } finally {
    await dropTables();
  }
  // The clients' pools would keep the process alive; the count is taken.
  process.exit(0);
}
