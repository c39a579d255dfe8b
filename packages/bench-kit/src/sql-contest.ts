/**
 * The SQL stores' benchmark contest: the core handler on a store against the hand-rolled transaction a
 * careful developer writes (verify; BEGIN; INSERT INTO inbox ... ON CONFLICT DO NOTHING; UPDATE orders;
 * COMMIT, or ROLLBACK for a duplicate), on the same database, in the same process. Fresh deliveries and
 * duplicates, one at a time so round trips show. Within a round the two contestants take turns delivery by
 * delivery (who goes first flips every pair), so a stall of the machine lands on both alike, and each
 * round's ratio is the two contestants' total times over the same stretch; the ratio is the median over
 * rounds. A counting round before the timed ones counts each contestant's round trips and, for a server on
 * this machine, the server's CPU per delivery (read from /proc in the kernel's 10 ms ticks: within about
 * 35 us at 300 deliveries); every timed delivery adds this process's CPU (user and system). Every SQL package's benchmark brings its `Database` (a client, its round-trip counter, its
 * hand-rolled transaction, and for MySQL its dialect's tables) and runs `compareOn`.
 */
import { readdirSync, readFileSync } from 'node:fs';
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
/**
 * Timed rounds; `CONTEST_ROUNDS` for more. A client's median moves by up to 0.05 between runs of 7 on a shared
 * 2-core machine: 25 rounds (with the same 10 of warm-up) say where a ratio sits, in about twice the time.
 */
const ROUNDS = contestRounds(process.env.CONTEST_ROUNDS);
/**
 * Rounds of warm-up (JIT, plans, connections) before anything is counted or timed, each contestant on its
 * own: the ratios are a server's that has been up a while. V8 compiles a function to optimized code only
 * after it ran enough, and the store's path (pipeline, claim, guards) is longer than the hand-rolled
 * transaction: after one round (300 deliveries of each kind) parts of it still run in the baseline tiers
 * through the first timed rounds, which costs the store 0.02-0.07 of its fresh ratio (Kysely on PostgreSQL,
 * one round of warm-up against ten, the same build).
 */
const WARM_UP_ROUNDS = 10;

function contestRounds(value: string | undefined): number {
  if (value === undefined || value === '') return 7;
  const rounds = Number(value);
  if (!Number.isInteger(rounds) || rounds < 1) {
    throw new Error(
      `bench: CONTEST_ROUNDS must be a whole number of rounds, 1 or more (got ${JSON.stringify(value)}).`,
    );
  }
  return rounds;
}

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
  /** The database runs inside this process (PGlite): its CPU is this process's, and no server's is counted. */
  inProcess?: boolean;
  /**
   * Another SQL dialect's set-up (MySQL): the orders table and the hand-rolled inbox, and orders added.
   * Default: PostgreSQL's.
   */
  dialect?: {
    createTables(tag: string): Promise<void>;
    addOrders(tag: string, orderNos: string[]): Promise<void>;
    /** Drops what the contest and the store made (tables, and the store's functions where it has them). */
    dropAll(tag: string): Promise<void>;
    /** The server's process names (`/proc/<pid>/comm`), to count its CPU when it runs on this machine. */
    serverProcesses?: readonly string[];
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
    // The store's claim functions outlive its table: a benchmark run left two in the database each time.
    dropAll: async (tag) => {
      await db.exec(`DROP TABLE IF EXISTS bench_orders_${tag}, bench_hand_inbox_${tag}, bench_inbox_${tag}`);
      await db.exec(
        `DROP FUNCTION IF EXISTS bench_inbox_${tag}_claim(text), bench_inbox_${tag}_take_v2(text, text, text, text, text)`,
      );
    },
    serverProcesses: ['postgres'],
  };
}

/**
 * The CPU time (user and system, microseconds) of this machine's processes named `names`, or undefined where
 * there is no `/proc` (or no such process): the database server's share of a delivery, when it runs here.
 */
function serverCpuUs(names: readonly string[] | undefined): number | undefined {
  if (names === undefined) return undefined;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const tickUs = 1_000_000 / 100; // USER_HZ: 100 on every Linux Node runs on
  let ticks = 0;
  let found = false;
  for (const pid of entries) {
    if (pid.charCodeAt(0) > 57) continue; // not a process
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(')');
      if (!names.includes(stat.slice(open + 1, close))) continue;
      const fields = stat.slice(close + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
      found = true;
    } catch {
      // A process that ended meanwhile.
    }
  }
  return found ? ticks * tickUs : undefined;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** What one contestant did over a stretch of deliveries. */
interface Tally {
  deliveries: number;
  ms: number;
  cpuUs: number;
}

const tally = (): Tally => ({ deliveries: 0, ms: 0, cpuUs: 0 });

/** Times one delivery into `into`: its wall time and this process's CPU time. */
async function timedOne(into: Tally, deliver: () => Promise<void>): Promise<void> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await deliver();
  into.ms += performance.now() - started;
  const used = process.cpuUsage(cpu);
  into.cpuUs += used.user + used.system;
  into.deliveries++;
}

/** Runs `deliver` over `requests`, one at a time: round trips and the server's CPU, each per delivery. */
async function counted(
  db: Database,
  serverProcesses: readonly string[] | undefined,
  requests: Delivery[],
  deliver: (request: Delivery) => Promise<void>,
): Promise<{ roundTrips: number; serverCpuUs: number | undefined }> {
  const trips = await db.roundTrips();
  const server = serverCpuUs(serverProcesses);
  for (const request of requests) await deliver(request);
  const serverAfter = serverCpuUs(serverProcesses);
  return {
    roundTrips: ((await db.roundTrips()) - trips) / requests.length,
    serverCpuUs:
      server === undefined || serverAfter === undefined ? undefined : (serverAfter - server) / requests.length,
  };
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
    const storeDeliver = async (request: Delivery) => {
      const { status } = await db.store(request);
      if (status !== 200) throw new Error(`bench: the store answered ${status}`);
    };
    const handDeliver = (request: Delivery) => handRolledDelivery(db, request);
    const newRequests = async () => {
      const fresh = Array.from({ length: db.perRound * 2 }, () => samplePaymentPaidEvent());
      await ordersFor(fresh);
      return { freshStore: fresh.slice(0, db.perRound).map(signed), freshHand: fresh.slice(db.perRound).map(signed) };
    };
    type Side = 'store' | 'hand';
    const deliver: Record<Side, (request: Delivery) => Promise<void>> = { store: storeDeliver, hand: handDeliver };
    // The warm-up rounds, each contestant on its own; not counted.
    for (let round = 0; round < WARM_UP_ROUNDS; round++) {
      const warm = await newRequests();
      for (const request of warm.freshStore) await storeDeliver(request);
      for (const request of warm.freshHand) await handDeliver(request);
      for (const event of seen) await storeDeliver(signed(event));
      for (const event of seen) await handDeliver(signed(event));
    }
    // The counting round, each contestant on its own (so the server's CPU is its alone): round trips and
    // the server's CPU per delivery. Not timed.
    const serverProcesses = db.inProcess === true ? undefined : dialect.serverProcesses;
    const counting = await newRequests();
    const counts: Record<`${Kind}:${Side}`, Awaited<ReturnType<typeof counted>>> = {
      'fresh:store': await counted(db, serverProcesses, counting.freshStore, storeDeliver),
      'fresh:hand': await counted(db, serverProcesses, counting.freshHand, handDeliver),
      'duplicate:store': await counted(db, serverProcesses, seen.map(signed), storeDeliver),
      'duplicate:hand': await counted(db, serverProcesses, seen.map(signed), handDeliver),
    };
    const rounds: Record<`${Kind}:${Side}`, Tally[]> = {
      'fresh:store': [],
      'fresh:hand': [],
      'duplicate:store': [],
      'duplicate:hand': [],
    };
    for (let round = 0; round < ROUNDS; round++) {
      const { freshStore, freshHand } = await newRequests();
      const requests: Record<`${Kind}:${Side}`, Delivery[]> = {
        'fresh:store': freshStore,
        'fresh:hand': freshHand,
        'duplicate:store': seen.map(signed),
        'duplicate:hand': seen.map(signed),
      };
      for (const kind of ['fresh', 'duplicate'] as const) {
        const tallies: Record<Side, Tally> = { store: tally(), hand: tally() };
        for (let i = 0; i < db.perRound; i++) {
          // Who goes first flips every pair: neither always runs right after the other's garbage.
          const order: Side[] = (i + round) % 2 === 0 ? ['store', 'hand'] : ['hand', 'store'];
          for (const side of order) {
            const request = requests[`${kind}:${side}`][i] as Delivery;
            await timedOne(tallies[side], () => deliver[side](request));
          }
        }
        rounds[`${kind}:store`].push(tallies.store);
        rounds[`${kind}:hand`].push(tallies.hand);
      }
    }
    console.log(
      `\n## ${storeName} vs hand-rolled transaction, ${db.name}, one delivery at a time, ${ROUNDS} rounds after ${WARM_UP_ROUNDS} of warm-up`,
    );
    const us = (value: number | undefined) => (value === undefined ? 'n/a' : `${Math.round(value)} us`);
    for (const kind of ['fresh', 'duplicate'] as const) {
      const store = rounds[`${kind}:store`];
      const hand = rounds[`${kind}:hand`];
      // Deliveries per second each, over the same stretch: the ratio is hand-rolled time over the store's.
      const ratios = store.map((s, i) => (hand[i] as Tally).ms / s.ms);
      const ratio = median(ratios);
      const met = ratio >= targets[kind];
      const perSec = (tallies: Tally[]) => median(tallies.map((t) => (t.deliveries * 1000) / t.ms));
      const cpu = (tallies: Tally[]) => median(tallies.map((t) => t.cpuUs / t.deliveries));
      const storeCount = counts[`${kind}:store`];
      const handCount = counts[`${kind}:hand`];
      console.log(
        `  ${kind.padEnd(9)} store ${Math.round(perSec(store))}/s, hand-rolled ${Math.round(perSec(hand))}/s: ` +
          `${ratio.toFixed(2)}x (range ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}; target >= ${targets[kind]}x) ` +
          `${met ? 'MET' : 'MISSED'}; round trips per delivery: store ${storeCount.roundTrips.toFixed(0)}, hand-rolled ${handCount.roundTrips.toFixed(0)}`,
      );
      console.log(
        `  ${''.padEnd(9)} CPU per delivery: this process, store ${us(cpu(store))}, hand-rolled ${us(cpu(hand))}; ` +
          `the server, store ${us(storeCount.serverCpuUs)}, hand-rolled ${us(handCount.serverCpuUs)}`,
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
    await (db.dialect ?? postgresDialect(db)).dropAll(tag).catch(() => {});
    await db.close();
  }
  return checks;
}

/**
 * A TypeORM logger (its `Logger` shape) that only counts the queries it is told of: TypeORM keeps its pool
 * to itself, and its query log sees every statement a contestant sends, BEGIN and COMMIT included. Give
 * the `DataSource` `logging: true` too.
 *
 * @example
 * ```ts
 * const dataSource = new DataSource({ type: 'mysql', url, logging: true, logger: queryCountingLogger(count) });
 * ```
 */
export function queryCountingLogger(count: () => void) {
  const ignore = () => {};
  return {
    logQuery: count,
    logQueryError: ignore,
    logQuerySlow: ignore,
    logSchemaBuild: ignore,
    logMigration: ignore,
    log: ignore,
  };
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
