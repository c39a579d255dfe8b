import type { InboxDraft, TransactionalStore } from '@service-pay/core';
import { answerBeforeRollback } from '@service-pay/sql/testing';
import { rollbackGate, waitFor } from '@service-pay/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatedStore, MYSQL_CLIENTS } from './clients/index.js';
import { openPool, uniqueName } from './support/database.js';

// A duplicate's transaction changes nothing, but on MySQL its claim holds the key's row (MariaDB's writing
// claim updates it, to learn that it was there) until its ROLLBACK. The store answers the duplicate without
// waiting for that ROLLBACK; a delivery of the same payment that meets the row's lock meanwhile reads the
// recorded row, and is a duplicate too, never "in progress". Proven by holding every ROLLBACK the pool's
// connections send behind a gate.

const draft: InboxDraft = { paymentId: 'p_dup', deliveryId: 'dl_dup', source: 'webhook' };

/** `begin` as the pipeline calls it, with the inbox row's draft (the writing claim). */
const deliver = (store: TransactionalStore<unknown>, key: string) => store.begin(key, 'fp', draft);

// Every client whose ROLLBACK goes through a connection's `query`: a pool of its own, gated as lent.
for (const client of MYSQL_CLIENTS) {
  const gatedStore = client.gatedStore;
  if (gatedStore === undefined) continue;
  describe(`a duplicate on ${client.name} (MariaDB)`, () => {
    const gate = rollbackGate();
    let gated: GatedStore | undefined;
    let store: GatedStore['store'];
    const inbox = uniqueName('dup_answer');

    beforeAll(async () => {
      gated = await gatedStore(inbox, gate.patch);
      store = gated.store;
      await store.migrate();
    });
    afterAll(async () => {
      gate.open();
      const plain = await openPool({ connectionLimit: 1 });
      await plain.query(`drop table if exists ${inbox}, ${inbox}_keys`);
      await plain.end();
      await gated?.close();
    });

    it('is answered before its ROLLBACK; the same payment meanwhile meets its lock, reads the row: a duplicate too', async () => {
      try {
        // Its ROLLBACK is sent and held: the answer is already there.
        expect(await answerBeforeRollback(store, gate, 'k_dup')).toEqual({ state: 'completed', fingerprint: 'fp' });
        // The first duplicate still holds the row; this one meets that lock, reads the recorded row, and its own
        // ROLLBACK (held too) is waited for: it is answered once the gate opens.
        const second = deliver(store, 'k_dup');
        await waitFor('the second duplicate to send its ROLLBACK', () => gate.waiting === 2, { timeoutMs: 5_000 }, 5);
        gate.open();
        expect(await second).toEqual({ state: 'completed', fingerprint: 'fp' });
      } finally {
        gate.open();
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
}
