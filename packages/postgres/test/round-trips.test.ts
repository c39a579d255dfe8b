import type { TransactionalStore } from '@service-pay/core';
import { deliveryRoundTrips, startRoundTripProxy } from '@service-pay/sql/testing';
import { afterAll, describe, expect, it } from 'vitest';

// Round trips of one delivery, counted by what the server answers (a proxy in front of it counts every
// ReadyForQuery), for every client. The hand-rolled transaction is the yardstick: BEGIN; INSERT ... ON
// CONFLICT DO NOTHING; the credit; COMMIT = 4 for a fresh payment, and BEGIN; the INSERT that finds the
// row; ROLLBACK = 3 for a duplicate.
const HAND_ROLLED = { fresh: 4, duplicate: 3 };

const target = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const proxy = await startRoundTripProxy('postgres', Number(target.port || 5432));
target.port = String(proxy.port);
// The clients below read DATABASE_URL when their modules load: every connection goes through the proxy.
process.env.DATABASE_URL = target.toString();
const { ORM_CLIENTS } = await import('./support/orm-clients.js');
const { postgresFlavour, postgresJsFlavour } = await import('./support/flavours.js');

afterAll(() => proxy.close());

interface Subject<Tx> {
  name: string;
  store: TransactionalStore<Tx>;
  credit(tx: Tx, marker: string): Promise<unknown>;
  close(): Promise<void>;
}

const subjects: Array<() => Promise<Subject<never>>> = [
  ...ORM_CLIENTS.map((make) => async () => {
    const client = await make();
    const subject = {
      name: client.name,
      store: client.store(),
      credit: (tx: never, marker: string) => client.write(tx, marker),
      close: () => client.close(),
    };
    return subject as unknown as Subject<never>;
  }),
  async () => {
    const flavour = await postgresFlavour();
    return { name: flavour.name, store: flavour.store, credit: flavour.credit, close: flavour.close } as never;
  },
  async () => {
    const flavour = await postgresJsFlavour();
    return { name: flavour.name, store: flavour.store, credit: flavour.credit, close: flavour.close } as never;
  },
];

describe.each(subjects.map((make, i) => [i, make] as const))('round trips, PostgreSQL, client %i', (_, make) => {
  it('fresh: no more than the hand-rolled 4; duplicate: no more than its 3', async () => {
    const subject = await make();
    try {
      const { fresh, credit, duplicate } = await deliveryRoundTrips(proxy, subject);
      console.info(
        `round trips on PostgreSQL, ${subject.name}: fresh ${fresh} (the credit ${credit}), duplicate ${duplicate}`,
      );
      expect(fresh - credit).toBeLessThanOrEqual(HAND_ROLLED.fresh - 1);
      expect(duplicate).toBeLessThanOrEqual(HAND_ROLLED.duplicate);
    } finally {
      await subject.close();
    }
  });
});
