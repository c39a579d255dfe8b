import { ormStoreSuite } from '@service-pay/sql/testing';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DATABASE_URL } from './support/database.js';
import { ORM_CLIENTS, type OrmClient } from './support/orm-clients.js';

// The ORM stores on MySQL/MariaDB (Kysely, Drizzle, Prisma) on the machine's MariaDB run the SQL stores'
// case list.
for (const open of ORM_CLIENTS) {
  describe(`ORM store (${open.name.replace(/Client$/, '')}) on MariaDB`, () => {
    const suite = ormStoreSuite(open as () => Promise<OrmClient<never>>, {
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
    beforeAll(suite.open);
    afterAll(suite.close);
    for (const c of suite.cases) it(c.name, c.run);
  });
}
