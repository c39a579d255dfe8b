import { ormStoreCases } from '@service-pay/sql/testing';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type ClientFixture, MYSQL_CLIENTS } from './clients/index.js';
import { DATABASE_URL } from './support/database.js';

// Every client of the registry (clients/index.ts: mysql2, Kysely, Drizzle, Knex, TypeORM, Prisma) on the
// machine's MariaDB runs the SQL stores' case list, core's transactional conformance among it.
for (const entry of MYSQL_CLIENTS) {
  describe(`ORM store (${entry.id}) on MariaDB`, () => {
    let client: ClientFixture<never>;
    beforeAll(async () => {
      client = await entry.open();
    });
    afterAll(() => client?.close());
    const cases = ormStoreCases(() => client, {
      param: '?',
      keyColumn: '`key`',
      dropClaimSupport: (c) => c.rows(`drop table ${c.inbox}_keys`),
      deadlock: {
        connect: async () => {
          const connection = await mysql.createConnection({ uri: DATABASE_URL });
          return {
            query: async (text: string) => (await connection.query(text))[0] as Array<Record<string, unknown>>,
            end: () => connection.end(),
          };
        },
      },
    });
    for (const c of cases) it(c.name, c.run);
  });
}
