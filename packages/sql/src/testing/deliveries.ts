import assert from 'node:assert/strict';
import type { InboxDraft, TransactionalStore } from '@service-pay/core';
import { checkPipelineRoundTrips } from './ledger-round-trips.js';
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

/** How long a wait for a ROLLBACK sent after the answer lasts at most: far longer than one takes. */
const ROLLBACK_WAIT_MS = 5_000;

/** Resolves once `done()`; throws saying `what` after `ROLLBACK_WAIT_MS`. */
async function until(what: string, done: () => boolean): Promise<void> {
  const giveUpAt = Date.now() + ROLLBACK_WAIT_MS;
  while (!done()) {
    if (Date.now() >= giveUpAt) throw new Error(`${what} after ${ROLLBACK_WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Resolves once no connection through `proxy` is inside a transaction. */
function transactionsEnded(proxy: RoundTripProxy): Promise<void> {
  return until('a transaction was still open', () => proxy.inTransaction === 0);
}

/**
 * A duplicate asked while `gate` holds every ROLLBACK its connections send: credits `key` once, closes the
 * gate, asks again, and once that duplicate's ROLLBACK is held answers what `begin` had answered by then
 * (`'waiting'`: nothing yet). The gate stays closed; the caller opens it.
 *
 * @example
 * ```ts
 * expect(await answerBeforeRollback(store, gate, 'k_dup')).toEqual({ state: 'completed', fingerprint: 'fp' });
 * ```
 */
export async function answerBeforeRollback(
  store: TransactionalStore<unknown>,
  gate: { readonly waiting: number; close(): void },
  key: string,
): Promise<unknown> {
  await creditOnce({ store, credit: async () => {} }, key, 'p_dup');
  gate.close();
  const held = gate.waiting;
  const answer = store.begin(key, 'fp', draftOf('p_dup'));
  await until('the duplicate sent no ROLLBACK', () => gate.waiting > held);
  return Promise.race([answer, new Promise((resolve) => setImmediate(() => resolve('waiting')))]);
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
    // The answer may come before the ROLLBACK of a transaction that changed nothing; the server still runs it.
    await transactionsEnded(proxy);
  });
  if (state !== 'completed') throw new Error(`the duplicate was answered ${state}, not completed`);
  return { fresh, credit, duplicate };
}

/**
 * What a read through the app's own client costs in round trips, counted by `proxy`: `outside` a
 * delivery, and `inside` one of `store` (where the guard runs it read-only on the server).
 *
 * @example
 * ```ts
 * const { inside, outside } = await appReadRoundTrips(proxy, store, () => pool.query('select 1'));
 * ```
 */
export async function appReadRoundTrips<Tx>(
  proxy: RoundTripProxy,
  store: TransactionalStore<Tx>,
  read: () => PromiseLike<unknown>,
): Promise<{ inside: number; outside: number }> {
  const counted = async (work: () => PromiseLike<unknown>) => {
    const before = proxy.count;
    await work();
    return proxy.count - before;
  };
  await read();
  const outside = await counted(read);
  const draft = draftOf('p_read');
  const claim = await store.begin(`read:${Math.random()}`, 'fp', draft);
  if (claim.state !== 'claimed') throw new Error(`expected a claim, got ${claim.state}`);
  let inside = 0;
  const scope = claim.session.scope;
  const run = scope === undefined ? (work: () => Promise<void>) => work() : scope.run.bind(scope);
  await run(async () => {
    inside = await counted(read);
  });
  await claim.session.commit({ outcome: 'credited', ...draft });
  return { inside, outside };
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

/** A client under the round-trip count: its store, the credit through `ctx.tx`, and how to close it. */
export interface RoundTripSubject<Tx> extends CreditingStore<Tx> {
  readonly name: string;
  close(): Promise<void>;
}

/**
 * The round-trip check, one case per client: a fresh delivery costs no more than `limit.fresh` besides the
 * handler's credit, a duplicate no more than `limit.duplicate`, counted by `proxy` (every client's
 * connections must go through it). Each case prints its counts. Run the cases one at a time: the proxy
 * counts across every connection.
 *
 * @example
 * ```ts
 * for (const c of roundTripCases(proxy, 'PostgreSQL', { fresh: 4, duplicate: 3 }, subjects)) it(c.name, c.run);
 * ```
 */
export function roundTripCases(
  proxy: RoundTripProxy,
  database: string,
  limit: { readonly fresh: number; readonly duplicate: number },
  subjects: ReadonlyArray<() => Promise<RoundTripSubject<never>>>,
): Array<{ name: string; run: () => Promise<void> }> {
  return subjects.map((open, i) => ({
    name: `round trips on ${database}, client ${i}: fresh at most ${limit.fresh}, duplicate at most ${limit.duplicate}`,
    run: async () => {
      const subject = await open();
      try {
        const { fresh, credit, duplicate } = await deliveryRoundTrips(proxy, subject);
        console.info(
          `round trips on ${database}, ${subject.name}: fresh ${fresh} (the credit ${credit}), duplicate ${duplicate}`,
        );
        if (fresh - credit > limit.fresh - 1 || duplicate > limit.duplicate) {
          throw new Error(
            `${subject.name} on ${database}: fresh ${fresh - credit} besides the credit (at most ${limit.fresh - 1}), duplicate ${duplicate} (at most ${limit.duplicate})`,
          );
        }
        await checkPipelineRoundTrips(proxy, database, subject, { fresh, duplicate }, () => transactionsEnded(proxy));
      } finally {
        await subject.close();
      }
    },
  }));
}

/**
 * An ORM client of the case list (`OrmClient`) as a round-trip subject: its store, its `write` as the
 * credit.
 *
 * @example
 * ```ts
 * const subjects = ORM_CLIENTS.map(ormRoundTripSubject);
 * ```
 */
export function ormRoundTripSubject(open: () => Promise<unknown>): () => Promise<RoundTripSubject<never>> {
  return async () => {
    const client = (await open()) as {
      name: string;
      store(): TransactionalStore<never>;
      write(tx: never, marker: string): Promise<void>;
      close(): Promise<void>;
    };
    return {
      name: client.name,
      store: client.store(),
      credit: (tx, marker) => client.write(tx, marker),
      close: () => client.close(),
    };
  };
}

/**
 * Checks each of `beginFailures`' lines for a missing inbox: `MissingTableError` naming its store and
 * `tableName`, pointing at `ddl` (the dialect's file in docs/sql), and saying nothing `notSaid` matches.
 *
 * @example
 * ```ts
 * assertMissingInbox(await beginFailures(stores), tableName, /docs\/sql\/mysql-inbox\.sql/, /older version/);
 * ```
 */
export function assertMissingInbox(
  failures: ReadonlyArray<readonly [string, string]>,
  tableName: string,
  ddl: RegExp,
  notSaid: RegExp,
): void {
  for (const [name, failure] of failures) {
    assert.match(failure, new RegExp(`^MissingTableError: ${name}: the inbox table ${tableName} does not exist;`));
    assert.match(failure, ddl);
    assert.doesNotMatch(failure, notSaid);
  }
}
