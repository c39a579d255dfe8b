import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebhookHandler, signWebhook, type WebhookStore } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { PostgresStore } from '@service-pay/postgres';
import { SqliteStore } from '@service-pay/sqlite';
import { testServers } from '@service-pay/test-kit';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run-cli.js';

const DATABASE_URL = testServers().postgresUrl;
const SECRET = 'whsec_payments_command';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

/** A payment whose handler failed twice, on `store`: what the command must then show. */
async function failTwice(store: WebhookStore) {
  const handle = createWebhookHandler({
    secret: SECRET,
    store,
    logger: { warn() {}, error() {} },
    onPaymentPaid: () => {
      throw new Error('column "paid_at" does not exist');
    },
  });
  const event = samplePaymentPaidEvent({ amount: '42.00' });
  for (let i = 0; i < 2; i++) {
    const { body, headers } = signWebhook({ event, secret: SECRET });
    expect((await handle({ method: 'POST', headers, rawBody: body })).status).toBe(500);
  }
  return event;
}

describe('service-pay payments', () => {
  const table = `cli_inbox_${Date.now().toString(36)}`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL });
  const folder = mkdtempSync(join(tmpdir(), 'service-pay-cli-'));
  afterAll(async () => {
    await pool.query(`drop table if exists ${table}_ledger`);
    await pool.query(`drop table if exists ${table}`);
    await pool.end();
    rmSync(folder, { recursive: true, force: true });
  });

  it('lists the failing payments of a PostgreSQL store as a table, and tells one payment story', async () => {
    const event = await failTwice(new PostgresStore({ pool, tableName: table }));
    const listed = capture();
    expect(await runCli(['payments', '--database-url', DATABASE_URL, '--table', table], listed.io)).toBe(0);
    const text = listed.out.join('\n');
    expect(text).toMatch(/^1 failing, 0 flagged, 0 closed/);
    expect(text).toContain(event.paymentId);
    expect(text).toContain('HANDLER_FAILED: column "paid_at" does not exist');
    expect(text).toMatch(/failing\s+2\s/);

    const one = capture();
    expect(await runCli(['payments', event.paymentId, '--database-url', DATABASE_URL, '--table', table], one.io)).toBe(
      0,
    );
    const story = one.out.join('\n');
    expect(story).toContain(`order ${event.orderNo}, 42.00 USDT`);
    expect(story).toContain('attempts  2 failed');
    expect(story).toContain(`reconcile('${event.paymentId}')`);

    const json = capture();
    expect(await runCli(['payments', '--database-url', DATABASE_URL, '--table', table, '--json'], json.io)).toBe(0);
    const parsed = JSON.parse(json.out.join('\n'));
    expect(parsed.entries[0].paymentId).toBe(event.paymentId);
  });

  it('reads a SQLite file the same way', async () => {
    const file = join(folder, 'shop.sqlite');
    const db = new Database(file);
    const event = await failTwice(new SqliteStore({ database: db }));
    db.close();
    const listed = capture();
    expect(await runCli(['payments', '--database-url', file], listed.io)).toBe(0);
    expect(listed.out.join('\n')).toContain(event.paymentId);
  });

  it('says a payment has no entry, and refuses bad input with a usage error', async () => {
    const none = capture();
    expect(
      await runCli(['payments', 'p_nothing_here', '--database-url', DATABASE_URL, '--table', table], none.io),
    ).toBe(1);
    expect(none.out.join('\n')).toContain('no failure recorded');
    const bad = capture();
    expect(await runCli(['payments', '--database-url', 'oracle://x'], bad.io)).toBe(2);
    expect(bad.err.join('\n')).toContain('--database-url must be');
    const both = capture();
    expect(await runCli(['payments'], both.io)).toBe(2);
    const id = capture();
    expect(await runCli(['payments', "x'; drop", '--database-url', DATABASE_URL], id.io)).toBe(2);
  });
});
