import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PAYMENT_LIMITS, generateMerchant, startSimulator } from '../src/index.js';
import { input, setup, signedFetch } from './support/fixtures.js';
import { startReceiver } from './support/receiver.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

// biome-ignore lint/suspicious/noExplicitAny: JSON read back from the wire, checked by the assertions.
type FeedEvent = { event: string; data: any };

/** Reads server-sent events from a real HTTP stream until `until` says stop. */
async function readEvents(url: string, until: (events: FeedEvent[]) => boolean) {
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal });
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const events: FeedEvent[] = [];
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const done = (async () => {
    while (!until(events)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end !== -1) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) });
        end = buffer.indexOf('\n\n');
      }
    }
    controller.abort();
    return events;
  })();
  return { events, done };
}

describe('the live feed (GET /_simulator/events)', () => {
  it('starts with a snapshot, then reports payments, deliveries, faults and API faults as they change', async () => {
    const { sim, client, merchant } = await setup({ retry: { baseDelayMs: 1 } });
    const receiver = await startReceiver({ secret: merchant.webhookSecret });
    cleanup.push(
      () => sim.stop(),
      () => receiver.close(),
    );
    const earlier = await client.createPayment(input({ notifyUrl: receiver.url }));

    const feed = await readEvents(`${sim.url}/_simulator/events`, (events) =>
      events.some((e) => e.event === 'merchant-api-fault'),
    );
    await expect.poll(() => feed.events.length).toBe(1);
    const [snapshot] = feed.events;
    expect(snapshot?.event).toBe('snapshot');
    expect(snapshot?.data.simulator).toMatchObject({ url: sim.url, dashboard: `${sim.url}/` });
    expect(snapshot?.data.payments.map((p: { paymentId: string }) => p.paymentId)).toEqual([earlier.paymentId]);

    const payment = await client.createPayment(input({ notifyUrl: receiver.url }));
    await sim.pay(payment.paymentId);
    await sim.waitForIdle();
    sim.setFaults({ duplicateRate: 0.25 });
    sim.failMerchantApi({ status: 503 });
    const events = await feed.done;

    const forPayment = events.filter((e) => e.data?.paymentId === payment.paymentId);
    expect(forPayment.filter((e) => e.event === 'payment').map((e) => e.data.status)).toEqual([
      'PENDING',
      'PENDING', // confirming: the transaction is seen
      'PAID',
    ]);
    const deliveries = forPayment.filter((e) => e.event === 'delivery').map((e) => e.data.state);
    expect(deliveries).toEqual(['scheduled', 'in-flight', 'succeeded']);
    expect(forPayment.at(-1)?.data.attempts[0]).toMatchObject({ status: 200, responseBody: '{"received":true}' });
    expect(events.find((e) => e.event === 'faults')?.data).toMatchObject({ duplicateRate: 0.25 });
    expect(events.find((e) => e.event === 'merchant-api-fault')?.data).toMatchObject({ status: 503 });
  });

  it('stop() ends open streams', async () => {
    const sim = await startSimulator({ merchants: [generateMerchant()] });
    const feed = await readEvents(`${sim.url}/_simulator/events`, () => false);
    await sim.stop();
    await expect(feed.done).resolves.toHaveLength(1);
  });
});

describe('the dashboard files', () => {
  it('serves the page, its script and style with a strict CSP; no other origin is needed', async () => {
    const sim = await startSimulator({ merchants: [generateMerchant()] });
    cleanup.push(() => sim.stop());
    const page = await fetch(sim.dashboardUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'/);
    const html = await page.text();
    expect(html).toContain('<h1>service-pay simulator</h1>');
    // Offline: nothing is loaded from another host.
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    for (const [path, type] of [
      ['/dashboard.js', 'text/javascript; charset=utf-8'],
      ['/dashboard.css', 'text/css; charset=utf-8'],
      ['/favicon.svg', 'image/svg+xml'],
    ]) {
      const res = await fetch(`${sim.url}${path}`);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 200, type]);
    }
    expect((await fetch(sim.dashboardUrl, { method: 'POST' })).status).toBe(405);
  });
});

describe('the control API refuses changes from other sites', () => {
  it('403 FORBIDDEN_ORIGIN for a POST from another origin; its own origin, and no origin, pass', async () => {
    const { sim, client } = await setup();
    cleanup.push(() => sim.stop());
    const { paymentId } = await client.createPayment(input());
    const expire = (origin?: string) =>
      fetch(`${sim.url}/_simulator/payments/${paymentId}/expire`, {
        method: 'POST',
        headers: { 'x-simulator-token': sim.controlToken, ...(origin === undefined ? {} : { origin }) },
      });
    const foreign = await expire('https://evil.example');
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error).toBe('FORBIDDEN_ORIGIN');
    expect((await expire('null')).status).toBe(403);
    expect(sim.payment(paymentId)?.status).toBe('PENDING');
    expect((await expire(sim.url)).status).toBe(200);
  });
});

describe('limits: the simulator’s own bounds on payment inputs', () => {
  it('defaults to today’s bounds and names them in the message', async () => {
    const { sim, merchant } = await setup();
    cleanup.push(() => sim.stop());
    expect(sim.limits).toEqual(DEFAULT_PAYMENT_LIMITS);
    const cases: [object, string, RegExp][] = [
      [{ orderNo: 'x'.repeat(65) }, 'INVALID_ORDER_NO', /1 to 64 printable ASCII/],
      [{ orderNo: 'has space' }, 'INVALID_ORDER_NO', /without spaces/],
      [{ tokenSymbol: 'T'.repeat(17) }, 'INVALID_TOKEN_SYMBOL', /1 to 16 uppercase/],
      [{ tokenSymbol: '1USD' }, 'INVALID_TOKEN_SYMBOL', /starting with a letter/],
      [{ expireSec: 604_801 }, 'INVALID_EXPIRE_SEC', /from 1 to 604800/],
      [{ amount: `1${'0'.repeat(30)}` }, 'INVALID_AMOUNT', /decimal string/],
      [{ amount: '0.00' }, 'INVALID_AMOUNT', /greater than zero/],
      [{ notifyUrl: `http://x.example/${'a'.repeat(2048)}` }, 'INVALID_NOTIFY_URL', /at most 2048/],
    ];
    for (const [overrides, code, message] of cases) {
      const res = await signedFetch(sim.url, merchant, 'POST', '/v1/payments', JSON.stringify(input(overrides)));
      const body = await res.json();
      expect([code, res.status, body.error]).toEqual([code, 400, code]);
      expect(body.message).toMatch(message);
    }
  });

  it('takes stricter bounds through the limits option, for the merchant API and test payments alike', async () => {
    const { sim, merchant } = await setup({ limits: { orderNoMaxLength: 8, expireSecMax: 3600 } });
    cleanup.push(() => sim.stop());
    expect(sim.limits).toEqual({ ...DEFAULT_PAYMENT_LIMITS, orderNoMaxLength: 8, expireSecMax: 3600 });
    const res = await signedFetch(
      sim.url,
      merchant,
      'POST',
      '/v1/payments',
      JSON.stringify(input({ orderNo: 'order-123', expireSec: 7200 })),
    );
    const body = await res.json();
    expect(body.error).toBe('INVALID_ORDER_NO');
    expect(body.message).toMatch(
      /1 to 8 printable ASCII.*Also: expireSec must be a whole number of seconds from 1 to 3600/,
    );
    expect(() => sim.createPayment({ orderNo: 'o-1', expireSec: 3601, notifyUrl: 'http://127.0.0.1:9/' })).toThrow(
      expect.objectContaining({ code: 'INVALID_EXPIRE_SEC' }),
    );
    expect(sim.createPayment({ orderNo: 'o-1', expireSec: 3600, notifyUrl: 'http://127.0.0.1:9/' })).toMatchObject({
      orderNo: 'o-1',
    });
  });

  it.each<[object, RegExp]>([
    [{ orderNoMaxLength: 0 }, /limits.orderNoMaxLength must be a whole number from 1/],
    [{ expireSecMin: 10, expireSecMax: 5 }, /expireSecMin must not be above/],
    [{ orderNoLength: 5 }, /Unknown limit "orderNoLength"/],
    [[1], /limits must be an object/],
  ])('refuses bad limits %j with INVALID_OPTIONS', async (limits, message) => {
    await expect(startSimulator({ merchants: [generateMerchant()], limits: limits as never })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringMatching(message),
    });
  });
});

describe('forwardTo: every webhook to one endpoint (what listen does)', () => {
  it('sends each payment’s webhook to forwardTo whatever its notifyUrl, and uses it for test payments', async () => {
    const merchant = generateMerchant({ confirmations: 0 });
    const app = await startReceiver({ secret: merchant.webhookSecret });
    const sim = await startSimulator({ merchants: [merchant], forwardTo: app.url, retry: { baseDelayMs: 1 } });
    cleanup.push(
      () => sim.stop(),
      () => app.close(),
    );
    expect(sim.forwardTo).toBe(app.url);
    const test = sim.createPayment({ amount: '2.00' });
    expect(test.notifyUrl).toBe(app.url);
    const elsewhere = sim.createPayment({ notifyUrl: 'http://127.0.0.1:9/nobody-listens' });
    await sim.pay(test.paymentId);
    await sim.pay(elsewhere.paymentId);
    await sim.waitForIdle();
    expect(app.handled.map((e) => e.paymentId)).toEqual([test.paymentId, elsewhere.paymentId]);
    await expect(startSimulator({ merchants: [merchant], forwardTo: 'ftp://x' })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
    });
  });
});

describe('structure', () => {
  it('the core imports nothing above it (no HTTP layer, dashboard, CLI or facade)', async () => {
    const core = fileURLToPath(new URL('../src/core/', import.meta.url));
    for (const file of await readdir(core)) {
      const source = await readFile(join(core, file), 'utf8');
      const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1] as string);
      const upward = imports.filter((p) => p.startsWith('..'));
      expect([file, upward]).toEqual([file, []]);
    }
    const http = fileURLToPath(new URL('../src/http/', import.meta.url));
    for (const file of await readdir(http)) {
      const source = await readFile(join(http, file), 'utf8');
      const above = [...source.matchAll(/from '(\.\.\/(?!core\/)[^']+)'/g)].map((m) => m[1]);
      expect([file, above]).toEqual([file, []]);
    }
  });
});
