import { readFileSync } from 'node:fs';
import { createFetchHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { PostgresStore } from '@service-pay/postgres';
import { testServers } from '@service-pay/test-kit';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';

// docs/sql/postgres-inbox.sql, the DDL for teams that own their schema, applied to an empty schema of its
// own: a store that runs no DDL of its own (`autoMigrate: false`) then credits the first delivery once.
const DATABASE_URL = testServers().postgresUrl;
const schema = `t_inbox_schema_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const secret = 'whsec_inbox_schema_test_0123456789';
const documented = readFileSync(new URL('../../docs/sql/postgres-inbox.sql', import.meta.url), 'utf8');
let admin: pg.Pool;
let pool: pg.Pool;

beforeAll(async () => {
  admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  await admin.query(`create schema ${schema}`);
  // Every connection of the app's pool works in the new schema, as the file's unqualified names expect.
  pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2, options: `-c search_path=${schema}` });
  await pool.query(documented);
  await pool.query('create table credits (payment_id text not null)');
});

afterAll(async () => {
  await pool?.end();
  await admin?.query(`drop schema if exists ${schema} cascade`);
  await admin?.end();
});

it('the documented DDL is what the store needs: the first delivery credited once, its duplicate not', async () => {
  // `autoMigrate: false` where the store knows it; a store without the option ignores it and runs no DDL
  // before `migrate()` either.
  const options = { pool, autoMigrate: false } as ConstructorParameters<typeof PostgresStore>[0];
  const store = new PostgresStore(options);
  const handle = createFetchHandler({
    secret,
    store,
    onPaymentPaid: async (event, ctx) => {
      await ctx.tx.query('insert into credits (payment_id) values ($1)', [event.paymentId]);
    },
  });
  const event = samplePaymentPaidEvent();
  const deliver = async () => {
    const { body, headers } = signWebhook({ event, secret });
    const response = await handle(new Request('http://shop.test/webhooks/service', { method: 'POST', headers, body }));
    return [response.status, await response.json()];
  };
  expect(await deliver()).toEqual([200, { received: true }]);
  expect(await deliver()).toEqual([200, { received: true, duplicate: true }]);
  expect((await pool.query('select count(*)::int as n from credits')).rows[0].n).toBe(1);
  const tables = await pool.query(`select table_name from information_schema.tables where table_schema = $1`, [schema]);
  expect(tables.rows.map((r) => r.table_name).sort()).toEqual(['credits', 'service_pay_inbox']);
});

it('the documented claim functions are the ones migrate() makes (a change to one without the other fails here)', async () => {
  const made = `${schema}_made`;
  await admin.query(`create schema ${made}`);
  const madePool = new pg.Pool({ connectionString: DATABASE_URL, max: 1, options: `-c search_path=${made}` });
  try {
    await new PostgresStore({ pool: madePool }).migrate();
    const functions = async (name: string) =>
      (
        await admin.query(
          `select p.proname, replace(pg_get_functiondef(p.oid), n.nspname || '.', '') as def from pg_proc p
           join pg_namespace n on n.oid = p.pronamespace where n.nspname = $1 order by p.proname`,
          [name],
        )
      ).rows;
    const documentedFunctions = await functions(schema);
    expect(documentedFunctions.map((f) => f.proname)).toEqual(['service_pay_inbox_claim', 'service_pay_inbox_take_v2']);
    expect(documentedFunctions).toEqual(await functions(made));
  } finally {
    await madePool.end();
    await admin.query(`drop schema if exists ${made} cascade`);
  }
});
