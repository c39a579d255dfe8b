// Where the wall time of one fresh delivery goes, KyselyStore against the same client's hand-rolled
// transaction, on the machine's PostgreSQL: for each statement, the time this process spent before sending
// it (the gap since the previous answer: our pipeline, the handler, the client's own work) and the time
// from handing it to node-postgres to node-postgres' answer (the server, the loopback and the driver).
// What the ratios of `pnpm bench orm` cannot say: whether the store's extra time is the server's or ours.
//
//   node packages/postgres/bench/fresh-phases.mjs        (pnpm -s build first; DATABASE_URL for another server)
//
// The same deliveries, turns and warm-up as the contest (@service-pay/bench-kit/sql-contest), fresh only.
// Plain JavaScript on the built packages: no TypeScript loader on the stack.
import { createWebhookHandler, signWebhook, verifyWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { KyselyStore } from '@service-pay/postgres/kysely';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';

const URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SECRET = 'whsec_bench_postgres_0123456789abcdef';
const PER_ROUND = 300;
const WARM_UP_ROUNDS = 10;
const ROUNDS = Number(process.env.ROUNDS ?? 12);
const TAG = `phases_${Date.now().toString(36)}`;
const INBOX = `bench_inbox_${TAG}`;
const HAND_INBOX = `bench_hand_inbox_${TAG}`;
const ORDERS = `bench_orders_${TAG}`;

/** The statements of the delivery being timed: [first word, handed to the driver at, answered at]. */
let statements;
const pool = new pg.Pool({ connectionString: URL, max: 4, options: '-c synchronous_commit=off' });
pool.on('connect', (client) => {
  const query = client.query;
  client.query = function timed(...args) {
    const sent = performance.now();
    const answer = query.apply(this, args);
    const into = statements;
    if (into !== undefined) {
      const text = typeof args[0] === 'string' ? args[0] : args[0].text;
      // The first reaction on the driver's promise: it runs before the client's own.
      answer.then(
        () => into.push([text.trim().split(/\s+/)[0].toUpperCase(), sent, performance.now()]),
        () => {},
      );
    }
    return answer;
  };
});
const setup = new pg.Pool({ connectionString: URL, max: 1 });
const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
const store = new KyselyStore({ db, tableName: INBOX });
await store.migrate();
await setup.query(`CREATE TABLE ${ORDERS} (order_no text PRIMARY KEY, paid boolean NOT NULL DEFAULT false)`);
await setup.query(`CREATE TABLE ${HAND_INBOX} (LIKE ${INBOX} INCLUDING ALL)`);

const credit = (tx, orderNo) =>
  sql`UPDATE ${sql.table(ORDERS)} SET paid = true WHERE order_no = ${orderNo}`.execute(tx);
const handle = createWebhookHandler({
  secret: SECRET,
  store,
  onPaymentPaid: async (event, ctx) => {
    await credit(ctx.tx, event.orderNo);
  },
});
const sides = {
  store: async (request) => {
    const { status } = await handle(request);
    if (status !== 200) throw new Error(`the store answered ${status}`);
  },
  hand: async (request) => {
    const { event, deliveryId } = await verifyWebhook(request, { secret: SECRET });
    const key = `payment.paid:${event.paymentId}`;
    await db.transaction().execute(async (trx) => {
      const inserted = await sql`INSERT INTO ${sql.table(HAND_INBOX)}
        (key, fingerprint, payment_id, delivery_id, source, outcome)
        VALUES (${key}, ${event.amount}, ${event.paymentId}, ${deliveryId}, 'webhook', 'credited')
        ON CONFLICT DO NOTHING RETURNING key`.execute(trx);
      if (inserted.rows.length > 0) await credit(trx, event.orderNo);
    });
  },
};

async function requests() {
  const events = Array.from({ length: PER_ROUND }, () => samplePaymentPaidEvent());
  await setup.query(`INSERT INTO ${ORDERS} (order_no) SELECT unnest($1::text[])`, [events.map((e) => e.orderNo)]);
  return events.map((event) => {
    const { body, headers } = signWebhook({ event, secret: SECRET });
    return { method: 'POST', headers, rawBody: body };
  });
}

/** Per side, every timed delivery: its total and its statements, relative to its start (ms). */
const timed = { store: [], hand: [] };
try {
  for (let round = 0; round < WARM_UP_ROUNDS + ROUNDS; round++) {
    const batch = { store: await requests(), hand: await requests() };
    for (let i = 0; i < PER_ROUND; i++) {
      // Who goes first flips every pair, as in the contest.
      for (const side of (i + round) % 2 === 0 ? ['store', 'hand'] : ['hand', 'store']) {
        statements = [];
        const started = performance.now();
        await sides[side](batch[side][i]);
        const total = performance.now() - started;
        if (round >= WARM_UP_ROUNDS) {
          timed[side].push({ total, statements: statements.map(([w, s, a]) => [w, s - started, a - started]) });
        }
        statements = undefined;
      }
    }
  }
} finally {
  await setup.query(`DROP TABLE IF EXISTS ${ORDERS}, ${HAND_INBOX}, ${INBOX}`).catch(() => {});
  await setup.query(`DROP FUNCTION IF EXISTS ${INBOX}_claim, ${INBOX}_take_v2`).catch(() => {});
}

const us = (ms) => `${Math.round(ms * 1000)}`.padStart(4);
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
const rows = {};
for (const side of ['store', 'hand']) {
  const deliveries = timed[side];
  const count = deliveries[0].statements.length;
  if (deliveries.some((d) => d.statements.length !== count)) throw new Error(`${side}: statements per delivery vary`);
  rows[side] = deliveries[0].statements.map(([word], k) => ({
    word,
    gap: deliveries.map((d) => d.statements[k][1] - (k === 0 ? 0 : d.statements[k - 1][2])),
    driver: deliveries.map((d) => d.statements[k][2] - d.statements[k][1]),
  }));
  rows[side].push({ word: '(answer)', gap: deliveries.map((d) => d.total - d.statements[count - 1][2]), driver: [0] });
  rows[side].total = deliveries.map((d) => d.total);
}
console.log(
  `\n## A fresh delivery, phase by phase: KyselyStore vs the hand-rolled transaction, ${ROUNDS} rounds of ${PER_ROUND} ` +
    `after ${WARM_UP_ROUNDS} of warm-up (us, mean / median)`,
);
console.log('  statement (store / hand-rolled)   before sending it: store  hand   | sent to answered: store  hand');
for (let k = 0; k < rows.store.length; k++) {
  const s = rows.store[k];
  const h = rows.hand[k];
  console.log(
    `  ${`${s.word} / ${h.word}`.padEnd(32)} ${us(mean(s.gap))}/${us(median(s.gap))} ${us(mean(h.gap))}/${us(median(h.gap))}` +
      `   |                  ${us(mean(s.driver))}/${us(median(s.driver))} ${us(mean(h.driver))}/${us(median(h.driver))}`,
  );
}
const sum = (side, part) => rows[side].reduce((a, row) => a + mean(row[part]), 0);
console.log(
  `  total: store ${us(mean(rows.store.total))}, hand-rolled ${us(mean(rows.hand.total))} (ratio ${(
    mean(rows.hand.total) / mean(rows.store.total)
  ).toFixed(3)}); this process before sending: ${us(sum('store', 'gap'))} against ${us(sum('hand', 'gap'))}; ` +
    `sent to answered: ${us(sum('store', 'driver'))} against ${us(sum('hand', 'driver'))}`,
);
await setup.end();
await db.destroy();
