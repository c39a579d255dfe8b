import { ledgerConformance } from '@service-pay/core/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { openPGlite, openPool, uniqueName } from './support/database.js';

describe('the ledger on PostgresStore (node-postgres)', () => {
  let pool: pg.Pool;
  const inbox = uniqueName('ledger_inbox');

  beforeAll(async () => {
    pool = await openPool();
  });
  afterAll(async () => {
    await pool.query(`drop table if exists ${inbox}_ledger`);
    await pool.query(`drop table if exists ${inbox}`);
    await pool.end();
  });

  // No migrate() first: the first failure's ledger write makes what is missing (autoMigrate).
  const cases = ledgerConformance({
    make: async () => ({ store: new PostgresStore({ pool, tableName: inbox }) }),
    another: async () => ({ store: new PostgresStore({ pool, tableName: inbox }) }),
  });
  for (const c of cases) it(c.name, c.run);
});

describe('the ledger on PostgresStore (PGlite)', () => {
  let db: Awaited<ReturnType<typeof openPGlite>>;
  beforeAll(async () => {
    db = await openPGlite();
  });
  afterAll(() => db.close());
  const cases = ledgerConformance({ make: async () => ({ store: new PostgresStore({ pglite: db }) }) });
  for (const c of cases) it(c.name, c.run);
});
