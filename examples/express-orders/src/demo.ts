/**
 * `pnpm demo`: the payment service simulator and this Express shop, 20 orders, every payment delivered
 * with duplicates and concurrent duplicates (and a few dropped answers, so the sender retries), plus one
 * order whose handler is broken for all 8 attempts (a bug deployed: every delivery answered 500). The
 * demo then reads that payment's entry in the operator's ledger (failing, its attempts and last error),
 * "fixes" the handler, presses the operator page's reconcile button over HTTP (one credit, the entry
 * closed) and has the service redeliver it (answered `duplicate`). Prints each order with how many times
 * it was credited, by what, and what its deliveries were answered, and exits 0 only if every order was
 * credited exactly once and the broken one recovered so. `pnpm demo --keep` leaves the simulator (and its
 * dashboard) and the shop running until Ctrl+C.
 */
import type { AddressInfo } from 'node:net';
import { ledgerOf } from '@service-pay/core';
import { bootShop, simulatorShopConfig } from '@service-pay/example-shop-kit';
import { type DeliveryRecord, generateMerchant, startSimulator } from '@service-pay/simulator';
import { createApp } from './app.js';

// The operator page's token in this demo (the shop reads SHOP_OPS_TOKEN; see app.ts).
const OPS_TOKEN = process.env.SHOP_OPS_TOKEN || 'demo-operator-token';

const ORDERS = 20;
const merchant = generateMerchant({ name: 'demo-shop' });
// The spec's 8 attempts, on a faster clock (0.1 s, then 1.5 times longer each: 3.2 s in all), so the lost
// payment's webhook has given up by the time the other orders are paid.
const sim = await startSimulator({
  merchants: [merchant],
  retry: { maxAttempts: 8, baseDelayMs: 100, factor: 1.5 },
  seed: 2026,
});
let baseUrl = '';
const booted = await bootShop(
  simulatorShopConfig(sim.url, merchant, {
    redisUrl: process.env.REDIS_URL || undefined,
    databaseUrl: process.env.DATABASE_URL || undefined,
    tablePrefix: process.env.DATABASE_URL ? `demo_${Date.now()}_` : '',
  }),
  { notifyUrl: () => `${baseUrl}/webhooks/service`, logger: { warn: () => {}, error: () => {} } },
);
// The broken deployment: the credit fails for one payment until the "fix" below. The reconciler keeps the
// shop's own credit, which is the fixed handler.
const broken = { paymentId: '', fixed: false };
const app = createApp(
  {
    ...booted,
    webhook: {
      ...booted.webhook,
      onPaymentPaid: (payment, ctx) => {
        if (!broken.fixed && payment.paymentId === broken.paymentId) {
          throw new Error('column "paid_at" of relation "orders" does not exist');
        }
        return booted.webhook.onPaymentPaid(payment, ctx);
      },
    },
  },
  { opsToken: OPS_TOKEN },
);
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const keep = process.argv.includes('--keep');
// A URL that dies with the demo a few seconds later only sends the reader to a dead page: print it when kept.
console.log(
  keep
    ? `dashboard ${sim.dashboardUrl}   (kept running after the demo, until Ctrl+C)`
    : 'dashboard: closes with the demo; run `pnpm demo --keep` to keep it (and the shop) open to look around',
);
console.log(
  `simulator ${sim.url}   shop ${baseUrl}   database ${process.env.DATABASE_URL ? 'postgres' : 'pglite'}   store ${process.env.REDIS_URL ? 'redis (lease)' : 'postgres (transactional)'}\n`,
);

try {
  const started = Date.now();
  // Place the orders through the shop's own API, as a customer would.
  const placed: Placed[] = [];
  for (let i = 0; i < ORDERS; i++)
    placed.push(await placeOrder(`${10 + i}.${String((i * 37) % 100).padStart(2, '0')}`));

  // One more order, whose handler is broken for every attempt: each delivery is verified, the credit
  // throws, the shop answers 500 and the ledger counts the failure. Paid first, so its 8 attempts run out
  // while the others are paid.
  const lost = await placeOrder('99.99');
  broken.paymentId = lost.paymentId;
  await sim.pay(lost.paymentId);

  // Pay the others all at once. Every payment is sent again as a duplicate; every other one also as two
  // concurrent duplicates racing the original; every fifth has its first answer dropped (a retry).
  await Promise.all(
    placed.map((p, i) =>
      sim.pay(p.paymentId, {
        duplicates: 1 + (i % 2),
        concurrent: i % 2 === 1,
        dropResponses: i % 5 === 0 ? 1 : 0,
      }),
    ),
  );
  await sim.waitForIdle({ timeoutMs: 60_000 });

  // The sender has given up. The shop's database says so: the ledger lists the payment as failing, with
  // its attempts and last error (what `service-pay payments` and the operator page show).
  const ledger = ledgerOf(booted.webhook.store);
  if (ledger === undefined) throw new Error("the shop's store keeps no ledger");
  const failing = await ledger.story(lost.paymentId);
  console.log(
    `ledger: ${lost.paymentId} ${failing?.state}, ${failing?.attempts} failed attempts, last error ` +
      `${failing?.lastError.code}: ${failing?.lastError.message}`,
  );

  // The fix is deployed; the operator presses "reconcile" on the page (GET it for the form's token, then
  // POST the form, same origin): the payment is read back from the service and credited once.
  broken.fixed = true;
  const action = await reconcileOnPage(lost.paymentId);
  const closed = await ledger.story(lost.paymentId);
  console.log(
    `operator page: POST /ops/payments reconcile ${lost.paymentId} -> ${action}; ledger entry ${closed?.state}` +
      (closed?.closedBy ? ` (by ${closed.closedBy})` : ''),
  );
  // A webhook of it arriving afterwards is a duplicate, not a second credit.
  await sim.redeliver(lost.paymentId);
  await sim.waitForIdle({ timeoutMs: 60_000 });
  placed.push(lost);

  const orders = new Map(
    (
      (await (await fetch(`${baseUrl}/orders`)).json()) as Array<{
        id: string;
        credits: number;
        status: string;
        creditedBy: string | null;
      }>
    ).map((o) => [o.id, o]),
  );
  const rows = placed.map((p) => {
    const deliveries = sim.deliveries({ paymentId: p.paymentId });
    const order = orders.get(p.orderId);
    return {
      order: p.orderId.slice(0, 18),
      amount: `${p.amount} USDT`,
      status: order?.status ?? '?',
      credited: order?.credits ?? 0,
      by: order?.creditedBy ?? '-',
      deliveries: deliveries.length,
      attempts: deliveries.reduce((n, d) => n + d.attempts.length, 0),
      answers: describeAnswers(deliveries),
    };
  });
  printTable(rows);

  const exactlyOnce = rows.filter((r) => r.credited === 1).length;
  const all = sim.deliveries();
  const attempts = all.reduce((n, d) => n + d.attempts.length, 0);
  const [lostDelivery, redelivery] = sim.deliveries({ paymentId: lost.paymentId });
  const lateAnswer = redelivery?.attempts.at(-1)?.responseBody;
  console.log(
    `\nrecovery: the broken order's ${lostDelivery?.attempts.length} webhook attempts were answered ` +
      `${[...new Set(lostDelivery?.attempts.map((a) => a.status))].join('/')}, the ledger listed it ${failing?.state} ` +
      `after ${failing?.attempts}, one reconcile on the operator page ${action} it, the entry is ${closed?.state}, ` +
      `and the webhook after was answered ${lateAnswer}.`,
  );
  console.log(
    `${exactlyOnce} of ${placed.length} orders credited exactly once; ${all.length} deliveries, ${attempts} attempts, ` +
      `${booted.tally.credited} credits written` +
      (booted.storeKind === 'lease' ? `, ${booted.tally.caughtByDatabase} caught by the database guard` : '') +
      `, ${((Date.now() - started) / 1000).toFixed(1)} s.`,
  );
  const othersDelivered = all.every((d) => d.state === 'succeeded' || d.deliveryId === lostDelivery?.deliveryId);
  const lostThenRecovered =
    lostDelivery?.state === 'failed' &&
    lostDelivery.attempts.every((a) => a.status === 500) &&
    failing?.state === 'failing' &&
    failing.attempts === lostDelivery.attempts.length &&
    action === 'credited' &&
    closed?.state === 'closed' &&
    redelivery?.attempts.at(-1)?.status === 200 &&
    lateAnswer?.includes('duplicate') === true;
  process.exitCode = exactlyOnce === placed.length && othersDelivered && lostThenRecovered ? 0 : 1;
  if (keep) {
    console.log(`\nKept running: dashboard ${sim.dashboardUrl}, shop ${baseUrl}. Press Ctrl+C to stop.`);
    await new Promise((resolve) => process.once('SIGINT', resolve).once('SIGTERM', resolve));
  }
} finally {
  await new Promise((resolve) => server.close(resolve));
  await sim.stop();
  await booted.close();
}

interface Placed {
  orderId: string;
  paymentId: string;
  amount: string;
}

async function placeOrder(amount: string): Promise<Placed> {
  const res = await fetch(`${baseUrl}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount, tokenSymbol: 'USDT' }),
  });
  if (res.status !== 201) throw new Error(`placing an order answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { order: { id: string }; paymentId: string };
  return { orderId: body.order.id, paymentId: body.paymentId, amount };
}

/**
 * What an operator's browser does: loads the page (which sets the CSRF cookie and puts the token in the
 * form), then posts the reconcile form from the same origin. Answers the outcome the page redirects to.
 */
async function reconcileOnPage(paymentId: string): Promise<string> {
  const authorization = `Bearer ${OPS_TOKEN}`;
  const page = await fetch(`${baseUrl}/ops/payments?payment=${encodeURIComponent(paymentId)}`, {
    headers: { authorization },
  });
  const html = await page.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  const cookie = page.headers.get('set-cookie')?.split(';')[0];
  if (page.status !== 200 || csrf === undefined || cookie === undefined) {
    throw new Error(`the operator page answered ${page.status}: ${html.slice(0, 200)}`);
  }
  const res = await fetch(`${baseUrl}/ops/payments`, {
    method: 'POST',
    redirect: 'manual',
    headers: { authorization, cookie, origin: baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ action: 'reconcile', paymentId, csrf }).toString(),
  });
  const location = res.headers.get('location') ?? '';
  return new URLSearchParams(location.slice(location.indexOf('?') + 1)).get('done') ?? `HTTP ${res.status}`;
}

/** "200 credited, 200 duplicate, 409 busy, dropped" style summary of what the shop answered. */
function describeAnswers(deliveries: DeliveryRecord[]): string {
  const counts = new Map<string, number>();
  for (const d of deliveries) {
    for (const a of d.attempts) {
      const label =
        a.outcome === 'dropped'
          ? 'answer dropped'
          : a.status === 200 && a.responseBody?.includes('duplicate')
            ? '200 duplicate'
            : a.status === 200
              ? '200 credited'
              : a.status === 409
                ? '409 in progress'
                : a.status === 500
                  ? '500 handler failed'
                  : a.outcome === 'endpoint-down'
                    ? 'shop down'
                    : `${a.status ?? a.outcome}`;
      counts.set(label, (counts.get(label) ?? 0) + 1);
    }
  }
  return [...counts].map(([label, n]) => `${n}× ${label}`).join(', ');
}

function printTable(rows: Array<Record<string, string | number>>): void {
  const columns = Object.keys(rows[0] ?? {});
  const width = (c: string) => Math.max(c.length, ...rows.map((r) => String(r[c]).length));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(width(columns[i] as string))).join('  ');
  console.log(line(columns));
  console.log(line(columns.map((c) => '-'.repeat(width(c)))));
  for (const r of rows) console.log(line(columns.map((c) => String(r[c]))));
}
