import { createWebhookHandler, type PaymentPaidEvent, PaymentRejectedError, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { runMigrations } from 'graphile-worker';
import type pg from 'pg';
import PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { DATABASE_URL, openPool, uniqueName } from './support/database.js';

/**
 * "Slow work: answer fast, credit in a worker" (README), run for real: the handler only enqueues a job
 * through `ctx.tx`, so the job commits with the inbox row or not at all. A failed attempt and a rejected
 * payment leave no job behind; the sender's retry enqueues exactly one. Jobs are counted in the queues' own
 * tables, which have no unique constraint on the payment.
 */
const SECRET = 'whsec_postgres_queue_tests_0123456789';
const quiet = { warn: () => {}, error: () => {} };
let pool: pg.Pool;
let store: PostgresStore;
const inbox = uniqueName('queue_inbox');

function delivery(event: PaymentPaidEvent) {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  return { method: 'POST', headers, rawBody: body };
}

/** A queue as the recipe uses it: a job sent on the delivery's own transaction, and the jobs counted. */
interface Queue {
  enqueue(event: PaymentPaidEvent, tx: pg.PoolClient): Promise<unknown>;
  jobsFor(paymentId: string): Promise<number>;
}

/** The recipe's handler: it enqueues through `ctx.tx`, then runs `after` (which may throw). */
function enqueuing(queue: Queue, after: (event: PaymentPaidEvent) => void = () => {}) {
  return createWebhookHandler({
    secret: SECRET,
    store,
    logger: quiet,
    onPaymentPaid: async (event, ctx) => {
      await queue.enqueue(event, ctx.tx);
      after(event);
    },
  });
}

/** `count(*)::int as n` of one query. */
const countOf = async (text: string, values: unknown[]) => Number((await pool.query(text, values)).rows[0].n);

/** An attempt that throws after sending leaves no job; its retry leaves exactly one. */
async function failedAttemptThenRetry(queue: Queue, message: string) {
  let calls = 0;
  const handle = enqueuing(queue, () => {
    if (++calls === 1) throw new Error(message);
  });
  const event = samplePaymentPaidEvent();
  expect((await handle(delivery(event))).status).toBe(500);
  expect(await queue.jobsFor(event.paymentId)).toBe(0);
  expect((await handle(delivery(event))).status).toBe(200);
  expect(await queue.jobsFor(event.paymentId)).toBe(1);
  return { handle, event };
}

/** A rejected payment leaves no job: its inbox row commits alone. */
async function rejectedLeavesNoJob(queue: Queue, reason: string) {
  const handle = enqueuing(queue, () => {
    throw new PaymentRejectedError(reason);
  });
  const event = samplePaymentPaidEvent();
  expect(JSON.parse((await handle(delivery(event))).body)).toEqual({ received: true, rejected: true });
  expect(await queue.jobsFor(event.paymentId)).toBe(0);
}

beforeAll(async () => {
  pool = await openPool();
  store = new PostgresStore({ pool, tableName: inbox });
  await store.migrate();
});
afterAll(async () => {
  await pool.query(`drop table if exists ${inbox}`);
  await pool.end();
});

describe('pg-boss: send(..., { db }) through ctx.tx', () => {
  const schema = uniqueName('pgboss');
  const queue = 'credit-order';
  let boss: PgBoss;

  beforeAll(async () => {
    boss = new PgBoss({ connectionString: DATABASE_URL, schema, max: 2 });
    boss.on('error', () => {});
    await boss.start();
    await boss.createQueue(queue);
  });
  afterAll(async () => {
    await boss.stop({ graceful: false, wait: true });
    await pool.query(`drop schema if exists ${schema} cascade`);
  });

  const bossQueue: Queue = {
    /** The recipe: the job is sent on the delivery's own transaction, nothing else is written. */
    enqueue: (event, tx) =>
      boss.send(
        queue,
        { paymentId: event.paymentId, orderNo: event.orderNo, amount: event.amount },
        { db: { executeSql: (text, values) => tx.query(text, values) } },
      ),
    jobsFor: (paymentId) =>
      countOf(`select count(*)::int as n from ${schema}.job where name = $1 and data->>'paymentId' = $2`, [
        queue,
        paymentId,
      ]),
  };

  it('a credited delivery commits its job with the inbox row; the duplicate sends none', async () => {
    const handle = enqueuing(bossQueue);
    const event = samplePaymentPaidEvent();
    expect((await handle(delivery(event))).status).toBe(200);
    const again = await handle(delivery(event));
    expect(JSON.parse(again.body)).toEqual({ received: true, duplicate: true });
    expect(await bossQueue.jobsFor(event.paymentId)).toBe(1);
  });

  it('an attempt that throws after sending leaves no job; the retry leaves exactly one', async () => {
    await failedAttemptThenRetry(bossQueue, 'the first attempt fails after its send');
  });

  it('a rejected payment leaves no job (its inbox row commits alone)', async () => {
    await rejectedLeavesNoJob(bossQueue, 'order cancelled');
  });

  it('a worker credits what was sent: 20 payments, each delivered 3 times, one throw each -> 20 credits', async () => {
    const credits = uniqueName('queue_credits');
    await pool.query(`create table ${credits} (payment_id text not null)`); // no unique: a double would show
    try {
      const thrown = new Set<string>();
      const handle = enqueuing(bossQueue, (event) => {
        if (!thrown.has(event.paymentId)) {
          thrown.add(event.paymentId);
          throw new Error('fails once after its send');
        }
      });
      const events = Array.from({ length: 20 }, () => samplePaymentPaidEvent());
      for (let round = 0; round < 3; round++) {
        await Promise.all(events.map((event) => handle(delivery(event))));
      }
      await boss.work<{ paymentId: string }>(queue, { batchSize: 50, pollingIntervalSeconds: 0.5 }, async (jobs) => {
        for (const job of jobs) await pool.query(`insert into ${credits} values ($1)`, [job.data.paymentId]);
      });
      const ids = events.map((e) => e.paymentId);
      const deadline = Date.now() + 20_000;
      let rows: Array<{ payment_id: string; n: number }> = [];
      while (Date.now() < deadline) {
        rows = (
          await pool.query(
            `select payment_id, count(*)::int as n from ${credits} where payment_id = any($1) group by payment_id`,
            [ids],
          )
        ).rows;
        if (rows.length === ids.length) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await boss.offWork(queue);
      expect(rows.length).toBe(20);
      expect(rows.every((row) => row.n === 1)).toBe(true);
    } finally {
      await pool.query(`drop table if exists ${credits}`);
    }
  });
});

describe('graphile-worker: add_job(...) in SQL through ctx.tx', () => {
  const schema = uniqueName('gworker');

  beforeAll(async () => {
    await runMigrations({ connectionString: DATABASE_URL, schema });
  });
  afterAll(async () => {
    await pool.query(`drop schema if exists ${schema} cascade`);
  });

  const graphileQueue: Queue = {
    /** The recipe: `add_job` is a SQL function, so the job is a row of the delivery's own transaction. */
    enqueue: (event, tx) =>
      tx.query(`select ${schema}.add_job('credit_order', json_build_object('paymentId', $1::text), job_key := $2)`, [
        event.paymentId,
        `credit:${event.paymentId}`,
      ]),
    jobsFor: (paymentId) =>
      countOf(`select count(*)::int as n from ${schema}._private_jobs where key = $1`, [`credit:${paymentId}`]),
  };

  it('a credited delivery commits its job; a throw after add_job leaves none; the retry exactly one', async () => {
    const { handle, event } = await failedAttemptThenRetry(graphileQueue, 'the first attempt fails after add_job');
    expect(JSON.parse((await handle(delivery(event))).body)).toEqual({ received: true, duplicate: true });
    expect(await graphileQueue.jobsFor(event.paymentId)).toBe(1);
  });

  it('a rejected payment leaves no job', async () => {
    await rejectedLeavesNoJob(graphileQueue, 'amount below the order total');
  });
});
