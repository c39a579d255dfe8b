import { fileURLToPath } from 'node:url';
import { type PaymentPaidEvent, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { AppProcess, retryUntil, testDeadline, waitFor } from '@service-pay/test-kit';
import { PostgresServer } from '@service-pay/test-kit/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';

// A PostgreSQL restart must never crash the app, even one whose pool has no 'error' listener (the README
// of an earlier release built it that way, and an Express app died on 57P01). The store listens: an idle
// client's error is warned about once, on the console, when the app has no listener of its own.
const SECRET = 'whsec_pool_errors_tests_0123456789abcdef';

let server: PostgresServer;
let app: AppProcess;
let db: pg.Pool;

beforeAll(async () => {
  server = await PostgresServer.start();
  db = new pg.Pool({ connectionString: server.url, max: 2 });
  db.on('error', () => {}); // the test's own pool; the server is stopped on purpose below
  await db.query('create table credits (payment_id text not null)');
  await new PostgresStore({ pool: db }).migrate();
  app = await AppProcess.start({
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    fixture: 'test/fixtures/newcomer-app.ts',
    env: { DATABASE_URL: server.url, WEBHOOK_SECRET: SECRET },
  });
}, 90_000);

afterAll(async () => {
  await app?.stop();
  await db?.end().catch(() => {});
  await server?.stop();
});

async function deliver(event: PaymentPaidEvent): Promise<number> {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  const response = await fetch(app.url, { method: 'POST', body, headers, signal: AbortSignal.timeout(10_000) });
  await response.text();
  return response.status;
}

/** What the app said about an idle connection of its pool failing (the store's one warning). */
const warnings = () =>
  app.stderr.filter((line) => line.includes('PostgresStore: an idle connection of the pool failed'));

describe('PostgreSQL stopped and restarted under an app whose pool has no error listener', () => {
  it('keeps the process up: 503s during the outage, one credit after the restart, one warning', async ({ task }) => {
    const deadline = testDeadline(task);
    const before = samplePaymentPaidEvent();
    expect(await deliver(before)).toBe(200); // the pool now holds idle clients

    await server.stopImmediate(); // every backend killed: the idle clients emit 'error' on the pool
    await waitFor('the warning about the idle connection', () => warnings().length > 0, { deadline });
    const during = samplePaymentPaidEvent();
    for (let i = 0; i < 3; i++) expect(await deliver(during)).toBe(503);
    expect(app.alive).toBe(true);

    await server.startAgain();
    // The sender retries until answered 200, within the test's time.
    const status = await retryUntil(
      'a 200 after the restart',
      () => deliver(during),
      (s) => s === 200,
      { deadline },
      200,
    );
    expect(status).toBe(200);
    expect(await deliver(during)).toBe(200); // a duplicate
    expect(app.alive).toBe(true);
    const credits = await db.query<{ n: number }>('select count(*)::int as n from credits where payment_id = $1', [
      during.paymentId,
    ]);
    expect(credits.rows[0]?.n).toBe(1);
    expect(warnings()).toHaveLength(1);
  });
});
