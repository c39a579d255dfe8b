import { createServiceClient } from '@service-pay/client';
import {
  generateMerchant,
  type PayOptions,
  type RetryOptions,
  type Simulator,
  startSimulator,
} from '@service-pay/simulator';
import { describeLost, type LostKind, lostKinds, lostPayments } from '@service-pay/test-kit/fault-rows';
import { type RedisPersistence, RedisServer } from '@service-pay/test-kit/redis';
import type pg from 'pg';
import { connectPostgres, POSTGRES_URL } from '../../support/postgres.js';
import { type AppEvent, FaultAppProcess, type Framework } from './fault-app-process.js';

export interface FaultRunOptions {
  /** Names the credits table and the figures line. */
  name: string;
  persistence?: RedisPersistence;
  /** One app process per entry, named `<framework>-<index>`; an entry's `env` adds to `appEnv`. */
  apps: readonly (Framework | { framework: Framework; env: Record<string, string> })[];
  /** FAULT_* settings of every app (see fixtures/fault-app.ts). */
  appEnv?: Record<string, string>;
  /** The sender's schedule. */
  retry: RetryOptions;
}

/**
 * One fault scenario's world: its own redis-server, the simulator as the sender, 2-3 fixture app
 * processes sharing that Redis, and a credits table without a unique constraint in the machine's
 * PostgreSQL. `stop()` takes all of it down, whatever state the test left it in.
 */
export class FaultRun {
  private constructor(
    readonly name: string,
    readonly table: string,
    readonly db: pg.Client,
    readonly redis: RedisServer,
    readonly sim: Simulator,
    readonly client: ReturnType<typeof createServiceClient>,
    readonly apps: FaultAppProcess[],
  ) {}

  static async start(options: FaultRunOptions): Promise<FaultRun> {
    const table = `fault_${options.name.replace(/\W/g, '_')}_${Date.now()}_${process.pid}_credits`.toLowerCase();
    const started: { stop(): Promise<unknown> }[] = [];
    try {
      const db = await connectPostgres();
      started.push({ stop: () => db.end() });
      // No unique constraint, on purpose: a payment credited twice is two rows.
      await db.query(
        `create table ${table} (payment_id text not null, delivery_id text not null, app text not null,
         credited_at timestamptz not null default clock_timestamp())`,
      );
      started.push({ stop: () => db.query(`drop table if exists ${table}`) });
      const redis = await RedisServer.start({ persistence: options.persistence ?? 'none' });
      started.push(redis);
      const merchant = generateMerchant({ name: 'faults', confirmations: 1 });
      const sim = await startSimulator({ merchants: [merchant], retry: options.retry, seed: 20261121 });
      started.push(sim);
      const client = createServiceClient({ baseUrl: sim.url, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
      const env = {
        FAULT_REDIS_URL: redis.url,
        FAULT_DATABASE_URL: POSTGRES_URL,
        FAULT_CREDITS_TABLE: table,
        FAULT_WEBHOOK_SECRET: merchant.webhookSecret,
        ...options.appEnv,
      };
      const apps = await Promise.all(
        options.apps.map((entry, i) => {
          const { framework, env: own } = typeof entry === 'string' ? { framework: entry, env: {} } : entry;
          return FaultAppProcess.start(`${framework}-${i + 1}`, framework, { ...env, ...own });
        }),
      );
      return new FaultRun(options.name, table, db, redis, sim, client, apps);
    } catch (error) {
      await stopAll(started.reverse());
      throw error;
    }
  }

  /** The apps' webhook URLs, for `deliverTo`. */
  get webhookUrls(): string[] {
    return this.apps.map((a) => a.webhookUrl);
  }

  /** Creates `count` PENDING payments through the merchant API client. */
  async createPayments(count: number): Promise<string[]> {
    const ids: string[] = new Array(count);
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const i = next++;
        const payment = await this.client.createPayment({
          orderNo: `${this.name}-${i}`,
          tokenSymbol: i % 2 === 0 ? 'USDT' : 'USDC',
          amount: `${10 + (i % 90)}.${String(i % 100).padStart(2, '0')}`,
          expireSec: 3600,
          notifyUrl: this.apps[0]?.webhookUrl as string,
        });
        ids[i] = payment.paymentId;
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    return ids;
  }

  /** Pays every payment at once, each with the options `optionsFor` gives it. */
  async pay(ids: readonly string[], optionsFor: (id: string, i: number) => PayOptions): Promise<void> {
    await Promise.all(ids.map((id, i) => this.sim.pay(id, optionsFor(id, i))));
  }

  /** Every app's events named `ev`, in time order. */
  events(ev: string): AppEvent[] {
    return this.apps.flatMap((a) => a.of(ev)).sort((x, y) => x.at - y.at);
  }

  /** Credit rows per payment id, from the table without a unique constraint. */
  async credits(): Promise<Map<string, number>> {
    const { rows } = await this.db.query<{ payment_id: string; n: string }>(
      `select payment_id, count(*) as n from ${this.table} group by payment_id`,
    );
    return new Map(rows.map((r) => [r.payment_id, Number(r.n)]));
  }

  /**
   * The figures every fault test prints: payments, double (credited more than once), lost (never
   * credited), the sender's attempts and what they were answered, and what the apps saw.
   */
  async figures(ids: readonly string[]): Promise<Figures> {
    const credits = await this.credits();
    const deliveries = this.sim.deliveries();
    // The Redis store's record is not an inbox row committed with the credit: there is none to read here.
    const lost = lostPayments(ids, credits, (id) => this.sim.deliveries({ paymentId: id }), undefined);
    const attempts = deliveries.flatMap((d) => d.attempts);
    const answered: Record<string, number> = {};
    for (const a of attempts) {
      const key = a.status === null ? a.outcome : String(a.status);
      answered[key] = (answered[key] ?? 0) + 1;
    }
    return {
      payments: ids.length,
      double: ids.filter((id) => (credits.get(id) ?? 0) > 1).length,
      lost: lost.length,
      lostKinds: lostKinds(lost),
      attempts: attempts.length,
      deliveries: deliveries.length,
      deliveriesFailed: deliveries.filter((d) => d.state === 'failed').length,
      answered,
      handlerRuns: this.events('run').length,
      aborts: this.events('abort').length,
      confirmFailures: this.events('confirm-failed').length,
      credits: this.events('credit').length,
      doubleIds: ids.filter((id) => (credits.get(id) ?? 0) > 1),
      lostIds: lost.map((p) => p.paymentId),
      lostWhy: describeLost(lost),
    };
  }

  /** Prints the figures as one JSON line (the ids left out), tagged with the row and what the test did. */
  report(figures: Figures, did: Record<string, unknown>): void {
    const { doubleIds: _d, lostIds: _l, lostWhy, ...shown } = figures;
    console.log(`fault figures ${JSON.stringify({ row: this.name, ...shown, ...did })}`);
    if (lostWhy !== '') console.log(lostWhy);
    if (process.env.FAULT_VERBOSE === '1') {
      // What the pipeline logged, counted by level, code and message: where to look when a row fails.
      const counts = new Map<string, number>();
      for (const e of this.events('log')) {
        const key = `${e.level} ${e.code ?? '-'} ${e.msg}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      console.log(`fault logs ${this.name}:\n${[...counts].map(([k, n]) => `  ${n} x ${k}`).join('\n')}`);
    }
  }

  /** Stops every app, the simulator and Redis, and drops the table; each step runs even if one fails. */
  async stop(): Promise<void> {
    await stopAll([
      ...this.apps,
      this.sim,
      this.redis,
      { stop: () => this.db.query(`drop table if exists ${this.table}`) },
      { stop: () => this.db.end() },
    ]);
  }
}

export interface Figures {
  payments: number;
  double: number;
  lost: number;
  /** The lost payments by kind: answered 2xx without a credit (a defect), or the sender gave up. */
  lostKinds: Partial<Record<LostKind, number>>;
  attempts: number;
  deliveries: number;
  deliveriesFailed: number;
  /** Attempts by HTTP status, or by outcome (timeout, network-error) when there was no answer. */
  answered: Record<string, number>;
  handlerRuns: number;
  aborts: number;
  confirmFailures: number;
  credits: number;
  doubleIds: string[];
  lostIds: string[];
  /** Each lost payment with why (`describeLost`): its verdict and the sender's attempts; '' for none. */
  lostWhy: string;
}

async function stopAll(things: readonly { stop(): Promise<unknown> }[]): Promise<void> {
  const failures: unknown[] = [];
  for (const thing of things) {
    try {
      await thing.stop();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw new AggregateError(failures, 'cleanup failed');
}

export { sleep } from '@service-pay/test-kit';

/** Describes up to five payment ids, for an assertion's message. */
export function some(ids: readonly string[]): string {
  return ids.length === 0 ? 'none' : `${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', ...' : ''}`;
}
