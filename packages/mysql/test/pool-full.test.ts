import {
  createWebhookHandler,
  StorePoolFullError,
  StoreTimeoutError,
  signWebhook,
  type TransactionalStore,
} from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { waitFor } from '@service-pay/test-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { MYSQL_CLIENTS, type PoolToFill } from './clients/index.js';
import { openPool, uniqueName } from './support/database.js';

const SECRET = 'whsec_mysql_pool_full_0123456789abcdef';

// A pool whose only connection another request holds answers `begin` late: logged as a full pool (its size,
// in use, waiting, code STORE_POOL_FULL), not as a database that does not answer. Every client whose pool
// shows its counts runs it (each client's file says why it does not, where it does not).
for (const client of MYSQL_CLIENTS) {
  const poolToFill = client.poolToFill;
  if (poolToFill === undefined) continue;
  describe(`a full pool under ${client.name}`, () => {
    const inbox = uniqueName('pool_full');
    let one: PoolToFill | undefined;
    afterAll(async () => {
      if (one === undefined) return;
      await one.close();
      const plain = await openPool({ connectionLimit: 1 });
      await plain.query(`drop table if exists ${inbox}, ${inbox}_keys`);
      await plain.end();
    });

    it('answers 503 with StorePoolFullError { size 1, 1 in use, 1 waiting }', async () => {
      one = await poolToFill(inbox);
      const store = one.store;
      await store.migrate();
      const logged: Array<{ message: string; err: unknown }> = [];
      const handle = createWebhookHandler({
        secret: SECRET,
        store: store as TransactionalStore<unknown>,
        storeTimeoutMs: 300,
        logger: {
          warn: () => {},
          error: (fields, message) => logged.push({ message: String(message), err: (fields as { err?: unknown }).err }),
        },
        onPaymentPaid: async () => {},
      });
      const free = await one.holdPool(); // another request holds the only connection
      let status: number;
      try {
        const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
        status = (await handle({ method: 'POST', headers, rawBody: body })).status;
      } finally {
        await free();
      }
      expect(status).toBe(503);
      const err = logged[0]?.err as StorePoolFullError;
      expect(err).toBeInstanceOf(StorePoolFullError);
      expect(err.code).toBe('STORE_POOL_FULL');
      expect(err.pool).toEqual({ size: 1, inUse: 1, waiting: 1 });
      expect(err.cause).toBeInstanceOf(StoreTimeoutError);
      expect(logged[0]?.message).toMatch(/^The store's connection pool was full \(size 1, 1 in use, 1 waiting\)/);
      // The begin that came late gets the connection once freed and is rolled back by the pipeline.
      const filled = one;
      await waitFor('the late begin to be rolled back', () => filled.idle(), { timeoutMs: 10_000 });
    });
  });
}
