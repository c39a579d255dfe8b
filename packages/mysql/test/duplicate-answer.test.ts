import type { InboxDraft, TransactionalStore } from '@service-pay/core';
import { answerBeforeRollback } from '@service-pay/sql/testing';
import { rollbackGate, waitFor } from '@service-pay/test-kit';
import { Kysely, MysqlDialect } from 'kysely';
import mysqlCallbacks from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KyselyStore } from '../src/kysely.js';
import { MySqlStore } from '../src/mysql-store.js';
import { DATABASE_URL, openPool, uniqueName } from './support/database.js';

// A duplicate's transaction changes nothing, but on MySQL its claim holds the key's row (MariaDB's writing
// claim updates it, to learn that it was there) until its ROLLBACK. The store answers the duplicate without
// waiting for that ROLLBACK; a delivery of the same payment that meets the row's lock meanwhile reads the
// recorded row, and is a duplicate too, never "in progress". Proven by holding every ROLLBACK the pool's
// connections send behind a gate.

const draft: InboxDraft = { paymentId: 'p_dup', deliveryId: 'dl_dup', source: 'webhook' };

/** `begin` as the pipeline calls it, with the inbox row's draft (the writing claim). */
const deliver = (store: TransactionalStore<unknown>, key: string) => store.begin(key, 'fp', draft);

/** mysql2's callback pool, its connections' ROLLBACKs going through a gate. */
function gatedPool() {
  const pool = mysqlCallbacks.createPool({ uri: DATABASE_URL, connectionLimit: 6 });
  const gate = rollbackGate();
  pool.on('acquire', gate.patch);
  return { pool, gate };
}

describe.each([
  ['MySqlStore', (pool: mysqlCallbacks.Pool, tableName: string) => new MySqlStore({ pool: pool.promise(), tableName })],
  [
    'KyselyStore',
    (pool: mysqlCallbacks.Pool, tableName: string) =>
      new KyselyStore({ db: new Kysely<unknown>({ dialect: new MysqlDialect({ pool }) }), tableName }),
  ],
])('a duplicate on %s (MariaDB)', (_name, makeStore) => {
  let gated: ReturnType<typeof gatedPool>;
  let store: TransactionalStore<unknown> & { migrate(): Promise<void> };
  const inbox = uniqueName('dup_answer');

  beforeAll(async () => {
    gated = gatedPool();
    store = makeStore(gated.pool, inbox) as typeof store;
    await store.migrate();
  });
  afterAll(async () => {
    gated.gate.open();
    const plain = await openPool({ connectionLimit: 1 });
    await plain.query(`drop table if exists ${inbox}, ${inbox}_keys`);
    await plain.end();
    await new Promise((resolve) => gated.pool.end(resolve));
  });

  it('is answered before its ROLLBACK; the same payment meanwhile meets its lock, reads the row: a duplicate too', async () => {
    try {
      // Its ROLLBACK is sent and held: the answer is already there.
      expect(await answerBeforeRollback(store, gated.gate, 'k_dup')).toEqual({ state: 'completed', fingerprint: 'fp' });
      // The first duplicate still holds the row; this one meets that lock, reads the recorded row, and its own
      // ROLLBACK (held too) is waited for: it is answered once the gate opens.
      const second = deliver(store, 'k_dup');
      await waitFor(
        'the second duplicate to send its ROLLBACK',
        () => gated.gate.waiting === 2,
        { timeoutMs: 5_000 },
        5,
      );
      gated.gate.open();
      expect(await second).toEqual({ state: 'completed', fingerprint: 'fp' });
    } finally {
      gated.gate.open();
    }
  });

  it('a delivery under way is still "in progress" to another delivery of the same payment', async () => {
    const claim = await deliver(store, 'k_running');
    expect(claim.state).toBe('claimed');
    try {
      expect(await deliver(store, 'k_running')).toEqual({ state: 'in-progress', retryAfterMs: expect.any(Number) });
    } finally {
      if (claim.state === 'claimed') await claim.session.rollback(undefined);
    }
    // Rolled back: nothing recorded, the key is new again.
    const again = await deliver(store, 'k_running');
    expect(again.state).toBe('claimed');
    if (again.state === 'claimed') await again.session.rollback(undefined);
  });
});
