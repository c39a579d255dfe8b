import assert from 'node:assert/strict';
import type { InboxDraft, TransactionalStore } from '@service-pay/core';
import type { ConformanceCase } from '@service-pay/core/testing';
import { creditOnce } from './deliveries.js';

/** A store on a database of the test's own, and SQL outside any delivery to look at its inbox with. */
export interface EmptyDatabaseSubject {
  readonly name: string;
  readonly inbox: string;
  readonly store: TransactionalStore<unknown>;
  rows(text: string): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

const longest = `p_${'x'.repeat(254)}`;
const draft: InboxDraft = { paymentId: longest, deliveryId: 'dl_test', source: 'webhook' };

/**
 * The first delivery on an empty database is credited: each store creates its inbox when a delivery finds
 * it missing (autoMigrate, on by default), here with a payment id of core's longest, 256 characters. One
 * case per subject; `dropInbox` empties the database of what `migrate()` made.
 *
 * @example
 * ```ts
 * for (const c of autoMigrateCases({ keyColumn: 'key', dropInbox }, subjects)) it(c.name, c.run);
 * ```
 */
export function autoMigrateCases(
  database: { readonly keyColumn: string; dropInbox(subject: EmptyDatabaseSubject): Promise<unknown> },
  subjects: ReadonlyArray<() => Promise<EmptyDatabaseSubject>>,
): ConformanceCase[] {
  return subjects.map((open, i) => ({
    name: `store ${i} on an empty database creates its inbox on the first delivery and credits a 256-character payment id`,
    run: async () => {
      const subject = await open();
      try {
        await database.dropInbox(subject);
        const key = `auto:${Math.random()}`;
        // The inbox row is what is checked here: the handler writes nothing else.
        await creditOnce({ store: subject.store, credit: async () => {} }, key, longest);
        assert.deepEqual(await subject.store.begin(key, 'fp', draft), { state: 'completed', fingerprint: 'fp' });
        const [row] = await subject.rows(
          `select payment_id from ${subject.inbox} where ${database.keyColumn} = '${key}'`,
        );
        assert.equal(row?.payment_id, longest, subject.name);
      } finally {
        await subject.close();
      }
    },
  }));
}
