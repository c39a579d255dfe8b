import type { InboxDraft } from '@service-pay/core';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';

// The first delivery on an empty database is credited: the store creates its inbox when a delivery finds
// it missing (autoMigrate, on by default), here with a payment id of core's longest, 256 characters.
const longest = `p_${'x'.repeat(254)}`;
const draft: InboxDraft = { paymentId: longest, deliveryId: 'dl_auto_migrate', source: 'webhook' };

describe('SqliteStore on an empty database', () => {
  it('creates its inbox on the first delivery and credits a 256-character payment id', async () => {
    const database = new Database(':memory:');
    try {
      const store = new SqliteStore({ database });
      const claim = await store.begin('auto:1', 'fp');
      if (claim.state !== 'claimed') throw new Error(`expected a claim, got ${claim.state}`);
      await claim.session.commit({ outcome: 'credited', ...draft });
      expect(await store.begin('auto:1', 'fp')).toEqual({ state: 'completed', fingerprint: 'fp' });
      const row = database.prepare('select payment_id from service_pay_inbox').get() as { payment_id: string };
      expect(row.payment_id).toBe(longest);
    } finally {
      database.close();
    }
  });

  it('with autoMigrate: false, says which store met the missing table and how to create it', async () => {
    const database = new Database(':memory:');
    try {
      await expect(new SqliteStore({ database, autoMigrate: false }).begin('k', 'fp')).rejects.toThrow(
        /^SqliteStore: the inbox table service_pay_inbox does not exist; run await store\.migrate\(\).*autoMigrate/,
      );
    } finally {
      database.close();
    }
  });
});
