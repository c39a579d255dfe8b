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
      // Every session's open transaction and running statement (a metadata lock wait shows in its state).
      locksNow:
        'select p.id, p.command, p.state, p.time, left(p.info, 200) as info, t.trx_state, t.trx_started, ' +
        't.trx_rows_locked, t.trx_lock_structs from information_schema.processlist p ' +
        'left join information_schema.innodb_trx t on t.trx_mysql_thread_id = p.id ' +
        "where p.id <> connection_id() and (t.trx_id is not null or p.command <> 'Sleep') limit 40",
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
