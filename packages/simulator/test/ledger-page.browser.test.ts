import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServiceClient } from '@service-pay/client';
import { createFetchHandler, createLedgerPage, createReconciler, type PaidPayment } from '@service-pay/core';
import { PostgresStore } from '@service-pay/postgres';
import { testServers } from '@service-pay/test-kit';
import pg from 'pg';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../src/index.js';
import { input, setup } from './support/fixtures.js';

// The operator's page in a real browser (Debian's chromium, playwright-core) against a real PostgreSQL
// store, with the simulator as the sender: a handler broken for all 8 attempts, the payment listed with its
// error, the handler fixed, one Reconcile click, one credit, the entry closed, a later webhook a duplicate.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) throw new Error(`The ledger page's browser test needs Chromium at ${CHROMIUM}.`);
const DATABASE_URL = testServers().postgresUrl;

const table = `page_inbox_${Date.now().toString(36)}`;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 6 });
let sim: Simulator;
let server: Server;
let appUrl: string;
let profile: string;
let context: BrowserContext;
let page: Page;
let broken = true;
const credits: string[] = [];
const dialogs: string[] = [];
let ledgerPage: (request: Request) => Promise<Response>;
let store: PostgresStore;

/**
 * The text a person reads in `locator`, as the browser renders it: a row's cells apart by tabs, markup shown
 * as the characters it is. `textContent` would give the DOM's text, joined without the cells' separators.
 */
function shown(locator: Locator): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what this test checks
  return locator.innerText();
}

/** node:http in front of fetch-style handlers, as the adapters do it. */
function serve(routes: Record<string, (request: Request) => Promise<Response>>): Promise<Server> {
  const s = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const route = routes[url.pathname];
    if (route === undefined) {
      res.writeHead(404).end();
      return;
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const method = req.method ?? 'GET';
    const body = method === 'GET' || method === 'HEAD' ? undefined : Buffer.concat(chunks);
    const response = await route(new Request(url, { method, headers, ...(body === undefined ? {} : { body }) }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

beforeAll(async () => {
  const s = await setup({ retry: { baseDelayMs: 5, factor: 1.2, maxAttempts: 8, timeoutMs: 2_000 } });
  sim = s.sim;
  store = new PostgresStore({ pool, tableName: table });
  await store.migrate();
  const onPaymentPaid = async (payment: PaidPayment, ctx: { tx: pg.PoolClient }) => {
    if (broken) {
      await ctx.tx.query('select paid_at from no_such_orders_table');
    }
    credits.push(payment.paymentId);
  };
  const webhook = createFetchHandler({
    secret: s.merchant.webhookSecret,
    store,
    logger: { warn() {}, error() {} },
    onPaymentPaid,
  });
  const reconciler = createReconciler({
    getPayment: createServiceClient({ baseUrl: sim.url, apiKey: s.merchant.apiKey, apiSecret: s.merchant.apiSecret })
      .getPayment,
    store,
    logger: { warn() {}, error() {} },
    onPaymentPaid,
  });
  ledgerPage = createLedgerPage({
    store,
    reconciler,
    authorize: (request) => (request.headers.get('cookie') ?? '').includes('operator=yes'),
  });
  server = await serve({ '/webhooks': webhook, '/ops/payments': ledgerPage });
  appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  (globalThis as { __client?: unknown }).__client = s.client;
  profile = await mkdtemp(join(tmpdir(), 'service-pay-ledger-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    viewport: { width: 1280, height: 900 },
  });
  await context.addCookies([{ name: 'operator', value: 'yes', url: appUrl }]);
  page = context.pages()[0] ?? (await context.newPage());
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await rm(profile, { recursive: true, force: true });
  await sim?.stop();
  await new Promise((resolve) => server?.close(resolve));
  await pool.query(`drop table if exists ${table}_ledger`);
  await pool.query(`drop table if exists ${table}`);
  await pool.end();
});

describe('the operator page', () => {
  it('lists a payment whose handler failed all 8 attempts; one Reconcile credits it once and closes it', async () => {
    const client = (globalThis as { __client?: ReturnType<typeof createServiceClient> }).__client as ReturnType<
      typeof createServiceClient
    >;
    const payment = await client.createPayment(input({ notifyUrl: `${appUrl}/webhooks`, orderNo: 'order-<b>42</b>' }));
    await sim.pay(payment.paymentId);
    await sim.waitForIdle({ timeoutMs: 30_000 });
    const delivery = sim.deliveries().find((d) => d.paymentId === payment.paymentId);
    expect(delivery?.attempts.length).toBe(8);
    expect(delivery?.state).toBe('failed');

    await page.goto(`${appUrl}/ops/payments`);
    const row = page.locator(`tr[data-payment="${payment.paymentId}"]`);
    await expect.poll(() => row.count()).toBe(1);
    const text = await shown(row);
    expect(text).toContain('failing');
    expect(text).toMatch(/\t8\t/);
    expect(text).toContain('relation "no_such_orders_table" does not exist');
    // The order number is shown as text, not markup.
    expect(text).toContain('order-<b>42</b>');

    broken = false;
    await row.getByRole('button', { name: 'Reconcile' }).click();
    await page.waitForURL(/done=credited/);
    expect(await shown(page.getByRole('status'))).toContain('Reconciled: credited.');
    expect(await shown(page.locator('dd .state'))).toBe('closed');
    expect(credits.filter((id) => id === payment.paymentId)).toHaveLength(1);
    const entry = await store.ledger?.story(payment.paymentId);
    expect(entry).toMatchObject({ state: 'closed', closedBy: 'reconciliation', attempts: 8 });

    // A webhook after it is answered duplicate, and credits nothing.
    sim.redeliver(payment.paymentId);
    await sim.waitForIdle({ timeoutMs: 10_000 });
    const last = sim
      .deliveries()
      .filter((d) => d.paymentId === payment.paymentId)
      .flatMap((d) => d.attempts)
      .at(-1);
    expect(last?.status).toBe(200);
    expect(last?.responseBody).toContain('"duplicate":true');
    expect(credits.filter((id) => id === payment.paymentId)).toHaveLength(1);

    await page.goto(`${appUrl}/ops/payments`);
    expect(await page.locator(`tr[data-payment="${payment.paymentId}"]`).count()).toBe(0);
    expect(dialogs).toEqual([]);
  }, 60_000);

  it('escapes every text, refuses without authorization, and refuses a cross-site or tokenless POST', async () => {
    await store.ledger?.recordFailure({
      paymentId: 'p_xss"><script>alert(1)</script>',
      orderNo: '<img src=x onerror=alert(2)>',
      amount: '1',
      tokenSymbol: '<svg onload=alert(3)>',
      key: 'payment.paid:p_xss',
      at: Date.now(),
      source: 'webhook',
      code: 'HANDLER_FAILED',
      message: '</td><script>alert(4)</script>',
    });
    await page.goto(`${appUrl}/ops/payments`);
    const html = await page.content();
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(await page.locator('script, img, svg').count()).toBe(0);
    expect(dialogs).toEqual([]);

    const anonymous = await fetch(`${appUrl}/ops/payments`);
    expect(anonymous.status).toBe(403);
    const body = 'action=reconcile-all&csrf=whatever_whatever_whatever_whatever';
    const crossSite = await fetch(`${appUrl}/ops/payments`, {
      method: 'POST',
      headers: {
        cookie: 'operator=yes',
        origin: 'https://evil.example',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body,
    });
    expect(crossSite.status).toBe(403);
    const noToken = await fetch(`${appUrl}/ops/payments`, {
      method: 'POST',
      headers: { cookie: 'operator=yes', origin: appUrl, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    expect(noToken.status).toBe(403);
    expect(() => createLedgerPage({ store, reconciler: {} as never } as never)).toThrow(/authorize/);
  });

  it('renders a page fast with 100,000 entries (paged, indexed)', async () => {
    const ledgerTable = `${table}_ledger`;
    await pool.query(
      `insert into ${ledgerTable} (payment_id, dedupe_key, order_no, amount, token_symbol, state, is_open, attempts, first_failed_at, last_failed_at, last_error_code, last_error_message)
       select 'p_bulk_' || g, 'payment.paid:p_bulk_' || g, 'order-' || g, '10.00', 'USDT', case when g % 10 = 0 then 'closed' else 'failing' end,
              case when g % 10 = 0 then 0 else 1 end, 8, 1700000000000 + g, 1700000000000 + g * 2, 'HANDLER_FAILED', 'column "paid_at" does not exist'
       from generate_series(1, 100000) g`,
    );
    await pool.query(`analyze ${ledgerTable}`);
    const cookie = 'operator=yes';
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      const started = performance.now();
      const response = await ledgerPage(new Request(`${appUrl}/ops/payments`, { headers: { cookie } }));
      const html = await response.text();
      times.push(performance.now() - started);
      expect(html).toContain('p_bulk_99999');
    }
    times.sort((a, b) => a - b);
    console.info(
      `ledger page with 100,000 entries: median ${times[3]?.toFixed(1)} ms (of 7: ${times.map((t) => t.toFixed(1)).join(', ')})`,
    );
    const next = /href="\?cursor=([^"]+)"/.exec(
      await (await ledgerPage(new Request(`${appUrl}/ops/payments`, { headers: { cookie } }))).text(),
    )?.[1];
    expect(next).toBeDefined();
    const started = performance.now();
    await page.goto(`${appUrl}/ops/payments?cursor=${next}`);
    console.info(`the second page in the browser: ${(performance.now() - started).toFixed(1)} ms`);
    expect(await page.locator('tbody tr').count()).toBe(50);
    const plan = await pool.query(
      `explain select payment_id from ${ledgerTable} l where l.is_open = 1 order by l.is_open desc, l.last_failed_at desc, l.payment_id desc limit 51`,
    );
    expect(JSON.stringify(plan.rows)).toMatch(/Index (Only )?Scan/);
  }, 120_000);
});
