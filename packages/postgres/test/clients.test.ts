import { namedOwnTransactions, ormStoreCases, writeGuardCases } from '@service-pay/sql/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type ClientFixture, POSTGRES_CLIENTS } from './clients/index.js';

// Every client of the registry (clients/index.ts) runs the SQL stores' case list (core's transactional
// conformance among them) and the write guard's cases (the talk-around spellings and late use among them).
for (const entry of POSTGRES_CLIENTS) {
  describe(`${entry.name} on PostgreSQL`, () => {
    let client: ClientFixture<never>;
    beforeAll(async () => {
      client = await entry.open();
    });
    afterAll(() => client?.close());
    const cases = ormStoreCases(() => client, {
      param: '$1',
      keyColumn: 'key',
      failedStatementAbortsTransaction: true,
      oneWriter: entry.oneConnection === true,
      dropClaimSupport: (c) =>
        c.rows(`drop function ${c.inbox}_claim(text), ${c.inbox}_take_v2(text, text, text, text, text)`),
    });
    for (const c of cases) it(c.name, c.run);

    describe('the delivery transaction is the only way to write', () => {
      const guard = () => client.guard;
      // The case list is made now and the fixture opens later: each part is read from it when a case runs.
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
        ownTransactions: namedOwnTransactions(entry.ownTransactions, () => guard().ownTransactions),
        ...(entry.stepwise ? { stepwise: entry.stepwise } : {}),
        ...(entry.apiForms ? { apiForms: namedOwnTransactions(entry.apiForms, () => guard().apiForms ?? {}) } : {}),
        ...(entry.callbackPool
          ? { callbackPool: () => (guard().callbackPool as NonNullable<Guard['callbackPool']>)() }
          : {}),
        ...(entry.oneConnection
          ? { oneConnection: true }
          : {
              poolOfOne: () => (guard().poolOfOne as NonNullable<Guard['poolOfOne']>)(),
              raw: {
                dialect: 'postgres',
                get table() {
                  return guard().raw?.table ?? '';
                },
                send: (text: string) => (guard().raw as NonNullable<Guard['raw']>).send(text),
                textOnly: entry.textOnly === true,
              },
            }),
      });
      for (const c of guardCases) it(c.name, c.run);
    });
  });
}

type Guard = ClientFixture<never>['guard'];
