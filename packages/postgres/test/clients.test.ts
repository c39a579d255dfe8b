import { ormStoreCases, registeredGuardCases } from '@service-pay/sql/testing';
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
      for (const c of registeredGuardCases(entry, () => client, 'postgres')) it(c.name, c.run);
    });
  });
}
