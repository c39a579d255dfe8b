/**
 * The SQL stores' benchmark contest: the core handler on a store against the hand-rolled transaction a
 * careful developer writes (verify; BEGIN; INSERT INTO inbox ... ON CONFLICT DO NOTHING; UPDATE orders;
 * COMMIT, or ROLLBACK for a duplicate), on the same database, in the same process. Fresh deliveries and
 * duplicates, one at a time so round trips show; rounds interleaved, each ratio the median over rounds.
 * Every SQL package's benchmark brings its `Database` (a client, its round-trip counter, its hand-rolled
 * transaction, and for MySQL its dialect's tables) and runs `compareOn`.
 */
import { pathToFileURL } from 'node:url';
import {
  createWebhookHandler,
  type PaymentPaidEvent,
  signWebhook,
  type TransactionalStore,
  verifyWebhook,
  type WebhookRequest,
} from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';

/** The secret every delivery of the contest is signed with: the store's handler must verify with it. */
export const CONTEST_SECRET = 'whsec_bench_postgres_0123456789abcdef';
const ROUNDS = 7;

/** The two kinds of delivery timed: a payment seen for the first time, and one credited before. */
export type Kind = 'fresh' | 'duplicate';

/** One database as both contestants see it. */
export interface Database {
  name: string;
  perRound: number;
  /** How many query messages went to the database so far (a promise where the server is asked). */
  roundTrips(): number | Promise<number>;
  /** The handler with the store under test. */
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

/** What one comparison measured (the bench package's `TargetCheck` shape). */
export interface ContestCheck {
  of: string;
  over: string;
  atLeast: number;
  ratio: number;
  met: boolean;
}

/** A signed delivery: bytes and headers, as both contestants receive it. */
type Delivery = WebhookRequest & { rawBody: string };

/**
 * One delivery of `event`, signed now with the contest's secret.
 *
 * @example
 * ```ts
 * const { status } = await handler(signed(samplePaymentPaidEvent()));
 * ```
 */
export function signed(event: PaymentPaidEvent): Delivery {
  const { body, headers } = signWebhook({ event, secret: CONTEST_SECRET });
  return { method: 'POST', headers, rawBody: body };
}

async function handRolledDelivery(db: Database, request: Delivery): Promise<void> {
  const { event, deliveryId } = await verifyWebhook(request, { secret: CONTEST_SECRET });
  await db.hand(event, `payment.paid:${event.paymentId}`, deliveryId);
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
 *
 * @example
 * ```ts
 * const checks = await compareOn(pglite, { storeName: 'PostgresStore', targets: { fresh: 0.8, duplicate: 0.9 } });
 * ```
 */
export async function compareOn(make: (tag: string) => Promise<Database>, contest: Contest): Promise<ContestCheck[]> {
  const { storeName, targets } = contest;
  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const db = await make(tag);
  const checks: ContestCheck[] = [];
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

/** The hand-rolled inbox row's values, in column order: key, fingerprint, payment id, delivery id. */
export type InboxRow = [key: string, fingerprint: PaymentPaidEvent['amount'], paymentId: string, deliveryId: string];

/**
 * A contestant built from its client's parts; every SQL package's bench differs only in these.
 * `insertInbox` inserts the hand-rolled inbox row (the dialect's insert-or-ignore) and says whether it did;
 * the hand-rolled transaction then credits the order only when it did.
 */
export interface ContestantParts<Tx> {
  name: string;
  /** Deliveries of each kind per round; default 300. */
  perRound?: number;
  roundTrips: Database['roundTrips'];
  store: TransactionalStore<Tx> & { migrate(): Promise<void> };
  /** Credits the order in the client's transaction, in both contestants. */
  credit: (tx: Tx, orderNo: string) => PromiseLike<unknown>;
  /** The client's own transaction around `work`. */
  transaction: (work: (tx: Tx) => Promise<boolean>) => Promise<boolean>;
  insertInbox: (tx: Tx, row: InboxRow) => Promise<boolean>;
  /** The uncounted connection for set-up, and its end (run after `close`). */
  setup: Pick<Database, 'exec' | 'dialect'> & { end(): Promise<unknown> };
  /** Closes the client under test. */
  close: () => Promise<unknown>;
}

/**
 * The contest's `Database` from a client's parts: the core handler on the store (crediting through
 * `ctx.tx`) against the hand-rolled transaction (insert-or-ignore the inbox row, credit when inserted).
 *
 * @example
 * ```ts
 * const db = await contestant({ name: 'Kysely', roundTrips, store, credit, transaction, insertInbox, setup, close });
 * ```
 */
export async function contestant<Tx>(parts: ContestantParts<Tx>): Promise<Database> {
  const { store, credit, setup } = parts;
  await store.migrate();
  return {
    name: parts.name,
    perRound: parts.perRound ?? 300,
    roundTrips: parts.roundTrips,
    store: createWebhookHandler({
      secret: CONTEST_SECRET,
      store,
      onPaymentPaid: async (event, ctx) => {
        await credit((ctx as unknown as { tx: Tx }).tx, event.orderNo);
      },
    }),
    hand: (event, key, deliveryId) =>
      parts.transaction(async (tx) => {
        if (!(await parts.insertInbox(tx, [key, event.amount, event.paymentId, deliveryId]))) return false;
        await credit(tx, event.orderNo);
        return true;
      }),
    exec: setup.exec,
    ...(setup.dialect === undefined ? {} : { dialect: setup.dialect }),
    close: async () => {
      await parts.close();
      await setup.end();
    },
  };
}

/**
 * Runs each named store's contest in turn (only those whose name starts with `$ORM` when it is set) and
 * returns every check.
 *
 * @example
 * ```ts
 * const checks = await runContests([['KyselyStore', kysely]], { fresh: 0.9, duplicate: 1.0 });
 * ```
 */
export async function runContests(
  contests: Array<[storeName: string, make: (tag: string) => Promise<Database>]>,
  targets: Contest['targets'],
): Promise<ContestCheck[]> {
  const checks: ContestCheck[] = [];
  const only = process.env.ORM?.toLowerCase();
  for (const [storeName, make] of contests) {
    if (only !== undefined && !storeName.toLowerCase().startsWith(only)) continue;
    checks.push(...(await compareOn(make, { storeName, targets })));
  }
  return checks;
}

/**
 * Runs a bench file's `run` when the file is the process's entry point, and fails the process when a
 * target is missed.
 *
 * @example
 * ```ts
 * await runWhenMain(import.meta.url, run);
 * ```
 */
export async function runWhenMain(moduleUrl: string, run: () => Promise<ContestCheck[]>): Promise<void> {
  if (process.argv[1] === undefined || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const checks = await run();
  process.exitCode = checks.every((c) => c.met) ? 0 : 1;
}
