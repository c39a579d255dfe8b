import { createWebhookHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TypeOrmStore } from '../src/typeorm.js';
import { DATABASE_URL, openPool, uniqueName } from './support/database.js';

const SECRET = 'whsec_typeorm_uninitialized_0123456789';

// An app may build its store at start-up, before `await dataSource.initialize()`: TypeORM's driver makes
// its node-postgres pool only then, and the store guards that pool once it exists, so a write sent on the
// driver's pool beside ctx.tx is refused as on a DataSource given initialized.
describe('TypeOrmStore given a DataSource not yet initialized', () => {
  const inbox = uniqueName('typeorm_uninit');
  const marks = uniqueName('typeorm_uninit_marks');
  let admin: pg.Pool;
  const sources: DataSource[] = [];
  beforeAll(async () => {
    admin = await openPool({ max: 2 });
    await admin.query(`create table ${marks} (id serial primary key, marker text not null)`);
  });
  afterAll(async () => {
    for (const source of sources) if (source.isInitialized) await source.destroy();
    await admin.query(`drop table if exists ${marks}, ${inbox}`);
    await admin.query(`drop function if exists ${inbox}_claim, ${inbox}_take_v2`);
    await admin.end();
  });
  const count = async (marker: string) =>
    Number((await admin.query(`select count(*)::int as n from ${marks} where marker = $1`, [marker])).rows[0].n);

  async function deliverWritingOnThePool(store: TypeOrmStore, dataSource: DataSource) {
    const event = samplePaymentPaidEvent();
    let code: unknown;
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      logger: {
        warn: () => {},
        error: (fields) => {
          code = (fields as { err?: { code?: unknown } }).err?.code;
        },
      },
      onPaymentPaid: async (paid) => {
        const pool = (dataSource.driver as unknown as { master: pg.Pool }).master;
        await pool.query(`insert into ${marks} (marker) values ($1)`, [paid.paymentId]);
      },
    });
    const { body, headers } = signWebhook({ event, secret: SECRET });
    const { status } = await handle({ method: 'POST', headers, rawBody: body });
    return { status, code, credits: await count(event.paymentId) };
  }

  it('is accepted, and guards the driver pool once initialize() resolves', async () => {
    const dataSource = new DataSource({ type: 'postgres', url: DATABASE_URL, poolSize: 4 });
    sources.push(dataSource);
    const store = new TypeOrmStore({ dataSource, tableName: inbox });
    await dataSource.initialize();
    await store.migrate();
    expect(await deliverWritingOnThePool(store, dataSource)).toEqual({
      status: 500,
      code: 'WRITE_OUTSIDE_TRANSACTION',
      credits: 0,
    });
  });
});
