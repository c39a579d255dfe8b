import { ormRoundTripSubject, proxyServerOf, type RoundTripSubject, roundTripCases } from '@service-pay/sql/testing';
import { testServers } from '@service-pay/test-kit';
import { afterAll, it } from 'vitest';

// Round trips of one delivery, counted by what the server answers (a proxy in front of it counts every
// ReadyForQuery), for every client. The hand-rolled transaction is the yardstick: BEGIN; INSERT ... ON
// CONFLICT DO NOTHING; the credit; COMMIT = 4 for a fresh payment, and BEGIN; the INSERT that finds the
// row; ROLLBACK = 3 for a duplicate.
const HAND_ROLLED = { fresh: 4, duplicate: 3 };

// The clients below read DATABASE_URL when their modules load: every connection goes through the proxy.
const proxy = await proxyServerOf('postgres', 'TEST_POSTGRES_URL', testServers().postgresUrl);
const { ORM_CLIENTS } = await import('./support/orm-clients.js');
const { postgresFlavour, postgresJsFlavour } = await import('./support/flavours.js');

afterAll(() => proxy.close());

const subjects: Array<() => Promise<RoundTripSubject<never>>> = [
  ...ORM_CLIENTS.map(ormRoundTripSubject),
  async () => (await postgresFlavour()) as unknown as RoundTripSubject<never>,
  async () => (await postgresJsFlavour()) as unknown as RoundTripSubject<never>,
];

for (const c of roundTripCases(proxy, 'PostgreSQL', HAND_ROLLED, subjects)) it(c.name, c.run);
