import assert from 'node:assert/strict';
import {
  createWebhookHandler,
  type PaymentPaidEvent,
  signWebhook,
  type TransactionalStore,
  type WebhookRequest,
} from '@service-pay/core';
import { OwnTransactionError } from '@service-pay/core/node';
import {
  type ConformanceCase,
  latch,
  samplePaymentPaidEvent,
  transactionalStoreConformance,
} from '@service-pay/core/testing';
import { deadlockTables, deadlockWithDelivery } from './deadlock.js';

/** What the cases use of a store: the transactional seam, `migrate` and `prune`. */
export type OrmStore<Tx> = TransactionalStore<Tx> & {
  migrate(): Promise<void>;
  prune(options: { olderThanMs: number }): Promise<number>;
};

/**
 * One ORM store as the cases use it: the store, the app's own client, a marks table WITHOUT a unique
 * constraint on `marker` (a second credit would show), and the natural mistake: the client's own
 * transaction opened inside the handler.
 */
export interface OrmClient<Tx> {
  name: string;
  inbox: string;
  /** A fresh store on the same client and inbox (stores are cheap; each conformance case takes one). */
  store(): OrmStore<Tx>;
  /** Inserts a mark with the ORM's own query builder, through the delivery's transaction. */
  write(tx: Tx, marker: string): Promise<void>;
  /** A statement through `tx` that runs for `ms` (none on SQLite: a statement blocks the whole process). */
  slowQuery?(tx: Tx, ms: number): Promise<unknown>;
  /** A statement through `tx` that the server refuses (a division by zero), for a handler to catch. */
  failingQuery?(tx: Tx): PromiseLike<unknown>;
  /** Any statement through `tx`, as SQL text (SAVEPOINT, ROLLBACK TO SAVEPOINT). */
  statement?(tx: Tx, text: string): PromiseLike<unknown>;
  /** A raw statement through `tx` (for the guard: BEGIN/COMMIT refused). */
  raw?(tx: Tx, text: string): unknown;
  /** The mistake: a mark written in a transaction of the app's own client, not `tx`. */
  writeInOwnTransaction(marker: string): Promise<void>;
  /** How many marks `marker` has, read outside any delivery. */
  count(marker: string): Promise<number>;
  /** Rows of a query outside any delivery. */
  rows(text: string, params?: unknown[]): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

/** What differs per database in the cases: how its SQL names the key column and a bound value. */
export interface OrmDatabase {
  /** `$1` on PostgreSQL, `?` on MySQL and SQLite. */
  readonly param: string;
  /** The inbox's `key` column as the database's SQL names it (`key`, `` `key` ``). */
  readonly keyColumn: string;
  /** Drops what the claim needs beside the inbox rows (a claim function, lock slots), for autoMigrate. */
  readonly dropClaimSupport: (client: OrmClient<never>) => Promise<unknown>;
  /**
   * One writer at a time, in the app's process (SQLite): a second key waits for the first delivery's
   * commit (answered in-progress), so core's "keys are independent" does not apply, and no statement runs
   * long enough to be interrupted (core's slow-query case).
   */
  readonly oneWriter?: boolean;
  /**
   * A failed statement leaves the transaction unable to commit (PostgreSQL: every later statement is
   * refused, and COMMIT ends it as a ROLLBACK without an error of its own).
   */
  readonly failedStatementAbortsTransaction?: boolean;
  /**
   * A deadlock rolls the whole transaction back (MySQL, MariaDB): given, a connection of the test's own
   * outside the store's client, to make one with the delivery's transaction.
   */
  readonly deadlock?: {
    connect(): Promise<{ query(text: string): Promise<Array<Record<string, unknown>>>; end(): Promise<unknown> }>;
  };
  /**
   * A query, read outside any delivery, of the server's open transactions and running statements. Given, a
   * conformance claim answered in-progress carries what it returned at that moment (`locksNow`), so a case
   * that expected a claim names who held the key, or the table, when it fails.
   */
  readonly locksNow?: string;
}

const SECRET = 'whsec_sql_orm_store_cases_0123456789';

function delivery(event: PaymentPaidEvent, attempt = 1): WebhookRequest {
  const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: `dl_orm_${event.paymentId}_${attempt}` });
  return { method: 'POST', headers, rawBody: body };
}

let sequence = 0;
const unique = () => `${Date.now().toString(36)}_${(sequence++).toString(36)}`;
const quiet = { warn: () => {}, error: () => {} };

/**
 * The cases every ORM store runs on every SQL database, framework-neutral (`{ name, run }`, asserting with
 * `node:assert`): core's transactional conformance, exactly once counted in credits (a failed first
 * attempt then its retry, 5 deliveries at once, a held key), the guard on `ctx.tx`, the natural mistake
 * (the ORM's own transaction in the handler), autoMigrate of what the claim needs, prune, and a rejection
 * reason kept intact. `client` is read when a case runs (open it in `beforeAll`).
 *
 * @example
 * ```ts
 * for (const c of ormStoreCases(() => client, { param: '$1', keyColumn: 'key', dropClaimSupport })) it(c.name, c.run);
 * ```
 */
export function ormStoreCases<Tx>(client: () => OrmClient<Tx>, database: OrmDatabase): ConformanceCase[] {
  const handler = (
    onPaymentPaid: (paid: PaymentPaidEvent, tx: Tx) => Promise<void>,
    logger: { warn(fields: unknown): void; error(fields: unknown): void } = quiet,
  ) =>
    createWebhookHandler({
      secret: SECRET,
      store: client().store(),
      logger,
      onPaymentPaid: (paid, ctx) => onPaymentPaid(paid, (ctx as unknown as { tx: Tx }).tx),
    });
  const claimed = async (key: string) => {
    const claim = await client().store().begin(key, 'fp');
    if (claim.state !== 'claimed') throw new Error(`expected a claim of ${key}, got ${claim.state}`);
    return claim.session;
  };
  const conformance = transactionalStoreConformance(() => withLocksNow(client(), database.locksNow), {
    write: (tx, marker) => client().write(tx, marker),
    count: (marker) => client().count(marker),
    // SQLite runs statements in the app's process: a long one blocks it, and nothing interrupts it.
    ...(database.oneWriter ? {} : { slowQuery: async (tx: Tx, ms: number) => await client().slowQuery?.(tx, ms) }),
  });
  return [
    ...conformance
      .filter((c) => !(database.oneWriter && c.name === 'keys are independent'))
      .map((c) => ({ name: `conformance: ${c.name}`, run: c.run })),
    ...(database.failedStatementAbortsTransaction
      ? [
          {
            name: 'a statement the handler caught left the transaction aborted: 500, nothing credited (not a 200 with nothing committed); the retry credits once',
            run: async () => {
              const failing = client().failingQuery;
              assert.ok(failing, `${client().name}: the fixture has no failingQuery`);
              const event = samplePaymentPaidEvent();
              let calls = 0;
              const handle = handler(async (paid, tx) => {
                calls += 1;
                await client().write(tx, paid.paymentId);
                if (calls === 1) await Promise.resolve(failing.call(client(), tx)).catch(() => {});
              });
              const first = await handle(delivery(event, 1));
              assert.equal(first.status, 500, first.body);
              assert.equal(await client().count(event.paymentId), 0);
              assert.equal((await handle(delivery(event, 2))).status, 200);
              assert.equal(await client().count(event.paymentId), 1);
            },
          },
          {
            name: 'a failed statement the handler rolled back to its savepoint leaves the transaction sound: credited once',
            run: async () => {
              const { failingQuery, statement } = client();
              assert.ok(failingQuery, `${client().name}: the fixture has no failingQuery`);
              // A client that fails its own transaction on any failed statement (postgres.js) has none.
              if (statement === undefined) return;
              const event = samplePaymentPaidEvent();
              const handle = handler(async (paid, tx) => {
                await client().write(tx, paid.paymentId);
                await statement.call(client(), tx, 'SAVEPOINT optional_step');
                await Promise.resolve(failingQuery.call(client(), tx)).catch(() =>
                  statement.call(client(), tx, 'ROLLBACK TO SAVEPOINT optional_step'),
                );
              });
              const answer = await handle(delivery(event, 1));
              assert.equal(answer.status, 200, answer.body);
              assert.equal(await client().count(event.paymentId), 1);
            },
          },
        ]
      : []),
    ...(database.deadlock ? [deadlockCase(client, database.deadlock, handler)] : []),
    {
      name: 'credits once through ctx.tx: a first attempt that throws after its write rolls back, the retry credits once',
      run: async () => {
        const event = samplePaymentPaidEvent();
        let calls = 0;
        const handle = handler(async (paid, tx) => {
          calls += 1;
          await client().write(tx, paid.paymentId);
          if (calls === 1) throw new Error('the first attempt fails after writing its credit');
        });
        assert.equal((await handle(delivery(event, 1))).status, 500);
        assert.equal(await client().count(event.paymentId), 0);
        assert.equal((await handle(delivery(event, 2))).status, 200);
        const third = await handle(delivery(event, 3));
        assert.equal(third.status, 200);
        assert.match(third.body, /duplicate/);
        assert.equal(await client().count(event.paymentId), 1);
        assert.equal(calls, 2);
      },
    },
    {
      name: '5 deliveries of one payment at once: 1 credit, the others 409 or duplicate',
      run: async () => {
        const event = samplePaymentPaidEvent();
        const handle = handler(async (paid, tx) => {
          await client().write(tx, paid.paymentId);
        });
        const answers = await Promise.all([1, 2, 3, 4, 5].map((attempt) => handle(delivery(event, attempt))));
        for (const answer of answers) assert.ok([200, 409].includes(answer.status), answer.body);
        // The sender retries what was not answered 200: one more round settles every one of them.
        assert.equal((await handle(delivery(event, 6))).status, 200);
        assert.equal(await client().count(event.paymentId), 1);
      },
    },
    {
      name: 'answers a delivery whose key another transaction holds at once (409), then credits once',
      run: async () => {
        const event = samplePaymentPaidEvent();
        const release = latch();
        const entered = latch();
        const handle = handler(async (paid, tx) => {
          await client().write(tx, paid.paymentId);
          entered.open();
          await release.opened;
        });
        const first = handle(delivery(event, 1));
        await entered.opened;
        // Answered while the holder is parked (it is released only below): nothing waits for it.
        assert.equal((await handle(delivery(event, 2))).status, 409);
        release.open();
        assert.equal((await first).status, 200);
        assert.match((await handle(delivery(event, 3))).body, /duplicate/);
        assert.equal(await client().count(event.paymentId), 1);
      },
    },
    {
      name: 'takes the key without waiting: 20 parallel first deliveries of one payment while the first holds it',
      run: async () => {
        const key = `burst:${unique()}`;
        const first = await claimed(key);
        const others = await Promise.all(Array.from({ length: 20 }, () => client().store().begin(key, 'fp')));
        assert.deepEqual(
          others.map((o) => o.state),
          Array(20).fill('in-progress'),
        );
        await first.commit({ outcome: 'credited', paymentId: 'p_b', deliveryId: 'dl_b', source: 'webhook' });
        assert.deepEqual(await client().store().begin(key, 'fp'), { state: 'completed', fingerprint: 'fp' });
      },
    },
    {
      name: "the natural mistake (the ORM's own transaction in the handler) fails clearly and credits nothing",
      run: async () => {
        const event = samplePaymentPaidEvent();
        const logged: Array<Record<string, unknown>> = [];
        const logger = { warn: () => {}, error: (fields: unknown) => logged.push(fields as Record<string, unknown>) };
        const handle = handler(async (paid) => client().writeInOwnTransaction(paid.paymentId), logger);
        for (let attempt = 1; attempt <= 3; attempt++) {
          assert.equal((await handle(delivery(event, attempt))).status, 500);
        }
        assert.equal(await client().count(event.paymentId), 0);
        const err = logged[0]?.err as OwnTransactionError | undefined;
        assert.ok(err instanceof OwnTransactionError, String(err));
        assert.equal(err.code, 'OWN_TRANSACTION_IN_HANDLER');
        assert.match(err.message, /Write the credit through ctx\.tx/);
        // Outside a delivery the app's client is untouched.
        await client().writeInOwnTransaction(`outside:${event.paymentId}`);
        assert.equal(await client().count(`outside:${event.paymentId}`), 1);
      },
    },
    {
      name: 'ctx.tx refuses any use once the delivery has ended (and BEGIN/COMMIT through raw SQL)',
      run: async () => {
        const session = await claimed(`guard:${unique()}`);
        const { tx } = session;
        const raw = client().raw;
        if (raw !== undefined) {
          for (const text of ['COMMIT', 'rollback', 'BEGIN']) {
            assert.throws(() => raw(tx, text), /ctx\.tx is already the delivery transaction/);
          }
        }
        await client().write(tx, 'guard');
        await session.rollback(new Error('done'));
        // Prisma's model delegates are objects, not calls the guard sees: Prisma refuses them itself (its
        // transaction client is bound to the transaction, never to a pooled connection).
        await assert.rejects(
          Promise.resolve().then(() => client().write(tx, 'late')),
          /this delivery transaction has ended|Transaction already closed/,
        );
        assert.equal(await client().count('late'), 0);
      },
    },
    {
      name: 'makes what its claim needs again when it is missing (autoMigrate, the default)',
      run: async () => {
        await database.dropClaimSupport(client() as OrmClient<never>);
        const session = await claimed(`old:${unique()}`);
        await session.rollback(new Error('done'));
      },
    },
    {
      name: 'prunes old rows and answers how many; a delivery after the prune claims again',
      run: async () => {
        const store = client().store();
        const key = `prune:${unique()}`;
        const session = await claimed(key);
        await session.commit({ outcome: 'credited', paymentId: 'p_prune', deliveryId: 'dl_1', source: 'webhook' });
        assert.equal(await store.prune({ olderThanMs: 60_000 }), 0);
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.ok((await store.prune({ olderThanMs: 1 })) >= 1);
        const again = await claimed(key);
        await again.rollback(new Error('done'));
        await assert.rejects(store.prune({ olderThanMs: -1 }), /olderThanMs must be a number/);
      },
    },
    {
      name: 'keeps a rejection reason with a question mark and a backslash intact',
      run: async () => {
        const key = `reject:${unique()}`;
        const session = await claimed(key);
        const reason = "why? it's a\\?b";
        await session.commit({
          outcome: 'rejected',
          paymentId: 'p_r',
          deliveryId: undefined,
          source: 'webhook',
          reason,
        });
        assert.deepEqual(await client().store().begin(key, 'fp'), { state: 'completed', fingerprint: 'fp' });
        const { inbox } = client();
        const [row] = await client().rows(
          `select reason, outcome from ${inbox} where ${database.keyColumn} = ${database.param}`,
          [key],
        );
        assert.deepEqual({ ...row }, { reason, outcome: 'rejected' });
      },
    },
  ];
}

/**
 * `ormStoreCases` on a client the suite opens itself: `open` before the cases (the runner's `beforeAll`),
 * `close` after them (`afterAll`).
 *
 * @example
 * ```ts
 * const suite = ormStoreSuite(openKnex, { param: '$1', keyColumn: 'key', dropClaimSupport });
 * beforeAll(suite.open);
 * afterAll(suite.close);
 * for (const c of suite.cases) it(c.name, c.run);
 * ```
 */
export function ormStoreSuite<Tx>(
  open: () => Promise<OrmClient<Tx>>,
  database: OrmDatabase,
): { open: () => Promise<void>; close: () => Promise<void>; cases: ConformanceCase[] } {
  let opened: OrmClient<Tx> | undefined;
  const client = () => {
    if (opened === undefined) throw new Error('ormStoreSuite: the cases ran before open() (call it in beforeAll).');
    return opened;
  };
  return {
    open: async () => {
      opened = await open();
    },
    close: async () => {
      await opened?.close();
    },
    cases: ormStoreCases(client, database),
  };
}

/**
 * A deadlock between the delivery's transaction and another one, which the server settles by rolling the
 * delivery's back (the lighter of the two): the handler catches the error and writes again. That write must
 * be refused (it would run outside any transaction and commit on its own), the delivery answered 500 with
 * nothing credited, and the retry credit once.
 */
function deadlockCase<Tx>(
  client: () => OrmClient<Tx>,
  deadlock: NonNullable<OrmDatabase['deadlock']>,
  handler: (
    onPaymentPaid: (paid: PaymentPaidEvent, tx: Tx) => Promise<void>,
  ) => (request: WebhookRequest) => Promise<{ status: number; body: string }>,
): ConformanceCase {
  return {
    name: 'a deadlock the handler caught rolled its transaction back: what it writes next is refused, 500, nothing credited; the retry credits once',
    run: async () => {
      const { statement } = client();
      assert.ok(statement, `${client().name}: the fixture has no statement`);
      const rows = `${client().inbox}_deadlock`;
      const tables = deadlockTables(rows);
      for (const text of tables.create) await client().rows(text);
      const other = await deadlock.connect();
      try {
        const event = samplePaymentPaidEvent();
        let calls = 0;
        let after: unknown = 'not tried';
        let deadlocked: unknown;
        const handle = handler(async (paid, tx) => {
          calls += 1;
          await client().write(tx, paid.paymentId);
          if (calls > 1) return;
          deadlocked = await deadlockWithDelivery((text) => statement.call(client(), tx, text), other, rows);
          after = await Promise.resolve(client().write(tx, `after:${paid.paymentId}`)).then(
            () => 'written',
            (error: unknown) => error,
          );
        });
        const first = await handle(delivery(event, 1));
        assert.equal(first.status, 500, first.body);
        assert.match(String((deadlocked as { message?: unknown })?.message), /deadlock/i);
        assert.match(String((after as { message?: unknown }).message ?? after), /ended the transaction/);
        assert.equal(await client().count(event.paymentId), 0);
        assert.equal(await client().count(`after:${event.paymentId}`), 0);
        assert.equal((await handle(delivery(event, 2))).status, 200);
        assert.equal(await client().count(event.paymentId), 1);
      } finally {
        await other.end();
        await client().rows(tables.drop);
      }
    },
  };
}

/**
 * `client`'s store, whose in-progress claims carry the server's open transactions and running statements at
 * that moment (`locksNow`: rows, or why they could not be read), when the database gives a query for them.
 */
function withLocksNow<Tx>(client: OrmClient<Tx>, locksNow: string | undefined): TransactionalStore<Tx> {
  const store = client.store();
  if (locksNow === undefined) return store;
  return {
    kind: 'transactional',
    begin: async (key, fingerprint, draft) => {
      const claim = await store.begin(key, fingerprint, draft);
      if (claim.state !== 'in-progress') return claim;
      const rows = await client.rows(locksNow).catch((error: unknown) => String(error));
      return Object.assign(claim, { locksNow: rows });
    },
  };
}
