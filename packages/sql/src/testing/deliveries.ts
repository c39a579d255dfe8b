import type { InboxDraft, TransactionalStore } from '@service-pay/core';
import type { RoundTripProxy } from './round-trip-proxy.js';

/** A store under test and the handler's credit written through its `ctx.tx`. */
export interface CreditingStore<Tx> {
  readonly store: TransactionalStore<Tx>;
  credit(tx: Tx, marker: string): Promise<unknown>;
}

const draftOf = (paymentId: string): InboxDraft => ({ paymentId, deliveryId: 'dl_test', source: 'webhook' });

/**
 * One credited delivery of `paymentId` under `key`, as the pipeline runs it: begin with the row's draft,
 * the credit through `ctx.tx`, commit. Throws when the key is not claimed.
 *
 * @example
 * ```ts
 * await creditOnce(subject, 'k1', 'p_1');
 * ```
 */
export async function creditOnce<Tx>(subject: CreditingStore<Tx>, key: string, paymentId: string): Promise<void> {
  const draft = draftOf(paymentId);
  const claim = await subject.store.begin(key, 'fp', draft);
  if (claim.state !== 'claimed') throw new Error(`expected a claim of ${key}, got ${claim.state}`);
  await subject.credit(claim.session.tx, key);
  await claim.session.commit({ outcome: 'credited', ...draft });
}

/** What one delivery cost, counted by the proxy in front of the server. */
export interface DeliveryRoundTrips {
  /** A fresh payment, begin to commit, the credit included. */
  readonly fresh: number;
  /** The handler's credit alone (the client's own statements, e.g. Prisma's INSERT and SELECT). */
  readonly credit: number;
  /** The same payment again: begin answering `completed`. */
  readonly duplicate: number;
}

/**
 * Counts a fresh and a duplicate delivery through `proxy`, after two warm-up deliveries (every pool has
 * its connection, every client has prepared what it prepares once). Nothing else may use the proxy
 * meanwhile.
 *
 * @example
 * ```ts
 * const { fresh, credit, duplicate } = await deliveryRoundTrips(proxy, subject);
 * ```
 */
export async function deliveryRoundTrips<Tx>(
  proxy: RoundTripProxy,
  subject: CreditingStore<Tx>,
): Promise<DeliveryRoundTrips> {
  const counted = async (work: () => Promise<unknown>) => {
    const before = proxy.count;
    await work();
    return proxy.count - before;
  };
  let credit = 0;
  for (const warm of ['warm_a', 'warm_b']) {
    const measured: CreditingStore<Tx> = {
      store: subject.store,
      credit: async (tx, marker) => {
        credit = await counted(() => subject.credit(tx, marker));
      },
    };
    await creditOnce(measured, `${warm}:${Math.random()}`, 'p_warm');
  }
  const key = `rt:${Math.random()}`;
  const fresh = await counted(() => creditOnce(subject, key, 'p_rt'));
  let state = '';
  const duplicate = await counted(async () => {
    state = (await subject.store.begin(key, 'fp', draftOf('p_rt'))).state;
  });
  if (state !== 'completed') throw new Error(`the duplicate was answered ${state}, not completed`);
  return { fresh, credit, duplicate };
}

/**
 * How each named store's `begin` ends, as one line each: `claimed`, or the error's `name: message` (the
 * missing-table messages are what the tests read).
 *
 * @example
 * ```ts
 * const [[name, failure]] = await beginFailures([['KyselyStore', store]]); // failure: 'MissingTableError: KyselyStore: ...'
 * ```
 */
export function beginFailures(
  stores: ReadonlyArray<readonly [string, TransactionalStore<unknown>]>,
): Promise<Array<readonly [string, string]>> {
  return Promise.all(
    stores.map(async ([name, store]) => {
      const failure = await store.begin('k', 'fp').then(
        async (claim) => {
          if (claim.state === 'claimed') await claim.session.rollback(undefined);
          return 'claimed';
        },
        (error: Error) => `${error.name}: ${error.message}`,
      );
      return [name, failure] as const;
    }),
  );
}
