import { ormStoreCases } from '@service-pay/sql/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ORM_CLIENTS, type OrmClient } from './support/orm-clients.js';

// Every ORM store (Kysely, Drizzle on node-postgres and postgres.js, Knex, TypeORM, Prisma) on the machine's
// PostgreSQL runs the SQL stores' case list.
for (const open of ORM_CLIENTS) {
  describe(`ORM store (${open.name.replace(/Client$/, '')}) on PostgreSQL`, () => {
    let client: OrmClient<never>;
    beforeAll(async () => {
      client = (await open()) as OrmClient<never>;
    });
    afterAll(() => client?.close());
    const cases = ormStoreCases(() => client, {
      param: '$1',
      keyColumn: 'key',
      dropClaimSupport: (c) =>
        c.rows(`drop function ${c.inbox}_claim(text), ${c.inbox}_take(text, text, text, text, text)`),
    });
    for (const c of cases) it(c.name, c.run);
  });
}
