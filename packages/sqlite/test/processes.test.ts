import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { type PaymentPaidEvent, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { AppProcess } from '@service-pay/test-kit';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, scratchFolder } from './support/database.js';

const SECRET = 'whsec_sqlite_store_process_tests_0123456789';
const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** One attempt of the sender over real HTTP: signed now, with a fresh delivery id. */
async function deliver(url: string, event: PaymentPaidEvent): Promise<{ status: number; code: string | undefined }> {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(20_000) });
  const text = await response.text();
  return { status: response.status, code: text ? (JSON.parse(text) as { error?: string }).error : undefined };
}

describe('SqliteStore across processes (one database file, several app processes)', () => {
  const folder = scratchFolder();
  const file = folder.file('shop.db');
  let db: Database.Database;
  const apps: AppProcess[] = [];
  const start = async (instance: string, fault = '') => {
    const app = await AppProcess.start({
      cwd: packageDir,
      env: { DATABASE_FILE: file, WEBHOOK_SECRET: SECRET, INSTANCE: instance, FAULT: fault },
    });
    apps.push(app);
    return app;
  };
  const credits = (paymentId: string) =>
    (db.prepare('select count(*) as n from credits where payment_id = ?').get(paymentId) as { n: number }).n;
  const event = () => samplePaymentPaidEvent({ paymentId: `p_${randomUUID()}` });

  beforeAll(() => {
    db = open(file);
    // No unique constraint: a second credit of a payment would show.
    db.exec('create table credits (payment_id text not null, instance text not null)');
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    db.close();
    folder.remove();
  });

  it('5 simultaneous deliveries of one payment over 3 processes: 1 credit, the rest 409 or duplicate', async () => {
    const processes = await Promise.all([start('a'), start('b'), start('c')]);
    const paid = event();
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) => deliver((processes[i % 3] as AppProcess).url, paid)),
    );
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1);
    for (const a of answers) expect([200, 409]).toContain(a.status);
    // The sender retries the 409s: each is a duplicate now.
    const busy = answers.filter((a) => a.status === 409);
    for (const a of busy) expect(a.code).toBe('DELIVERY_IN_PROGRESS');
    for (let i = 0; i < busy.length; i++) {
      expect((await deliver((processes[i % 3] as AppProcess).url, paid)).status).toBe(200);
    }
    expect(credits(paid.paymentId)).toBe(1);
  });

  it('an app SIGKILLed holding the transaction after writing its credit: the key is free at once, 1 credit after the retry', async () => {
    const holder = await start('holder', 'hold');
    const healthy = await start('healthy');
    const paid = event();
    const first = deliver(holder.url, paid).catch((error: unknown) => error);
    await holder.holding(paid.paymentId);
    // While it holds the write lock, any other process answers in-progress at once.
    expect(await deliver(healthy.url, paid)).toMatchObject({ status: 409, code: 'DELIVERY_IN_PROGRESS' });
    await holder.kill();
    await first;
    expect(credits(paid.paymentId)).toBe(0);
    expect((await deliver(healthy.url, paid)).status).toBe(200);
    expect((await deliver(healthy.url, paid)).status).toBe(200);
    expect(credits(paid.paymentId)).toBe(1);
  });

  it('a handler that credits then throws rolls back: the retry on another process credits once', async () => {
    const failing = await start('failing', 'throw');
    const healthy = await start('healthy-2');
    const paid = event();
    expect(await deliver(failing.url, paid)).toMatchObject({ status: 500, code: 'HANDLER_FAILED' });
    expect(credits(paid.paymentId)).toBe(0);
    expect((await deliver(healthy.url, paid)).status).toBe(200);
    expect((await deliver(failing.url, paid)).status).toBe(200); // duplicate: its handler does not run again
    expect(credits(paid.paymentId)).toBe(1);
  });
});
