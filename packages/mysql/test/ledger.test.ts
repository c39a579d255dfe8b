import { ledgerConformance } from '@service-pay/core/testing';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { MySqlStore } from '../src/index.js';
import { openPool, uniqueName } from './support/database.js';

describe('the ledger on MySqlStore (mysql2, MariaDB)', () => {
  let pool: mysql.Pool;
  const inbox = uniqueName('ledger_inbox');

  beforeAll(async () => {
    pool = await openPool();
  });
  afterAll(async () => {
    for (const t of [`${inbox}_ledger`, `${inbox}_keys`, inbox]) await pool.query(`drop table if exists ${t}`);
    await pool.end();
  });

  // No migrate() first: the first failure's ledger write makes what is missing (autoMigrate).
  const cases = ledgerConformance({
    make: async () => ({ store: new MySqlStore({ pool, tableName: inbox }) }),
    another: async () => ({ store: new MySqlStore({ pool, tableName: inbox }) }),
  });
  for (const c of cases) it(c.name, c.run);
});
