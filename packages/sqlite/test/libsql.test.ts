import { createWebhookHandler, type PaymentPaidEvent, signWebhook, type WebhookRequest } from '@service-pay/core';
import { samplePaymentPaidEvent, transactionalStoreConformance } from '@service-pay/core/testing';
import Database from 'libsql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { scratchFolder } from './support/database.js';

/**
 * libsql (Turso's `libsql` package: a better-sqlite3-compatible, synchronous API on local files) behind the
 * same seam, unchanged: the conformance suite, a second connection answered at once while the first holds
 * the write lock, and the handler end to end. (`@libsql/client`, the async and remote client, is another API
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
  const folder = scratchFolder();
  let db: Database.Database;
  let app: Database.Database;
  const count = (marker: string) =>
    (app.prepare('select count(*) as n from marks where marker = ?').get(marker) as { n: number }).n;

  beforeAll(async () => {
    db = new Database(folder.file('shop.db'));
    db.pragma('journal_mode = WAL');
    app = new Database(folder.file('shop.db'));
    await new SqliteStore({ database: db }).migrate();
    app.exec('create table marks (marker text not null)');
  });
  afterAll(() => {
    db.close();
    app.close();
    folder.remove();
  });

  describe('transactional conformance', () => {
    const writes = {
      write: async (tx: Database.Database, marker: string) => {
        tx.prepare('insert into marks (marker) values (?)').run(marker);
      },
      count: async (marker: string) => count(marker),
    };
    // SQLite has one writer: see conformance.test.ts for "keys are independent".
    for (const c of transactionalStoreConformance(() => new SqliteStore({ database: db }), writes)) {
      if (c.name === 'keys are independent') it.skip(`${c.name} (SQLite: one writer at a time)`, c.run);
      else it(c.name, c.run);
    }
  });

  it('answers a second connection at once while the first holds the write lock', async () => {
    const other = new Database(folder.file('shop.db'));
    try {
      const first = await new SqliteStore({ database: db }).begin('lock:first', 'fp');
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
    let calls = 0;
    const handle = createWebhookHandler({
      secret: SECRET,
      store: new SqliteStore({ database: db }),
      logger: { warn: () => {}, error: () => {} },
      onPaymentPaid: async (paid, ctx) => {
        calls += 1;
        ctx.tx.prepare('insert into marks (marker) values (?)').run(paid.paymentId);
        if (calls === 1) throw new Error('the first attempt fails after writing its credit');
      },
    });
    expect((await handle(delivery(event, 1))).status).toBe(500);
    expect(count(event.paymentId)).toBe(0);
    expect((await handle(delivery(event, 2))).status).toBe(200);
    expect((await handle(delivery(event, 3))).body).toContain('duplicate');
    expect(count(event.paymentId)).toBe(1);
  });
});
