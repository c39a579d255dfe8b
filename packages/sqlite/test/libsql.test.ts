import { createWebhookHandler, type PaymentPaidEvent, signWebhook, type WebhookRequest } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { expectFailedAttemptThenOneCredit, failsFirstAttempt } from '@service-pay/test-kit/credit-once';
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { countMarks, marksFile } from './support/marks.js';

/**
 * libsql (Turso's `libsql` package: a better-sqlite3-compatible, synchronous API on local files) behind the
 * same seam, unchanged: the SQL stores' cases with core's conformance (clients.test.ts), a second
 * connection answered at once while the first holds the write lock, and the handler end to end. (`@libsql/client`, the async and remote client, is another API
 * and is not supported: see the README.)
 */
const SECRET = 'whsec_sqlite_libsql_tests_0123456789';

function delivery(event: PaymentPaidEvent, attempt: number): WebhookRequest {
  const { body, headers } = signWebhook({
    event,
    secret: SECRET,
    deliveryId: `dl_libsql_${event.paymentId}_${attempt}`,
  });
  return { method: 'POST', headers, rawBody: body };
}

describe('SqliteStore on libsql', () => {
  const file = marksFile((path) => {
    const connection = new Database(path);
    connection.pragma('journal_mode = WAL');
    return connection;
  });

  it('answers a second connection at once while the first holds the write lock', async () => {
    const other = new Database(file.path);
    try {
      const first = await new SqliteStore({ database: file.db }).begin('lock:first', 'fp');
      if (first.state !== 'claimed') throw new Error(`expected a claim, got ${first.state}`);
      const started = Date.now();
      expect((await new SqliteStore({ database: other }).begin('lock:second', 'fp')).state).toBe('in-progress');
      expect(Date.now() - started).toBeLessThan(1_000); // the busy timeout (5 s by default) was not waited
      await first.session.commit({ outcome: 'credited', paymentId: 'p_l', deliveryId: 'dl_l', source: 'webhook' });
      expect(await new SqliteStore({ database: other }).begin('lock:first', 'fp')).toEqual({
        state: 'completed',
        fingerprint: 'fp',
      });
    } finally {
      other.close();
    }
  });

  it('credits once through ctx.tx; a throw after the write rolls it back and the retry credits once', async () => {
    const event = samplePaymentPaidEvent();
    const failing = failsFirstAttempt('the first attempt fails after writing its credit');
    const handle = createWebhookHandler({
      secret: SECRET,
      store: new SqliteStore({ database: file.db }),
      logger: { warn: () => {}, error: () => {} },
      onPaymentPaid: async (paid, ctx) => {
        ctx.tx.prepare('insert into marks (marker) values (?)').run(paid.paymentId);
        failing.afterCredit();
      },
    });
    await expectFailedAttemptThenOneCredit(
      (attempt) => handle(delivery(event, attempt)),
      async () => countMarks(file, event.paymentId),
    );
  });
});
