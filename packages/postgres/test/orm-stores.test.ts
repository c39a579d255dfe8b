import { namedOwnTransactions, ormStoreCases, writeGuardCases } from '@service-pay/sql/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ORM_CLIENTS, type OrmClient } from './support/orm-clients.js';

// Every ORM store (Kysely, Drizzle on node-postgres and postgres.js, Knex, TypeORM, Prisma) on the machine's
// PostgreSQL runs the SQL stores' case list.
/** Each client's own-transaction forms, as its fixture names them (support/orm-clients.ts). */
const OWN_TRANSACTIONS: Record<string, string[]> = {
  kysely: ['db.transaction()', 'db.startTransaction()', 'pool.connect() + BEGIN'],
  drizzleNodePostgres: ['db.transaction()', 'pool.connect() + BEGIN'],
  drizzlePostgresJs: ['db.transaction()', 'sql.begin()'],
  knex: ['knex.transaction()', 'knex.transactionProvider()'],
  typeOrm: ['dataSource.transaction()', 'dataSource.manager.transaction()', 'queryRunner.startTransaction()'],
  prisma: ['prisma.$transaction(fn)', 'prisma.$transaction([...])'],
};

/** The clients whose app-client statements only the text check judges (no read-only run on the server). */
const TEXT_ONLY = new Set(['drizzlePostgresJs']);

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
      failedStatementAbortsTransaction: true,
      dropClaimSupport: (c) =>
        c.rows(`drop function ${c.inbox}_claim(text), ${c.inbox}_take_v2(text, text, text, text, text)`),
    });
    for (const c of cases) it(c.name, c.run);

    describe('the delivery transaction is the only way to write', () => {
      const label = open.name.replace(/Client$/, '');
      const guard = () => client.guard;
      const guardCases = writeGuardCases<never>({
        store: () => client.store(),
        write: (tx, marker) => client.write(tx, marker),
        count: (marker) => client.count(marker),
        get lazy() {
          return guard().lazy;
        },
        startWrite: (tx, marker) => guard().startWrite(tx, marker),
        globalWrite: (marker) => guard().globalWrite(marker),
        globalRead: () => guard().globalRead(),
        // Named now (the cases are listed before the client opens), run on the client once it is open.
        ownTransactions: namedOwnTransactions(OWN_TRANSACTIONS[label] ?? [], () => guard().ownTransactions),
        stepwise: ['pool.connect() + BEGIN'],
        poolOfOne: () => (guard().poolOfOne as NonNullable<ReturnType<typeof guard>['poolOfOne']>)(),
        raw: {
          dialect: 'postgres',
          get table() {
            return guard().raw?.table ?? '';
          },
          send: (text) => (guard().raw as NonNullable<ReturnType<typeof guard>['raw']>).send(text),
          textOnly: TEXT_ONLY.has(label),
        },
      });
      for (const c of guardCases) it(c.name, c.run);
    });
  });
}
