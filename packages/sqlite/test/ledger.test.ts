import { ledgerConformance } from '@service-pay/core/testing';
import { afterAll, describe, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { open, scratchFolder } from './support/database.js';

describe('the ledger on SqliteStore (better-sqlite3)', () => {
  const folder = scratchFolder();
  const path = folder.file('ledger.db');
  const db = open(path);
  const other = open(path);
  afterAll(() => {
    db.close();
    other.close();
    folder.remove();
  });
  // No migrate() first: the first failure's ledger write makes what is missing (autoMigrate).
  const cases = ledgerConformance({
    make: async () => ({ store: new SqliteStore({ database: db }) }),
    another: async () => ({ store: new SqliteStore({ database: other }) }),
  });
  for (const c of cases) it(c.name, c.run);
});
