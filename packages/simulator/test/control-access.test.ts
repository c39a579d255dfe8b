import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatorError, startSimulator } from '../src/index.js';
import { input, setup } from './support/fixtures.js';

// The control API behind a Host check and a per-run token. Before: a page rebound to
// 127.0.0.1 (Host and Origin both the attacker's name) got 201 on create, and from there SSRF and a
// signing oracle through notifyUrl, amend and redeliver.

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

/** A request with the Host header of our choosing (fetch does not let a caller set it). */
function raw(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const code = (answer: { body: string }) => (JSON.parse(answer.body) as { error?: string }).error;

describe('DNS rebinding: a request addressed to another host name is refused', () => {
  it('403 FORBIDDEN_HOST for the control API, its feed and the dashboard; nothing is created', async () => {
    const { sim } = await setup();
    cleanup.push(() => sim.stop());
    const port = String(sim.port);
    const rebound = { host: `attacker.example:${port}`, origin: `http://attacker.example:${port}` };
    const create = await raw(
      sim.url,
      'POST',
      '/_simulator/payments',
      { ...rebound, 'content-type': 'application/json', 'x-simulator-token': 'guessed-guessed-guessed' },
      JSON.stringify({ notifyUrl: 'http://169.254.169.254/latest/meta-data' }),
    );
    expect([create.status, code(create)]).toEqual([403, 'FORBIDDEN_HOST']);
    for (const path of ['/_simulator', '/_simulator/payments', '/_simulator/events', '/', '/dashboard.js']) {
      const answer = await raw(sim.url, 'GET', path, rebound);
      expect([path, answer.status]).toEqual([path, 403]);
    }
    // The same port on another name, or our names on another port, are not this server either.
    expect((await raw(sim.url, 'GET', '/_simulator', { host: 'localhost.attacker.example' })).status).toBe(403);
    expect((await raw(sim.url, 'GET', '/_simulator', { host: 'localhost:1' })).status).toBe(403);
    expect(sim.payments()).toEqual([]);
  });

  it('localhost, 127.0.0.1 and [::1] on the bound port are served', async () => {
    const { sim } = await setup();
    cleanup.push(() => sim.stop());
    for (const host of [`localhost:${sim.port}`, `127.0.0.1:${sim.port}`, `[::1]:${sim.port}`, `LOCALHOST:${sim.port}`])
      expect([host, (await raw(sim.url, 'GET', '/_simulator', { host })).status]).toEqual([host, 200]);
  });

  it('the merchant API is not Host-checked: it is signed, and servers behind proxies see other names', async () => {
    const { sim, client } = await setup();
    cleanup.push(() => sim.stop());
    await expect(client.createPayment(input())).resolves.toMatchObject({ status: 'PENDING' });
  });
});

describe('the control token', () => {
  it('every change needs it; reads on loopback do not', async () => {
    const { sim } = await setup();
    cleanup.push(() => sim.stop());
    const post = (headers: Record<string, string>) =>
      fetch(`${sim.url}/_simulator/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ notifyUrl: 'http://127.0.0.1:9/hooks' }),
      });
    const none = await post({});
    expect([none.status, (await none.json()).error]).toEqual([401, 'CONTROL_TOKEN_REQUIRED']);
    const wrong = await post({ 'x-simulator-token': `${sim.controlToken.slice(0, -1)}x` });
    expect([wrong.status, (await wrong.json()).message]).toEqual([401, expect.stringMatching(/^Wrong control token/)]);
    expect((await post({ 'x-simulator-token': sim.controlToken })).status).toBe(201);
    expect((await post({ authorization: `Bearer ${sim.controlToken}` })).status).toBe(201);
    for (const method of ['PUT', 'DELETE'])
      expect((await fetch(`${sim.url}/_simulator/merchant-api-fault`, { method })).status).toBe(401);
    expect((await fetch(`${sim.url}/_simulator/payments`)).status).toBe(200);
    expect(sim.payments()).toHaveLength(2);
  });

  it('is fresh per run, and handed to the dashboard inside its own page on loopback', async () => {
    const a = await setup();
    const b = await setup();
    cleanup.push(
      () => a.sim.stop(),
      () => b.sim.stop(),
    );
    expect(a.sim.controlToken).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(a.sim.controlToken).not.toBe(b.sim.controlToken);
    const page = await (await fetch(a.sim.dashboardUrl)).text();
    expect(page).toContain(`<meta name="simulator-token" content="${a.sim.controlToken}">`);
  });

  it('controlToken can be chosen, within the rules', async () => {
    const { sim } = await setup({ controlToken: 'a-fixed-token-for-ci_1' });
    cleanup.push(() => sim.stop());
    expect(sim.controlToken).toBe('a-fixed-token-for-ci_1');
    for (const bad of ['short', 'has space in it here', 'x'.repeat(201), 42]) {
      await expect(setup({ controlToken: bad as string })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    }
  });
});

describe('bound beyond loopback', () => {
  it('reads need the token too, the page does not carry it, and the feed takes it as ?token=', async () => {
    const merchant = { apiKey: 'ak_net', apiSecret: 'sk_net_secret', webhookSecret: 'whsec_net_secret' };
    const sim = await startSimulator({ merchants: [merchant], host: '0.0.0.0' });
    cleanup.push(() => sim.stop());
    expect(sim.host).toBe('0.0.0.0');
    const get = (path: string, headers: Record<string, string> = {}) => fetch(`${sim.url}${path}`, { headers });
    expect((await get('/_simulator')).status).toBe(401);
    expect((await get('/_simulator', { 'x-simulator-token': sim.controlToken })).status).toBe(200);
    expect((await get('/_simulator/payments')).status).toBe(401);
    const page = await (await get('/')).text();
    expect(page).not.toContain(sim.controlToken);
    expect(page).not.toContain('simulator-token');
    const events = await get(`/_simulator/events?token=${sim.controlToken}`, {});
    expect([events.status, events.headers.get('content-type')]).toEqual([200, expect.stringMatching(/event-stream/)]);
    await events.body?.cancel();
    // ?token= is for the feed's GET only: a change must send the header.
    expect((await fetch(`${sim.url}/_simulator/payments?token=${sim.controlToken}`, { method: 'POST' })).status).toBe(
      401,
    );
  });

  it('SimulatorError carries the codes', () => {
    const error = new SimulatorError('CONTROL_TOKEN_REQUIRED', 'x');
    expect(error.status).toBe(401);
    expect(new SimulatorError('FORBIDDEN_HOST', 'x').status).toBe(403);
  });
});

describe('bounded history, paginated lists', () => {
  it('keeps the newest retain.payments payments and finished deliveries; lists come in pages', async () => {
    const { sim } = await setup({ retain: { payments: 50, deliveries: 40 }, confirmationIntervalMs: 0 });
    cleanup.push(() => sim.stop());
    const made: string[] = [];
    for (let i = 0; i < 120; i++) {
      const payment = sim.createPayment({ orderNo: `bounded-${i}`, notifyUrl: 'http://127.0.0.1:9/x' });
      made.push(payment.paymentId);
      if (i >= 70) await sim.pay(payment.paymentId, { failAllAttempts: true });
    }
    await sim.waitForIdle({ timeoutMs: 30_000 });
    // Oldest dropped: the last 50 payments remain, in order; a dropped one is simply not found.
    expect(sim.payments().map((p) => p.paymentId)).toEqual(made.slice(-50));
    expect(sim.payment(made[0] as string)).toBeUndefined();
    // Its order number is free again (the simulator forgot it with the payment).
    expect(sim.createPayment({ orderNo: 'bounded-0', notifyUrl: 'http://127.0.0.1:9/x' }).status).toBe('PENDING');
    expect(sim.deliveries().length).toBeLessThanOrEqual(40);
    const info = await (await fetch(`${sim.url}/_simulator`)).json();
    expect(info).toMatchObject({ retain: { payments: 50, deliveries: 40 }, dropped: { payments: 71 } });
    expect(info.dropped.deliveries).toBeGreaterThanOrEqual(10);

    // Pages of 20: every payment once, in order, and next is null at the end.
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const query: string = `limit=20${after === null ? '' : `&after=${after}`}`;
      const body = (await (await fetch(`${sim.url}/_simulator/payments?${query}`)).json()) as {
        payments: { paymentId: string }[];
        next: string | null;
      };
      seen.push(...body.payments.map((p) => p.paymentId));
      after = body.next;
      if (after === null) break;
    }
    expect(seen).toEqual(sim.payments().map((p) => p.paymentId));
    for (const bad of ['limit=0', 'limit=1001', 'limit=x', `after=${made[0]}`]) {
      const res = await fetch(`${sim.url}/_simulator/deliveries?${bad}`);
      expect([bad, res.status]).toEqual([bad, 400]);
    }
  }, 60_000);

  it('never drops a delivery still in progress', async () => {
    const { sim } = await setup({ retain: { deliveries: 10 }, retry: { baseDelayMs: 60_000, maxAttempts: 2 } });
    cleanup.push(() => sim.stop());
    for (let i = 0; i < 15; i++) {
      const payment = sim.createPayment({ orderNo: `busy-${i}`, notifyUrl: 'http://127.0.0.1:9/x' });
      await sim.pay(payment.paymentId, { failAllAttempts: true });
    }
    // All 15 wait for their second attempt a minute away: none may be dropped, whatever the bound.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sim.deliveries().filter((d) => d.state === 'waiting-retry')).toHaveLength(15);
  });
});
