import type { DedupeStore } from '../store/dedupe-store.js';
import type { DeliveryScope } from '../store/delivery-scope.js';
import type {
  InboxRecord,
  TransactionalStore,
  TransactionClaim,
  TransactionSession,
} from '../store/transactional-store.js';

/**
 * One case of the store conformance suite: a name and an async check that throws on failure.
 *
 * @example
 * ```ts
 * const cases: ConformanceCase[] = dedupeStoreConformance(() => new MemoryDedupeStore());
 * ```
 */
export interface ConformanceCase {
  name: string;
  run: () => Promise<void>;
}

/**
 * What a store factory returns: the store and, when it needs it, a clean-up run after each case.
 *
 * @example
 * ```ts
 * const made: StoreUnderTest<DedupeStore> = { store, cleanup: async () => client.quit() };
 * ```
 */
export type StoreUnderTest<S = DedupeStore> = S | { store: S; cleanup?: () => Promise<void> };

/**
 * How the transactional part of the suite writes through a store's transaction and counts what committed:
 * a row in a table of the test's own, keyed by `marker`.
 *
 * @example
 * ```ts
 * const writes: TransactionalWrites<PoolClient> = {
 *   write: async (tx, marker) => { await tx.query('insert into marks (m) values ($1)', [marker]); },
 *   count: async (marker) => Number((await pool.query('select count(*) from marks where m = $1', [marker])).rows[0].count),
 * };
 * ```
 */
export interface TransactionalWrites<Tx> {
  /** Writes one row tagged `marker` through `tx`. */
  write(tx: Tx, marker: string): Promise<void>;
  /** How many committed rows carry `marker`, read outside any test transaction. */
  count(marker: string): Promise<number>;
  /** A statement through `tx` that takes about `ms` (e.g. `select pg_sleep`), to roll back while it runs. */
  slowQuery?(tx: Tx, ms: number): Promise<unknown>;
}

type Case<S> = (name: string, body: (store: S, key: string) => Promise<void>) => ConformanceCase;

function caseRunner<S>(makeStore: () => StoreUnderTest<S> | Promise<StoreUnderTest<S>>): Case<S> {
  return (name, body) => ({
    name,
    run: async () => {
      const made = await makeStore();
      const wrapper = isWrapper(made) ? made : undefined;
      const store = wrapper === undefined ? (made as S) : wrapper.store;
      const key = `conformance:${name.replace(/\W+/g, '-')}:${Math.random().toString(36).slice(2)}`;
      try {
        await body(store, key);
      } finally {
        await wrapper?.cleanup?.();
      }
    },
  });
}

/** `{ store, cleanup }` rather than a store itself (which has `claim` or `begin`). */
function isWrapper<S>(made: StoreUnderTest<S>): made is { store: S; cleanup?: () => Promise<void> } {
  return typeof made === 'object' && made !== null && 'store' in made && !('claim' in made) && !('begin' in made);
}

/**
 * The behaviour every lease store (`DedupeStore`) must have, as framework-neutral cases. The memory store,
 * the Redis store (single node and Cluster) and any store you write run the same list.
 *
 * `makeStore` is called once per case; keys are unique per case, so one backing database can serve all.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest';
 * import { dedupeStoreConformance } from '@service-pay/core/testing';
 *
 * describe('MyStore', () => {
 *   for (const c of dedupeStoreConformance(() => new MyStore())) it(c.name, c.run);
 * });
 * ```
 */
export function dedupeStoreConformance(
  makeStore: () => StoreUnderTest<DedupeStore> | Promise<StoreUnderTest<DedupeStore>>,
): ConformanceCase[] {
  const run = caseRunner(makeStore);
  return [
    run('a fresh key is claimed', async (store, key) => {
      equal(await store.claim(key, 't1', 'fp', 10_000), { state: 'claimed' });
    }),
    run('50 parallel claims of one key give exactly one claimed', async (store, key) => {
      const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => store.claim(key, `t${i}`, 'fp', 10_000)));
      const claimed = outcomes.filter((o) => o.state === 'claimed').length;
      if (claimed !== 1) throw new Error(`expected exactly 1 claimed, got ${claimed}`);
      for (const o of outcomes) {
        if (o.state === 'in-progress') {
          equal(o.fingerprint, 'fp');
          if (!(o.retryAfterMs > 0 && o.retryAfterMs <= 10_000)) {
            throw new Error(`retryAfterMs out of range: ${o.retryAfterMs}`);
          }
        } else if (o.state !== 'claimed') throw new Error(`unexpected ${o.state}`);
      }
    }),
    run('a held key answers in-progress with its fingerprint and the time left', async (store, key) => {
      await store.claim(key, 't1', 'fp-1', 10_000);
      const again = await store.claim(key, 't2', 'fp-2', 10_000);
      equal(again.state, 'in-progress');
      equal((again as { fingerprint: string }).fingerprint, 'fp-1');
      const left = (again as { retryAfterMs: number }).retryAfterMs;
      if (!(left > 9_000 && left <= 10_000)) throw new Error(`retryAfterMs should be the time left, got ${left}`);
    }),
    run('a completed key answers completed with its fingerprint', async (store, key) => {
      await store.claim(key, 't1', 'fp-1', 10_000);
      equal(await store.complete(key, 't1', 60_000, 'fp-1'), true);
      equal(await store.claim(key, 't2', 'fp-1', 10_000), { state: 'completed', fingerprint: 'fp-1' });
      equal(await store.claim(key, 't3', 'fp-other', 10_000), { state: 'completed', fingerprint: 'fp-1' });
    }),
    run(
      'release and extend by a token that does not hold the lease give false and change nothing',
      async (store, key) => {
        await store.claim(key, 'owner', 'fp', 10_000);
        equal(await store.release(key, 'stale'), false);
        equal(await store.extend(key, 'stale', 10_000), false);
        // ...and they changed nothing: the owner still holds the lease.
        equal((await store.claim(key, 'other', 'fp', 10_000)).state, 'in-progress');
        equal(await store.extend(key, 'owner', 10_000), true);
        equal(await store.complete(key, 'owner', 60_000, 'fp'), true);
      },
    ),
    run(
      "a foreign complete records completion and answers false; the foreign holder's extend then fails",
      async (store, key) => {
        // Two attempts overlap (the first one's lease ran out while its handler ran): the one that finishes
        // first records the key whatever it finds, so the other, still running, learns at its next extend (the
        // pipeline's confirmLease) that it must not commit a second credit.
        await store.claim(key, 'owner', 'fp', 10_000);
        equal(await store.complete(key, 'finished-first', 60_000, 'fp'), false);
        equal(await store.claim(key, 'later', 'fp', 10_000), { state: 'completed', fingerprint: 'fp' });
        equal(await store.extend(key, 'owner', 10_000), false);
        equal(await store.release(key, 'owner'), false);
        equal(await store.complete(key, 'owner', 60_000, 'fp'), false);
        equal((await store.claim(key, 'later', 'fp', 10_000)).state, 'completed');
      },
    ),
    run('release and extend of an unknown key give false', async (store, key) => {
      equal(await store.release(key, 't'), false);
      equal(await store.extend(key, 't', 10_000), false);
    }),
    run('complete of a key the store lost records it completed, with the fingerprint given', async (store, key) => {
      // The store restarted empty, or the lease ran out, while the handler ran: the handler has credited.
      equal(await store.complete(key, 't1', 60_000, 'fp-lost'), true);
      equal(await store.claim(key, 't2', 'fp-lost', 10_000), { state: 'completed', fingerprint: 'fp-lost' });
    }),
    run('complete is idempotent for the token that completed; another token gets false', async (store, key) => {
      await store.claim(key, 't1', 'fp', 10_000);
      equal(await store.complete(key, 't1', 60_000, 'fp'), true);
      // A retried complete whose first try did land (its answer was lost) is not taken for another attempt.
      equal(await store.complete(key, 't1', 60_000, 'fp'), true);
      equal(await store.complete(key, 'someone-else', 60_000, 'fp'), false);
      equal(await store.release(key, 't1'), false);
      equal(await store.extend(key, 't1', 10_000), false);
      equal((await store.claim(key, 't2', 'fp', 10_000)).state, 'completed');
    }),
    run('a released key can be claimed again', async (store, key) => {
      await store.claim(key, 't1', 'fp', 10_000);
      equal(await store.release(key, 't1'), true);
      equal(await store.claim(key, 't2', 'fp', 10_000), { state: 'claimed' });
    }),
    run('an expired lease can be claimed again, and the old token is fenced off', async (store, key) => {
      await store.claim(key, 't1', 'fp', 60);
      await sleep(120);
      equal(await store.extend(key, 't1', 10_000), false);
      equal(await store.claim(key, 't2', 'fp', 10_000), { state: 'claimed' });
      equal(await store.extend(key, 't1', 10_000), false);
      equal(await store.release(key, 't1'), false);
      // t1's handler finished anyway: its complete records the key (false: t2 held it), fencing t2 off.
      equal(await store.complete(key, 't1', 60_000, 'fp'), false);
      equal(await store.extend(key, 't2', 10_000), false);
      equal((await store.claim(key, 't3', 'fp', 10_000)).state, 'completed');
    }),
    run('extend keeps a lease alive past its first end', async (store, key) => {
      // Extended at once, and looked at only once the first lease is surely over (it ran from before the
      // claim returned): a loaded machine can delay each call, and a short first lease with a sleep before
      // the extend (150 ms, 80 ms) had it expire first on a store behind an HTTP proxy.
      const firstLeaseMs = 600;
      await store.claim(key, 't1', 'fp', firstLeaseMs);
      const claimed = Date.now();
      equal(await store.extend(key, 't1', 10_000), true);
      await sleep(Math.max(0, claimed + firstLeaseMs + 50 - Date.now()));
      equal((await store.claim(key, 't2', 'fp', 10_000)).state, 'in-progress');
    }),
    run('a completed key is forgotten after retainMs', async (store, key) => {
      await store.claim(key, 't1', 'fp', 10_000);
      await store.complete(key, 't1', 80, 'fp');
      await sleep(150);
      equal(await store.claim(key, 't2', 'fp', 10_000), { state: 'claimed' });
    }),
    run('keys are independent', async (store, key) => {
      equal((await store.claim(`${key}:a`, 't', 'fp', 10_000)).state, 'claimed');
      equal((await store.claim(`${key}:b`, 't', 'fp', 10_000)).state, 'claimed');
    }),
  ];
}

/**
 * The store of one transactional case, wrapped so that every session the case claimed is rolled back when it
 * ends, however it ends: a case that fails half-way would otherwise leave a transaction open, holding its
 * locks and a pooled connection on a shared server. A session the case already ended is rolled back again,
 * which the contract makes a no-op: every store is checked for that too.
 */
function closingEverySession<Tx>(made: StoreUnderTest<TransactionalStore<Tx>>): {
  store: TransactionalStore<Tx>;
  cleanup: () => Promise<void>;
} {
  const wrapper = isWrapper(made) ? made : undefined;
  const store = wrapper === undefined ? (made as TransactionalStore<Tx>) : wrapper.store;
  const sessions: Array<{ rollback(reason: unknown): Promise<void> }> = [];
  return {
    store: {
      kind: 'transactional',
      begin: async (key, fingerprint, draft) => {
        const claim = await store.begin(key, fingerprint, draft);
        if (claim.state === 'claimed') sessions.push(claim.session);
        return claim;
      },
    },
    cleanup: async () => {
      try {
        await Promise.all(sessions.map((session) => session.rollback(new Error('conformance case over'))));
      } finally {
        await wrapper?.cleanup?.();
      }
    },
  };
}

/**
 * The transactional part of the suite: the behaviour every `TransactionalStore` must have. `writes` lets
 * the cases write through the store's transaction and count what committed, so rollback and commit are
 * checked on real data. `@service-pay/postgres` runs it on PostgreSQL and on PGlite.
 *
 * @example
 * ```ts
 * for (const c of transactionalStoreConformance(() => new PostgresStore({ pool }), writes)) it(c.name, c.run);
 * ```
 */
export function transactionalStoreConformance<Tx>(
  makeStore: () => StoreUnderTest<TransactionalStore<Tx>> | Promise<StoreUnderTest<TransactionalStore<Tx>>>,
  writes: TransactionalWrites<Tx>,
): ConformanceCase[] {
  const run = caseRunner(async () => closingEverySession(await makeStore()));
  const record = (paymentId: string, outcome: 'credited' | 'rejected' = 'credited') => ({
    outcome,
    paymentId,
    deliveryId: 'dl_conformance',
    source: 'webhook' as const,
    ...(outcome === 'rejected' ? { reason: 'conformance' } : {}),
  });
  const claimed = (claim: TransactionClaim<Tx>) => {
    if (claim.state !== 'claimed') throw new Error(`expected claimed, got ${claim.state}: ${JSON.stringify(claim)}`);
    return claim.session;
  };
  return [
    run('a fresh key is claimed; after commit it answers completed with its fingerprint', async (store, key) => {
      const session = claimed(await store.begin(key, 'fp-1'));
      await writes.write(session.tx, key);
      await session.commit(record('p_1'));
      equal(await writes.count(key), 1);
      equal(await store.begin(key, 'fp-1'), { state: 'completed', fingerprint: 'fp-1' });
      equal(await store.begin(key, 'fp-other'), { state: 'completed', fingerprint: 'fp-1' });
    }),
    run('a key held by an open transaction answers in-progress at once, without waiting', async (store, key) => {
      const session = claimed(await store.begin(key, 'fp'));
      const started = Date.now();
      const second = await withinMs(store.begin(key, 'fp'), 1_500, 'begin on a held key waited');
      equal(second.state, 'in-progress');
      const retryAfterMs = (second as { retryAfterMs: number }).retryAfterMs;
      if (!(retryAfterMs > 0)) throw new Error(`retryAfterMs must be positive, got ${retryAfterMs}`);
      if (Date.now() - started > 1_500) throw new Error('begin on a held key waited');
      await session.rollback(new Error('conformance'));
    }),
    run('rollback undoes the writes and frees the key at once', async (store, key) => {
      const session = claimed(await store.begin(key, 'fp'));
      await writes.write(session.tx, key);
      await session.rollback(new Error('handler failed'));
      equal(await writes.count(key), 0);
      const again = claimed(await store.begin(key, 'fp'));
      await again.commit(record('p_2'));
      equal((await store.begin(key, 'fp')).state, 'completed');
    }),
    run('a rejected commit rolls the writes back and records the key', async (store, key) => {
      const session = claimed(await store.begin(key, 'fp'));
      await writes.write(session.tx, key);
      await session.commit(record('p_3', 'rejected'));
      equal(await writes.count(key), 0);
      equal(await store.begin(key, 'fp'), { state: 'completed', fingerprint: 'fp' });
    }),
    run(
      'rollback while a statement runs (a deadline) ends it, frees the key, and commits nothing later',
      async (store, key) => {
        const session = claimed(await store.begin(key, 'fp'));
        await writes.write(session.tx, key);
        const slow = writes.slowQuery?.(session.tx, 5_000).catch((error: unknown) => error);
        await sleep(50);
        await withinMs(session.rollback(new Error('deadline')), 2_000, 'rollback waited for the running statement');
        await slow;
        // A late handler that writes through the old tx must not commit anything.
        await writes.write(session.tx, key).catch(() => {});
        equal(await writes.count(key), 0);
        // The key is free again; end this transaction too, so nothing is left holding its locks.
        await claimed(await store.begin(key, 'fp')).rollback(new Error('conformance: done'));
      },
    ),
    run('20 parallel begins of one key give exactly one claimed', async (store, key) => {
      const claims = await Promise.all(Array.from({ length: 20 }, () => store.begin(key, 'fp')));
      const winners = claims.filter((c) => c.state === 'claimed');
      if (winners.length !== 1) throw new Error(`expected exactly 1 claimed, got ${winners.length}`);
      for (const c of claims) if (c.state === 'completed') throw new Error('nothing was committed yet');
      await (winners[0] as { session: { commit: (r: ReturnType<typeof record>) => Promise<void> } }).session.commit(
        record('p_4'),
      );
      equal((await store.begin(key, 'fp')).state, 'completed');
    }),
    run('keys are independent', async (store, key) => {
      const a = claimed(await store.begin(`${key}:a`, 'fp'));
      const b = claimed(await store.begin(`${key}:b`, 'fp'));
      await a.rollback(new Error('done'));
      await b.rollback(new Error('done'));
    }),
    ...deliveryScopeCases(run, claimed, record, writes),
  ];
}

/**
 * The delivery scope's part of the transactional suite: every transactional store opens one per delivery
 * (`session.scope`), a refusal recorded in it fails the commit however the handler treated it, and a
 * `ctx.tx` write after the end is reported as a late use naming the payment, never committed.
 */
function deliveryScopeCases<Tx>(
  run: Case<TransactionalStore<Tx>>,
  claimed: (claim: TransactionClaim<Tx>) => TransactionSession<Tx>,
  record: (paymentId: string) => InboxRecord,
  writes: TransactionalWrites<Tx>,
): ConformanceCase[] {
  const scopeOf = (session: TransactionSession<Tx>): DeliveryScope => {
    if (session.scope === undefined) throw new Error('a transactional store must open a delivery scope (openDelivery)');
    return session.scope;
  };
  return [
    run(
      'a refusal recorded during the handler, even caught, fails the commit: nothing written, the key free',
      async (store, key) => {
        const session = claimed(
          await store.begin(key, 'fp', { paymentId: 'p_refused', deliveryId: 'dl_1', source: 'webhook' }),
        );
        const scope = scopeOf(session);
        const refusal = new Error('refused by a guard');
        await scope.run(async () => {
          await writes.write(session.tx, key);
          await scope.refuse(refusal).catch(() => 'caught by the handler');
        });
        const failure = await session.commit(record('p_refused')).then(
          () => undefined,
          (error: unknown) => error,
        );
        if (failure !== refusal)
          throw new Error(`expected the commit to fail with the refusal, got ${String(failure)}`);
        equal(scope.refusal === refusal, true);
        equal(await writes.count(key), 0);
        await claimed(await store.begin(key, 'fp')).rollback(new Error('conformance: done'));
      },
    ),
    run(
      'a ctx.tx write after the handler returned and the delivery committed: reported as a late use naming the payment, nothing written',
      async (store, key) => {
        const session = claimed(
          await store.begin(key, 'fp', { paymentId: 'p_late', deliveryId: 'dl_1', source: 'webhook' }),
        );
        const scope = scopeOf(session);
        const reported: Error[] = [];
        let heard: () => void = () => {};
        const late = new Promise<void>((resolve) => (heard = resolve));
        scope.onLateUse((error) => {
          reported.push(error);
          heard();
        });
        await scope.run(async () => {});
        await session.commit(record('p_late'));
        // Work the handler left behind: it must neither write nor reject unhandled.
        void Promise.resolve()
          .then(() => writes.write(session.tx, `${key}:late`))
          .catch(() => {});
        await withinMs(late, 5_000, 'the late use was not reported');
        equal(reported.length, 1);
        equal((reported[0] as { code?: unknown }).code, 'LATE_TX_USE');
        if (!/p_late/.test((reported[0] as Error).message)) throw new Error('the late use must name the payment');
        equal(await writes.count(`${key}:late`), 0);
      },
    ),
  ];
}

async function withinMs<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} (over ${ms} ms)`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function equal(actual: unknown, expected: unknown): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`expected ${e}, got ${a}`);
}
