import { createServer, type Server, type Socket } from 'node:net';
import {
  createWebhookHandler,
  type PaymentPaidEvent,
  StorePoolFullError,
  StoreTimeoutError,
  signWebhook,
  type TransactionalStore,
} from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { waitFor } from '@service-pay/test-kit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { POSTGRES_CLIENTS } from './clients/index.js';
import { openPool, uniqueName } from './support/database.js';

const SECRET = 'whsec_postgres_pool_full_0123456789abc';

interface Logged {
  message: string;
  err: unknown;
}

/**
 * One delivery through a handler on `store`, by default with a short storeTimeoutMs (the full pool is found
 * that soon); its status and its error lines.
 */
async function deliver(
  store: TransactionalStore<unknown>,
  event: PaymentPaidEvent,
  storeTimeoutMs = 300,
): Promise<[number, Logged[]]> {
  const logged: Logged[] = [];
  const handle = createWebhookHandler({
    secret: SECRET,
    store,
    storeTimeoutMs,
    logger: {
      warn: () => {},
      error: (fields, message) => logged.push({ message: String(message), err: (fields as { err?: unknown }).err }),
    },
    onPaymentPaid: async () => {},
  });
  const { body, headers } = signWebhook({ event, secret: SECRET });
  return [(await handle({ method: 'POST', headers, rawBody: body })).status, logged];
}

// A pool whose every connection is taken answers `begin` late: that is a full pool (its size, in use,
// waiting), not a database that does not answer, and the log says which.
describe('a full connection pool is named as such', () => {
  const inbox = uniqueName('pool_full');
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = await openPool({ max: 1 });
    await new PostgresStore({ pool, tableName: inbox }).migrate();
  });
  afterAll(async () => {
    await pool.query(`drop table if exists ${inbox} cascade`);
    await pool.query(`drop function if exists ${inbox}_claim, ${inbox}_take_v2`);
    await pool.end();
  });

  /** Runs `deliver` while the one connection of the store's pool is held elsewhere, then frees it. */
  async function withPoolTaken(hold: () => Promise<() => void>, store: TransactionalStore<unknown>) {
    const free = await hold();
    try {
      return await deliver(store, samplePaymentPaidEvent({ paymentId: `p_${Math.random()}` }));
    } finally {
      free();
    }
  }

  const expectPoolFull = ([status, logged]: [number, Logged[]]) => {
    expect(status).toBe(503);
    expect(logged.map((l) => l.message)).toEqual([
      "The store's connection pool was full (size 1, 1 in use, 1 waiting) for storeTimeoutMs; answered 503 so the sender retries later. The database itself may be fine: size the pool for the deliveries (and the other work) that share it, and keep onPaymentPaid from holding ctx.tx on slow work.",
    ]);
    const err = logged[0]?.err as StorePoolFullError;
    expect(err).toBeInstanceOf(StorePoolFullError);
    expect(err.code).toBe('STORE_POOL_FULL');
    expect(err.pool).toEqual({ size: 1, inUse: 1, waiting: 1 });
    expect(err.cause).toBeInstanceOf(StoreTimeoutError);
  };

  // Every client that can fill a pool of its own: its store on a pool of one, the app holding that one.
  for (const client of POSTGRES_CLIENTS) {
    const poolToFill = client.poolToFill;
    if (poolToFill === undefined) continue;
    it(`${client.name}: the full pool is named, and once it is free deliveries go through`, async () => {
      const one = await poolToFill(inbox);
      try {
        expectPoolFull(await withPoolTaken(() => one.holdPool(), one.store));
        // The begin that came late is rolled back by the pipeline; its connection goes back. Bounded at
        // 10 s, not 300 ms: on a loaded machine the COMMIT of a free pool once took longer than 300 ms, and a
        // commit past its bound is a 500.
        await waitFor('the late begin to be rolled back', () => one.idle(), { timeoutMs: 10_000 }, 20);
        const [status, logged] = await deliver(
          one.store,
          samplePaymentPaidEvent({ paymentId: `p_${Math.random()}` }),
          10_000,
        );
        expect({ status, logged: logged.map((l) => l.message) }).toEqual({ status: 200, logged: [] });
      } finally {
        await one.close();
      }
    });
  }

  it('a database that does not answer (the pool not full) keeps the timeout message', async () => {
    // Accepts connections and never answers, as a hung server or a black-holed network does.
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const stuck = new pg.Pool({
      host: '127.0.0.1',
      port,
      user: 'x',
      database: 'x',
      max: 4,
      connectionTimeoutMillis: 1_000,
    });
    stuck.on('error', () => {});
    try {
      const [status, logged] = await deliver(
        new PostgresStore({ pool: stuck, tableName: inbox }),
        samplePaymentPaidEvent(),
      );
      expect(status).toBe(503);
      expect(logged.map((l) => l.message)).toEqual([
        'The store did not answer within storeTimeoutMs; answered 503 so the sender retries later.',
      ]);
      expect(logged[0]?.err).toBeInstanceOf(StoreTimeoutError);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      await stuck.end();
    }
  });
});
