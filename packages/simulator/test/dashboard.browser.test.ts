import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMerchant, type Simulator, startSimulator } from '../src/index.js';
import { type Receiver, startReceiver } from './support/receiver.js';

// The dashboard in a real browser: Debian's chromium driven by playwright-core, against a real receiver
// (core's webhook handler behind node:http), so every answer on the page is one the app really gave.
// No browser is a failure, never a skip: CI installs chromium (.ci/run).

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  throw new Error(
    `The dashboard's browser test needs Chromium at ${CHROMIUM}: install it with 'apt-get install -y chromium' (as .ci/run does), or set CHROMIUM_PATH.`,
  );
}
// The README's screenshots are rewritten with UPDATE_SCREENSHOTS=1 (`UPDATE_SCREENSHOTS=1 pnpm vitest run
// --project simulator dashboard`); other runs still take them, into a temp folder, so a test run leaves
// the working tree clean.
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../docs/', import.meta.url))
    : join(tmpdir(), `service-pay-dashboard-${process.pid}`);

let sim: Simulator;
let app: Receiver;
let profile: string;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  const merchant = generateMerchant({ name: 'shop', confirmations: 2 });
  // The app answers after a short pause, so concurrent duplicates really overlap.
  app = await startReceiver({ secret: merchant.webhookSecret, work: () => new Promise((r) => setTimeout(r, 100)) });
  sim = await startSimulator({ merchants: [merchant], retry: { baseDelayMs: 100, maxAttempts: 3 }, seed: 7 });
  profile = await mkdtemp(join(tmpdir(), 'service-pay-chromium-'));
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1280, height: 900 },
      deviceScaleFactor: 1,
      colorScheme: 'light',
    });
  } catch (error) {
    throw new Error(`Chromium at ${CHROMIUM} did not start: ${(error as Error).message}`, { cause: error });
  }
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    // A refused control call is logged by Chromium itself as a failed load; the page shows it as an alert.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      pageErrors.push(message.text());
  });
  await page.goto(sim.dashboardUrl);
  await page.locator('#connection[data-state="live"]').waitFor({ timeout: 15_000 });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await sim?.stop();
  await app?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

/** The article of the payment for an order number. */
const paymentCard = (orderNo: string): Locator =>
  page.getByRole('article', { name: new RegExp(`Order ${orderNo}\\b`) });

async function createPayment(orderNo: string, amount: string): Promise<Locator> {
  await page.getByLabel('Order number').fill(orderNo);
  await page.getByLabel('Amount', { exact: true }).fill(amount);
  await page.getByLabel('Notify URL').fill(app.url);
  await page.getByRole('button', { name: 'Create payment' }).click();
  const card = paymentCard(orderNo);
  await expect.poll(() => card.getByText('PENDING').count()).toBe(1);
  return card;
}

/** The rows of a delivery's attempt table: [attempt, time, status, latency, outcome, answer]. */
async function attempts(delivery: Locator): Promise<string[][]> {
  return delivery
    .locator('tbody tr')
    .evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent ?? '')));
}

describe('the dashboard in Chromium', { timeout: 30_000 }, () => {
  it('create -> pay -> the attempts appear -> redeliver -> the duplicate is shown', async () => {
    await expect.poll(() => page.getByRole('heading', { name: 'service-pay simulator', level: 1 }).count()).toBe(1);
    expect(await page.locator('#summary').textContent()).toContain(sim.url);

    const card = await createPayment('order-1001', '12.50');
    expect(await card.getByText('12.50 USDT').count()).toBe(1);

    await card.getByRole('button', { name: 'Pay' }).click();
    await expect.poll(() => card.getByText('PAID', { exact: true }).count()).toBe(1);
    const timeline = card.getByRole('list', { name: /Deliveries of order order-1001/ });
    await expect.poll(() => timeline.locator('.delivery-succeeded').count()).toBe(1);
    const [first] = await attempts(timeline.locator('li').first());
    expect(first).toEqual([
      '1',
      expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3}$/),
      '200',
      expect.stringMatching(/^\d+ ms$/),
      'succeeded',
      '{"received":true}',
    ]);

    // Keyboard only: focus Redeliver and press Enter.
    await card.getByRole('button', { name: 'Redeliver' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => timeline.locator('li').count()).toBe(2);
    const redelivery = timeline.locator('li').nth(1);
    await expect.poll(() => redelivery.locator('.kind').textContent()).toBe('redelivery');
    await expect.poll(() => redelivery.locator('.state').textContent()).toBe('succeeded');
    expect((await attempts(redelivery))[0]?.[5]).toBe('{"received":true,"duplicate":true}');

    // The page says what the app did: credited once, then a duplicate.
    expect(app.handled.map((e) => e.orderNo)).toEqual(['order-1001']);
    const log = sim.deliveries({ paymentId: app.handled[0]?.paymentId });
    expect(log.map((d) => d.kind)).toEqual(['original', 'redelivery']);
    await expect
      .poll(() => page.locator('#announcer').textContent())
      .toMatch(/redelivery of order order-1001 succeeded/);

    await page.screenshot({ path: await screenshotPath('dashboard.png'), fullPage: true });
  });

  it('delivery faults: concurrent duplicates, a dropped answer, an endpoint down for every attempt', async () => {
    await page.getByLabel('Duplicates', { exact: true }).fill('2');
    await page.getByLabel(/Concurrent duplicates/).check();
    await page.getByLabel('Drop first answers').fill('1');
    const card = await createPayment('order-1002', '40.00');
    await card.getByRole('button', { name: 'Pay' }).click();
    const timeline = card.getByRole('list', { name: /Deliveries of order order-1002/ });
    await expect.poll(() => timeline.locator('.delivery-succeeded').count(), { timeout: 15_000 }).toBe(3);
    const kinds = await timeline.locator('.kind').allTextContents();
    expect(kinds).toEqual(['original', 'concurrent-duplicate', 'concurrent-duplicate']);
    const original = await attempts(timeline.locator('li').first());
    expect(original[0]?.[4]).toBe('dropped');
    expect(original.at(-1)?.[4]).toBe('succeeded');
    expect(app.handled.filter((e) => e.orderNo === 'order-1002')).toHaveLength(1);

    await page.getByRole('button', { name: 'Clear faults' }).click();
    await page.getByLabel(/Endpoint down/).check();
    const down = await createPayment('order-1003', '5.00');
    await down.getByRole('button', { name: 'Pay' }).click();
    const downTimeline = down.getByRole('list', { name: /Deliveries of order order-1003/ });
    await expect.poll(() => downTimeline.locator('.delivery-failed').count(), { timeout: 15_000 }).toBe(1);
    expect((await attempts(downTimeline.locator('li').first())).map((row) => row[4])).toEqual([
      'endpoint-down',
      'endpoint-down',
      'endpoint-down',
    ]);
    expect(app.handled.filter((e) => e.orderNo === 'order-1003')).toHaveLength(0);
    await page.getByRole('button', { name: 'Clear faults' }).click();

    // The amount changes; a redelivery now conflicts with what the app credited for order-1002.
    await card.getByLabel('Change the amount to').fill('41.00');
    await card.getByRole('button', { name: 'Amend' }).click();
    await expect.poll(() => card.getByText('41.00 USDT').count()).toBe(1);
    await card.getByRole('button', { name: 'Redeliver' }).click();
    await expect.poll(() => timeline.locator('li').count()).toBe(4);
    await expect.poll(async () => (await attempts(timeline.locator('li').nth(3)))[0]?.[2]).toBe('422');
  });

  it('simulator-wide rates and merchant API faults from the forms', async () => {
    await page.getByLabel('Duplicate rate').fill('0.5');
    await page.getByRole('button', { name: 'Save rates' }).click();
    await expect.poll(() => sim.faults.duplicateRate).toBe(0.5);

    await page.getByLabel('Answer', { exact: true }).selectOption('429');
    await page.getByLabel('Next N requests').fill('2');
    await page.getByLabel('Retry-After (s)').fill('3');
    await page.getByRole('button', { name: 'Fail the merchant API' }).click();
    await expect.poll(() => sim.merchantApiFault).toMatchObject({ status: 429, remaining: 2, retryAfterSec: 3 });
    await expect.poll(() => page.locator('#api-fault-state').textContent()).toMatch(/with 429, 2 more to fail/);
    await page.getByRole('button', { name: 'End the fault' }).click();
    await expect.poll(() => sim.merchantApiFault).toBeNull();
    await expect.poll(() => page.locator('#api-fault-state').textContent()).toMatch(/answers normally/);
    sim.setFaults({ duplicateRate: 0 });

    await page.screenshot({ path: await screenshotPath('dashboard-full.png'), fullPage: true });
  });

  it('shows a refusal as an alert, and the page never logged an error', async () => {
    const card = paymentCard('order-1003');
    await card.getByLabel('Change the amount to').fill('1.1234567');
    await card.getByRole('button', { name: 'Amend' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/INVALID_AMENDMENT/);
    expect(pageErrors).toEqual([]);
  });

  it('every input has a label and every button a name', async () => {
    const unlabelled = await page
      .locator('input, select')
      .evaluateAll((inputs) =>
        inputs
          .filter((input) => !(input as HTMLInputElement).labels?.length && !input.getAttribute('aria-label'))
          .map((input) => input.outerHTML),
      );
    expect(unlabelled).toEqual([]);
    const nameless = await page
      .locator('button')
      .evaluateAll((buttons) => buttons.filter((b) => !b.textContent?.trim()).map((b) => b.outerHTML));
    expect(nameless).toEqual([]);
  });
});

async function screenshotPath(name: string): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  return join(SCREENSHOTS, name);
}
