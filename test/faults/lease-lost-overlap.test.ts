import { randomUUID } from 'node:crypto';
import {
  createWebhookHandler,
  type DedupeStore,
  MemoryDedupeStore,
  type PaymentPaidEvent,
  signWebhook,
  type WebhookLogger,
} from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { failFastRedisOptions, RedisDedupeStore } from '@service-pay/redis';
import { RedisServer } from '@service-pay/test-kit/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL } from '../support/postgres.js';

/**
 * Two attempts overlap after a lease is lost (row 8 of test/faults/README.md). Attempt A
 * credits in its own database transaction, confirms its lease, then hangs past its deadline (the heartbeat
 * stops, the lease runs out); the sender's retry B claims the key and credits too. A then commits and its
 * late completion records the key **whatever it finds**: B's next `ctx.confirmLease()`, right before its
 * COMMIT, throws, and B's credit rolls back. 1 credit, not 2. With a compare-and-set
 * completion, A's `complete` answered false and changed nothing, B's confirm passed, and B committed a
 * second credit.
 *
 * Credits go into a PostgreSQL table WITHOUT a unique constraint. Runs on a Redis server of its own and on
 * the memory store.
 */
const SECRET = 'whsec_fault_lease_lost_overlap_0123456789';
const LEASE_MS = 600;
const HANDLER_TIMEOUT_MS = 300;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let server: RedisServer;
let redis: Redis;
let pool: pg.Pool;
const table = `f_overlap_${Date.now().toString(36)}_credits`;

beforeAll(async () => {
  server = await RedisServer.start();
  redis = new Redis(server.url, failFastRedisOptions());
  // No offline queue: a command sent before the connection is ready fails at once (503), not later.
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 6 });
  await pool.query(`create table ${table} (payment_id text not null, attempt text not null)`);
});
afterAll(async () => {
  await pool?.query(`drop table if exists ${table}`);
  await pool?.end();
  redis?.disconnect();
  await server?.stop();
});

const stores: Array<[string, () => DedupeStore]> = [
  ['RedisDedupeStore', () => new RedisDedupeStore({ client: redis, keyPrefix: `overlap:${randomUUID()}:` })],
  ['MemoryDedupeStore', () => new MemoryDedupeStore()],
];

describe.each(stores)('two attempts overlap after a lease is lost (%s)', (_name, makeStore) => {
  it('the first to finish records completion; the second one’s confirmLease throws and its credit rolls back: 1 credit', async () => {
    const store = makeStore();
    const paid: PaymentPaidEvent = samplePaymentPaidEvent({ paymentId: `p_${randomUUID()}` });
    const logged: string[] = [];
    const logger: WebhookLogger = {
      warn: (fields) => logged.push(String(fields.code)),
      error: (fields) => logged.push(String(fields.code)),
    };
    let aCommitted!: () => void;
    const aDone = new Promise<void>((resolve) => {
      aCommitted = resolve;
    });
    const outcomes: Record<string, string> = {};
    let runs = 0;
    // Two app instances on one store: A's with a short deadline (it hangs past it), B's with a long one, so
    // B stops only because of what the store says, never because of its own deadline.
    const app = (handlerTimeoutMs: number) =>
      createWebhookHandler({
        secret: SECRET,
        store,
        logger,
        leaseMs: LEASE_MS,
        handlerTimeoutMs,
        onPaymentPaid: async (event, ctx) => {
          const attempt = runs++ === 0 ? 'A' : 'B';
          const client = await pool.connect();
          try {
            await client.query('begin');
            await client.query(`insert into ${table} (payment_id, attempt) values ($1, $2)`, [
              event.paymentId,
              attempt,
            ]);
            if (attempt === 'A') {
              await ctx.confirmLease(); // holds: nothing else has claimed the key yet
              // Stuck between its confirm and its COMMIT (a GC pause, a slow disk), ignoring ctx.signal, until
              // well after its lease ran out and B has claimed and credited.
              await sleep(LEASE_MS + 900);
            } else {
              await aDone; // B credits meanwhile and reaches its confirm only after A has finished
              await sleep(50); // A's late completion is on its way to the store
            }
            if (attempt === 'B') await ctx.confirmLease(); // right before COMMIT, as the core README asks
            await client.query('commit');
            outcomes[attempt] = 'committed';
          } catch (error) {
            await client.query('rollback');
            outcomes[attempt] = `rolled back: ${(error as Error).name}`;
            throw error;
          } finally {
            client.release();
            if (attempt === 'A') aCommitted();
          }
        },
      });
    const appA = app(HANDLER_TIMEOUT_MS);
    const appB = app(10_000);
    const send = (handle: typeof appA) => {
      const { body, headers } = signWebhook({ event: paid, secret: SECRET });
      return handle({ method: 'POST', headers, rawBody: body });
    };

    const a = await send(appA); // past its deadline: 500, the heartbeat stops, the lease is left to run out
    expect(a.status).toBe(500);
    await sleep(LEASE_MS + 300);
    const b = await send(appB); // the sender's retry: claims the key A lost, credits, then confirms
    const c = await send(appB); // the next retry finds the key completed

    const credits = await pool.query<{ attempt: string }>(`select attempt from ${table} where payment_id = $1`, [
      paid.paymentId,
    ]);
    console.log(
      'fault figures',
      JSON.stringify({
        store: _name,
        credits: credits.rows.length,
        outcomes,
        answers: [a.status, b.status, c.status],
        logged,
      }),
    );
    expect(outcomes).toEqual({ A: 'committed', B: expect.stringMatching(/^rolled back/) });
    expect(credits.rows).toEqual([{ attempt: 'A' }]);
    expect(b.status).toBe(500);
    expect(JSON.parse(b.body)).toMatchObject({ error: 'HANDLER_FAILED' }); // B's confirm threw, not a deadline
    expect(c.status).toBe(200);
    expect(JSON.parse(c.body)).toMatchObject({ duplicate: true });
    expect(logged.filter((code) => code === 'HANDLER_TIMEOUT').length).toBeGreaterThan(0);
    expect(logged).toContain('LEASE_LOST');
  });
});
