/**
 * `pnpm demo`: the payment service simulator and this Express shop, 20 orders, every payment delivered
 * with duplicates and concurrent duplicates (and a few dropped answers, so the sender retries), plus one
 * order whose webhook never arrives: every attempt fails (the shop "down" for the whole retry window), and
 * reconciliation credits it by reading the payment back. Prints each order with how many times it was
 * credited, by what, and what its deliveries were answered, and exits 0 only if every order was credited
 * exactly once. `pnpm demo --keep` leaves the simulator (and its dashboard) and the shop running until Ctrl+C.
 *
 * The shop's reconcile loop looks at orders pending for a minute, every minute; the demo does not wait
 * that long: it runs the same pass once, directly, with `olderThanMs: 0`.
 */
import type { AddressInfo } from 'node:net';
import { bootShop, simulatorShopConfig } from '@service-pay/example-shop-kit';
import { type DeliveryRecord, generateMerchant, startSimulator } from '@service-pay/simulator';
import { createApp } from './app.js';

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
const server = createApp(booted).listen(0, '127.0.0.1');
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

  // One more order, whose webhook never arrives: every attempt fails, as if the shop were down for the
  // sender's whole retry window. Paid first, so its retries run out while the others are paid.
  const lost = await placeOrder('99.99');
  await sim.pay(lost.paymentId, { failAllAttempts: true });

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

  // The lost payment's delivery has failed for good. The reconcile pass reads the payment back (GET
  // /v1/payments/:id), sees PAID and credits it through the same store and credit as a webhook; a
  // redelivery afterwards is a duplicate, not a second credit.
  const report = await booted.reconcilePending({ olderThanMs: 0 });
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
  const recovered = report.results.find((r) => r.paymentId === lost.paymentId)?.outcome;
  console.log(
    `\nreconciliation: ${report.results.length} pending order(s) read back, ${JSON.stringify(report.counts)}; ` +
      `the lost payment's ${lostDelivery?.attempts.length} webhook attempts all failed, reconciliation ${recovered} it, ` +
      `its redelivery was answered ${redelivery?.attempts.at(-1)?.responseBody}.`,
  );
  console.log(
    `${exactlyOnce} of ${placed.length} orders credited exactly once; ${all.length} deliveries, ${attempts} attempts, ` +
      `${booted.tally.credited} credits written` +
      (booted.storeKind === 'lease' ? `, ${booted.tally.caughtByDatabase} caught by the database guard` : '') +
      `, ${((Date.now() - started) / 1000).toFixed(1)} s.`,
  );
  const othersDelivered = all.every((d) => d.state === 'succeeded' || d.deliveryId === lostDelivery?.deliveryId);
  const lostThenRecovered =
    lostDelivery?.state === 'failed' && recovered === 'credited' && redelivery?.attempts.at(-1)?.status === 200;
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
