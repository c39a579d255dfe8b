import type { OrmClient } from '@service-pay/sql/testing';
import knexFactory, { type Knex } from 'knex';
import { KnexStore } from '../../src/knex.js';
import { DATABASE_URL } from '../support/database.js';
import { tables } from './fixture.js';

/** Knex on mysql2: `KnexStore` on the app's `knex`, `ctx.tx` a `Knex.Transaction`. */
export async function knexClient(): Promise<OrmClient<Knex.Transaction>> {
  const t = await tables('kx');
  const knex = knexFactory({ client: 'mysql2', connection: DATABASE_URL, pool: { min: 0, max: 10 } });
  const store = () => new KnexStore({ knex, tableName: t.inbox });
  await store().migrate();
  return {
    name: 'Knex',
    inbox: t.inbox,
    store,
    write: async (tx, marker) => {
      await tx(t.marks).insert({ marker });
    },
    slowQuery: (tx, ms) => tx.raw('select sleep(?)', [ms / 1000]),
    statement: (tx, text) => tx.raw(text),
    writeInOwnTransaction: (marker) =>
      knex.transaction(async (own) => {
        await own(t.marks).insert({ marker });
      }),
    count: t.count,
    rows: t.rows,
    close: async () => {
      await knex.destroy();
      await t.drop();
    },
  };
}
