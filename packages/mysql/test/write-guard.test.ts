import { createWebhookHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { registeredGuardCases } from '@service-pay/sql/testing';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MySqlStore } from '../src/index.js';
import { type ClientFixture, MYSQL_CLIENTS } from './clients/index.js';
import { openPool, uniqueName } from './support/database.js';

// The write guard's cases (the delivery's transaction is the only way to write; the talk-around spellings
// and late use among them) on every client of the registry (clients/index.ts) on the machine's MariaDB.
// Credits are counted in a table without a unique constraint, so a second one would show.
for (const entry of MYSQL_CLIENTS) {
  describe(`${entry.name} on MariaDB: the delivery transaction is the only way to write`, () => {
    let client: ClientFixture<never>;
    beforeAll(async () => {
      client = await entry.open();
    });
    afterAll(() => client?.close());
    for (const c of registeredGuardCases(entry, () => client, 'mysql')) it(c.name, c.run);
  });
}

// The read-only mode on mysql2's pool, checked on the connections themselves after a delivery.
const marks = uniqueName('guard_marks');
const inboxes: string[] = [];
let admin: mysql.Pool;

beforeAll(async () => {
  admin = await openPool({ connectionLimit: 4 });
  await admin.query(`create table ${marks} (id bigint auto_increment primary key, marker varchar(255) not null)`);
});
afterAll(async () => {
  await admin.query(`drop table if exists ${[marks, ...inboxes.flatMap((i) => [i, `${i}_keys`])].join(', ')}`);
  await admin.end();
});

const count = async (marker: string) => {
  const [rows] = await admin.query(`select count(*) as n from ${marks} where marker = ?`, [marker]);
  return Number((rows as Array<{ n: unknown }>)[0]?.n);
};
const insert = `insert into ${marks} (marker) values (?)`;

function inbox(): string {
  const name = uniqueName('guard_inbox');
  inboxes.push(name);
  return name;
}

it('nothing of the read-only mode outlives a read: the pool serves the next request read-write', async () => {
  const two = await openPool({ connectionLimit: 2 });
  const secret = 'whsec_read_only_after_0123456789abcdef';
  try {
    const store = new MySqlStore({ pool: two, tableName: inbox() });
    await store.migrate();
    const event = samplePaymentPaidEvent();
    const handle = createWebhookHandler({
      secret,
      store,
      onPaymentPaid: async (paid, ctx) => {
        await two.query('select 1');
        await two.execute('select ?', [1]);
        const connection = await two.getConnection();
        try {
          await connection.query('select 1');
        } finally {
          connection.release();
        }
        await (ctx.tx as mysql.PoolConnection).query(insert, [paid.paymentId]);
      },
    });
    const { body, headers } = signWebhook({ event, secret, deliveryId: 'dl_read_only_after' });
    expect((await handle({ method: 'POST', headers, rawBody: body })).status).toBe(200);
    const [a, b] = await Promise.all([two.getConnection(), two.getConnection()]);
    try {
      for (const connection of [a, b]) {
        const [rows] = await connection.query('select @@tx_read_only as ro');
        expect(Number((rows as Array<{ ro: unknown }>)[0]?.ro)).toBe(0);
        await connection.query(insert, [`after:${event.paymentId}`]);
      }
    } finally {
      a.release();
      b.release();
    }
    expect(await count(`after:${event.paymentId}`)).toBe(2);
  } finally {
    await two.end();
  }
});
