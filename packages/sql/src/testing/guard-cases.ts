import {
  createWebhookHandler,
  type PaymentPaidContext,
  type PaymentPaidEvent,
  signWebhook,
  type TransactionalStore,
  type WebhookRequest,
} from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { lateUseCases } from './late-use-cases.js';
import { MYSQL_TALK_AROUND, POSTGRES_TALK_AROUND, talkAroundSetup } from './talk-around.js';

/**
 * One client under the write guard's cases: a store on the app's client, the credit through `ctx.tx`, the
 * same write through the app's own client, and every way the client opens a transaction of its own.
 * Credits are counted in a table without a unique constraint, so a second one would show.
 */
export interface GuardSubject<Tx> {
  /** A store on the app's client (stores are cheap; each case takes one). */
  store(): TransactionalStore<Tx>;
  /** The credit through `ctx.tx`, awaited. */
  write(tx: Tx, marker: string): Promise<unknown>;
  /** The credit through `ctx.tx` as the client returns it, NOT awaited (the mistake). */
  startWrite(tx: Tx, marker: string): unknown;
  /** True when the client sends a query only when it is awaited (Prisma, Drizzle, Knex, postgres.js). */
  lazy: boolean;
  /** The credit through the app's own client, beside `ctx.tx` (the mistake). */
  globalWrite(marker: string): PromiseLike<unknown>;
  /** A read through the app's own client (allowed). */
  globalRead(): PromiseLike<unknown>;
  /** Each way of opening a transaction of the client's own, writing `marker` in it. */
  ownTransactions: Record<string, (marker: string) => PromiseLike<unknown>>;
  /**
   * Forms that open their transaction only after a first await (`pool.connect()`, then BEGIN): started
   * and not awaited, the handler has returned before they reach BEGIN, and they are background work.
   */
  stepwise?: readonly string[];
  /** How many credits `marker` has, read outside any delivery. */
  count(marker: string): Promise<number>;
  /**
   * One connection (PGlite): the delivery's transaction holds it, so a write outside the delivery
   * (`ctx.outsideTransaction`) would wait for the delivery to end; that case does not apply.
   */
  oneConnection?: boolean;
  /**
   * The app's client is the store's own connection (SQLite: one connection, the delivery's transaction
   * open on it): a write sent through it during a delivery is not refused but joins the delivery's
   * transaction, committed or rolled back with it, so it still credits once. The global-write cases check
   * that outcome instead of a refusal; `ctx.outsideTransaction` cannot leave a transaction on the only
   * connection there is, so its case does not apply.
   */
  joinsDelivery?: boolean;
  /**
   * The app's client's raw-text API (`pool.query(text)`, `knex.raw(text)`, `sql.unsafe(text)`, ...), for
   * the spellings a text check alone was talked around by (a function that inserts, `CALL`, `DO`, an
   * executable comment, ...): each is refused during a delivery, 0 credits.
   */
  raw?: {
    readonly dialect: 'postgres' | 'mysql';
    /** The marks table, as the forms name it. */
    readonly table: string;
    send(text: string): PromiseLike<unknown>;
    /**
     * The client's statements cannot be run read-only on the server (only the text check holds): the
     * forms only the server can refuse are its known gap, said in the README, and not run; nor is the
     * case that writes land right after a delivery's reads (no read-only mode to outlive them).
     */
    readonly textOnly?: boolean;
  };
  /**
   * SQLite: the credit through a second connection to the database file (not the one the store was
   * given), which waits for the delivery's write lock and fails with SQLITE_BUSY.
   */
  secondConnectionWrite?(marker: string): PromiseLike<unknown>;
  /** Further talk-around forms through the client's own API (mysql2's `pool.execute`, `conn.prepare`). */
  apiForms?: Record<string, (marker: string) => PromiseLike<unknown>>;
  /**
   * Optional: a store and the app's callback API on a fresh pool of TWO connections, for the callback
   * cases (a callback runs in its caller's context: a callback-style write in a handler is refused, a
   * plain request on a connection opened during a delivery is never judged by it).
   */
  callbackPool?(): Promise<{
    store: TransactionalStore<Tx>;
    write(tx: Tx, marker: string): Promise<unknown>;
    /** The client's callback form: `pool.query(text, (error) => ...)`. */
    callbackQuery(text: string, callback: (error: unknown) => void): void;
    close(): Promise<void>;
  }>;
  /**
   * Optional: a store and the app's client on a pool of ONE connection, for the interleaving case (a
   * delivery and a plain request on the same pool: only the delivery's write is refused).
   */
  poolOfOne?(): Promise<{
    store: TransactionalStore<Tx>;
    write(tx: Tx, marker: string): Promise<unknown>;
    globalWrite(marker: string): PromiseLike<unknown>;
    close(): Promise<void>;
  }>;
}

/** One case: a name and its body, to run with the test runner's `it`. */
export interface GuardCase {
  name: string;
  run: () => Promise<void>;
}

const SECRET = 'whsec_guard_cases_0123456789abcdef';
let attempts = 0;

function delivery(event: PaymentPaidEvent): WebhookRequest {
  attempts += 1;
  const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: `dl_guard_${attempts}` });
  return { method: 'POST', headers, rawBody: body };
}

type Handler<Tx> = (event: PaymentPaidEvent, ctx: PaymentPaidContext & { tx: Tx }) => Promise<void>;

/** A webhook handler on `store` that keeps what it logged. */
function handlerOn<Tx>(store: TransactionalStore<Tx>, onPaymentPaid: Handler<Tx>) {
  const logged: Array<Record<string, unknown>> = [];
  const record = (fields: unknown) => void logged.push(fields as Record<string, unknown>);
  const handle = createWebhookHandler({
    secret: SECRET,
    store,
    logger: { warn: record, error: record },
    onPaymentPaid: onPaymentPaid as never,
  });
  const codeOf = () => (logged.at(-1)?.err as { code?: unknown } | undefined)?.code;
  /** The log line's own code: a refusal is the handler's failure (HANDLER_FAILED), never a commit fault. */
  const loggedAs = () => logged.at(-1)?.code;
  return { handle, logged, codeOf, loggedAs };
}

function expect(condition: boolean, what: string): void {
  if (!condition) throw new Error(`expected ${what}`);
}

/**
 * The write guard's cases for one client: the global-client write (refused with a message naming
 * `ctx.tx`, 500, then the retry through `ctx.tx` credits exactly once), the same caught or not awaited,
 * reads allowed, the un-awaited `ctx.tx` write (waited for, or refused naming `await`: never recorded
 * without it), each own-transaction form (also un-awaited), background work after the delivery (allowed),
 * `ctx.outsideTransaction` (an audit write that survives the failed attempt), a shared timer first started
 * in a delivery (its flushes judged by that delivery while it lasts, as the README says), given `raw` each
 * talk-around spelling (0 credits) and writes landing right after a delivery's reads (nothing of the
 * read-only mode outlives them), and, given `poolOfOne`, a delivery and a plain request interleaved on a
 * pool of one.
 *
 * @example
 * ```ts
 * for (const c of writeGuardCases(subject)) it(c.name, c.run);
 * ```
 */
export function writeGuardCases<Tx>(subject: GuardSubject<Tx>): GuardCase[] {
  const cases: GuardCase[] = [];
  const add = (name: string, run: () => Promise<void>) => cases.push({ name, run });

  if (subject.joinsDelivery === true) {
    add(
      'a write through the app client joins the delivery: rolled back with a failed attempt, credited once',
      async () => {
        const event = samplePaymentPaidEvent();
        let calls = 0;
        const { handle } = handlerOn<Tx>(subject.store(), async (paid) => {
          calls += 1;
          await subject.globalWrite(paid.paymentId);
          if (calls === 1) throw new Error('the first attempt fails after its write');
        });
        expect((await handle(delivery(event))).status === 500, 'the first attempt to fail');
        expect((await subject.count(event.paymentId)) === 0, 'the joined write rolled back with it');
        expect((await handle(delivery(event))).status === 200, 'the retry to credit');
        const third = await handle(delivery(event));
        expect(third.body.includes('duplicate'), 'the third delivery to be a duplicate');
        expect((await subject.count(event.paymentId)) === 1, 'exactly one credit');
      },
    );
  } else {
    add(
      'a write through the app client is refused naming ctx.tx (500), the retry through ctx.tx credits once',
      async () => {
        const event = samplePaymentPaidEvent();
        let calls = 0;
        const { handle, logged, codeOf } = handlerOn<Tx>(subject.store(), async (paid, ctx) => {
          calls += 1;
          if (calls === 1) await subject.globalWrite(paid.paymentId);
          else await subject.write(ctx.tx, paid.paymentId);
        });
        expect((await handle(delivery(event))).status === 500, 'the global write to answer 500');
        expect(codeOf() === 'WRITE_OUTSIDE_TRANSACTION', `WRITE_OUTSIDE_TRANSACTION, got ${String(codeOf())}`);
        expect(
          /ctx\.tx/.test(String((logged.at(-1)?.err as Error | undefined)?.message)),
          'the message to name ctx.tx',
        );
        expect((await subject.count(event.paymentId)) === 0, 'no credit from the refused write');
        expect((await handle(delivery(event))).status === 200, 'the retry to credit');
        const third = await handle(delivery(event));
        expect(third.body.includes('duplicate'), 'the third delivery to be a duplicate');
        expect((await subject.count(event.paymentId)) === 1, 'exactly one credit');
      },
    );

    add('a refused global write the handler caught, or never awaited, still fails the delivery', async () => {
      for (const how of ['caught', 'not awaited'] as const) {
        const event = samplePaymentPaidEvent();
        const { handle, codeOf, loggedAs } = handlerOn<Tx>(subject.store(), async (paid, ctx) => {
          if (how === 'caught') await Promise.resolve(subject.globalWrite(paid.paymentId)).catch(() => {});
          // Started (a lazy client sends a query only once `then` is called) and left to run.
          else void subject.globalWrite(paid.paymentId).then(undefined, () => {});
          await subject.write(ctx.tx, `${paid.paymentId}:tx`);
        });
        expect((await handle(delivery(event))).status === 500, `a ${how} refusal to answer 500`);
        expect(codeOf() === 'WRITE_OUTSIDE_TRANSACTION', `WRITE_OUTSIDE_TRANSACTION (${how})`);
        expect(loggedAs() === 'HANDLER_FAILED', `logged as HANDLER_FAILED (${how}), got ${String(loggedAs())}`);
        expect((await subject.count(event.paymentId)) === 0, `no global credit (${how})`);
        expect((await subject.count(`${event.paymentId}:tx`)) === 0, `the ctx.tx write rolled back (${how})`);
      }
    });
  }

  add('a read through the app client is allowed during a delivery', async () => {
    const event = samplePaymentPaidEvent();
    const { handle } = handlerOn<Tx>(subject.store(), async (paid, ctx) => {
      await subject.globalRead();
      await subject.write(ctx.tx, paid.paymentId);
    });
    expect((await handle(delivery(event))).status === 200, 'a read to be allowed');
    expect((await subject.count(event.paymentId)) === 1, 'one credit');
  });

  add('an un-awaited ctx.tx write is never a silent loss', async () => {
    const event = samplePaymentPaidEvent();
    let calls = 0;
    const { handle, codeOf, loggedAs } = handlerOn<Tx>(subject.store(), async (paid, ctx) => {
      calls += 1;
      if (calls === 1) void subject.startWrite(ctx.tx, paid.paymentId);
      else await subject.write(ctx.tx, paid.paymentId);
    });
    const first = await handle(delivery(event));
    if (subject.lazy) {
      expect(first.status === 500, 'a lazy client to refuse the delivery');
      expect(codeOf() === 'QUERY_NOT_AWAITED', `QUERY_NOT_AWAITED, got ${String(codeOf())}`);
      expect(loggedAs() === 'HANDLER_FAILED', `logged as HANDLER_FAILED, got ${String(loggedAs())}`);
      expect((await subject.count(event.paymentId)) === 0, 'nothing credited');
      expect((await handle(delivery(event))).status === 200, 'the retry to credit');
    } else {
      expect(first.status === 200, 'an eager client to land the write before commit');
    }
    expect((await subject.count(event.paymentId)) === 1, 'exactly one credit');
  });

  for (const [name, open] of Object.entries(subject.ownTransactions)) {
    add(`its own transaction (${name}) is refused, awaited or not, and credits nothing`, async () => {
      for (const awaited of subject.stepwise?.includes(name) ? [true] : [true, false]) {
        const event = samplePaymentPaidEvent();
        const { handle, codeOf } = handlerOn<Tx>(subject.store(), async (paid) => {
          if (awaited) await open(paid.paymentId);
          else void Promise.resolve(open(paid.paymentId)).catch(() => {});
        });
        expect((await handle(delivery(event))).status === 500, `${name} to answer 500 (awaited: ${awaited})`);
        expect(codeOf() === 'OWN_TRANSACTION_IN_HANDLER', `OWN_TRANSACTION_IN_HANDLER, got ${String(codeOf())}`);
        expect((await subject.count(event.paymentId)) === 0, `no credit through ${name}`);
      }
      const outside = `outside:${samplePaymentPaidEvent().paymentId}`;
      await open(outside);
      expect((await subject.count(outside)) === 1, `${name} to work outside a delivery`);
    });
  }

  add('background work started in the handler writes freely once the delivery has ended', async () => {
    const event = samplePaymentPaidEvent();
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let background: Promise<unknown> = Promise.resolve();
    const { handle } = handlerOn<Tx>(subject.store(), async (paid, ctx) => {
      await subject.write(ctx.tx, paid.paymentId);
      background = gate.then(() => subject.globalWrite(`${paid.paymentId}:later`));
    });
    expect((await handle(delivery(event))).status === 200, 'the delivery to credit');
    open();
    await background;
    expect((await subject.count(`${event.paymentId}:later`)) === 1, 'the background write to land');
  });

  if (subject.oneConnection !== true && subject.joinsDelivery !== true)
    add('ctx.outsideTransaction lets a deliberate write through, and it survives the failed attempt', async () => {
      const event = samplePaymentPaidEvent();
      let calls = 0;
      const { handle } = handlerOn<Tx>(subject.store(), async (paid, ctx) => {
        calls += 1;
        await ctx.outsideTransaction(() => subject.globalWrite(`${paid.paymentId}:audit`));
        await subject.write(ctx.tx, paid.paymentId);
        if (calls === 1) throw new Error('the first attempt fails after its writes');
      });
      expect((await handle(delivery(event))).status === 500, 'the first attempt to fail');
      expect((await subject.count(`${event.paymentId}:audit`)) === 1, 'the audit write to survive');
      expect((await subject.count(event.paymentId)) === 0, 'the credit rolled back');
      expect((await handle(delivery(event))).status === 200, 'the retry to credit');
      expect((await subject.count(event.paymentId)) === 1, 'exactly one credit');
    });

  const raw = subject.raw;
  if (raw !== undefined) {
    const forms = raw.dialect === 'postgres' ? POSTGRES_TALK_AROUND : MYSQL_TALK_AROUND;
    let ready: Promise<void> | undefined;
    const setUp = () => {
      ready ??= (async () => {
        for (const statement of talkAroundSetup(raw.dialect, raw.table)) await raw.send(statement);
      })();
      return ready;
    };
    for (const form of forms) {
      if (form.server === true && raw.textOnly === true) continue;
      add(`a credit spelled \`${form.name}\` through the app client is refused, caught or not: 0 credits`, async () => {
        await setUp();
        if (form.multi !== true) {
          const outside = `outside:${samplePaymentPaidEvent().paymentId}`;
          await raw.send(form.text(raw.table, outside));
          expect((await subject.count(outside)) === 1, `\`${form.name}\` to credit outside a delivery`);
        }
        await refusedTwice(subject, (marker) => raw.send(form.text(raw.table, marker)), form.name);
      });
    }
  }
  if (raw !== undefined && raw.textOnly !== true) {
    add('nothing of the read-only mode outlives the reads of a delivery: writes right after it land', async () => {
      const event = samplePaymentPaidEvent();
      const { handle } = handlerOn<Tx>(subject.store(), async (paid, ctx) => {
        // Several at once, so they take several of the pool's connections, which the writes then reuse.
        await Promise.all([subject.globalRead(), subject.globalRead(), subject.globalRead()]);
        await subject.write(ctx.tx, paid.paymentId);
      });
      expect((await handle(delivery(event))).status === 200, 'the delivery with its reads to credit');
      const after = [1, 2, 3, 4].map((n) => `after:${n}:${event.paymentId}`);
      await Promise.all(after.map((marker) => raw.send(`insert into ${raw.table} (marker) values ('${marker}')`)));
      for (const marker of after) expect((await subject.count(marker)) === 1, `the write ${marker} to land`);
      expect((await subject.count(event.paymentId)) === 1, 'exactly one credit');
    });
  }

  if (subject.oneConnection !== true && subject.joinsDelivery !== true) {
    add(
      'a shared timer first started inside a delivery judges the writes it flushes by that delivery while it lasts',
      async () => {
        // What the README says it cannot tell: Node gives a timer the context that created it, so a batcher
        // whose timer a handler started flushes another request's write as that delivery's.
        const event = samplePaymentPaidEvent();
        const queued: Array<{ marker: string; done: (error: unknown) => void }> = [];
        let timer: ReturnType<typeof setInterval> | undefined;
        const flush = () => {
          for (const item of queued.splice(0)) {
            Promise.resolve(subject.globalWrite(item.marker)).then(
              () => item.done(undefined),
              (error: unknown) => item.done(error),
            );
          }
        };
        const start = () => {
          timer ??= setInterval(flush, 1);
        };
        const enqueue = (marker: string) =>
          new Promise<unknown>((resolve) => {
            start();
            queued.push({ marker, done: resolve });
          });
        let entered: () => void = () => {};
        const inside = new Promise<void>((resolve) => (entered = resolve));
        let release: () => void = () => {};
        const gate = new Promise<void>((resolve) => (release = resolve));
        try {
          const { handle } = handlerOn<Tx>(subject.store(), async (paid, ctx) => {
            start(); // the batcher's first use: its timer is made here, in the delivery's context
            entered();
            await gate;
            await subject.write(ctx.tx, paid.paymentId);
          });
          const answered = handle(delivery(event));
          await inside;
          // Another request, outside any delivery, queues its write on the timer the handler started.
          const during = await enqueue(`plain:${event.paymentId}`);
          release();
          const answer = await answered;
          const after = await enqueue(`after:${event.paymentId}`);
          // An ORM may wrap the refusal (Drizzle's DrizzleQueryError keeps it as its cause).
          const codes = (error: unknown): unknown[] =>
            error instanceof Error ? [(error as { code?: unknown }).code, ...codes(error.cause)] : [];
          expect(
            codes(during).includes('WRITE_OUTSIDE_TRANSACTION'),
            `the plain request's write flushed during the delivery to be refused, got ${String(during)}`,
          );
          expect(answer.status === 500, 'the delivery to fail with the refusal recorded on it');
          expect((await subject.count(`plain:${event.paymentId}`)) === 0, 'no write from the refused flush');
          expect(after === undefined, `the write flushed after the delivery ended to land, got ${String(after)}`);
          expect((await subject.count(`after:${event.paymentId}`)) === 1, 'the write after the delivery to land');
        } finally {
          clearInterval(timer);
        }
      },
    );
  }

  for (const [name, write] of Object.entries(subject.apiForms ?? {})) {
    add(`a credit through the app client's ${name} is refused, caught or not: 0 credits`, async () => {
      await refusedTwice(subject, write, name);
    });
  }

  const secondConnection = subject.secondConnectionWrite;
  if (secondConnection !== undefined) {
    add(
      'a credit through a second connection is refused with a message naming ctx.tx, not "database is locked"',
      async () => {
        const event = samplePaymentPaidEvent();
        let calls = 0;
        const { handle, logged, codeOf } = handlerOn<Tx>(subject.store(), async (paid, ctx) => {
          calls += 1;
          if (calls <= 2) await secondConnection(paid.paymentId);
          else await subject.write(ctx.tx, paid.paymentId);
        });
        for (const attempt of [1, 2]) {
          expect((await handle(delivery(event))).status === 500, `attempt ${attempt} to answer 500`);
          if (attempt > 1) continue;
          expect(codeOf() === 'WRITE_OUTSIDE_TRANSACTION', `WRITE_OUTSIDE_TRANSACTION, got ${String(codeOf())}`);
          const message = String((logged.at(-1)?.err as Error | undefined)?.message);
          expect(
            /ctx\.tx/.test(message) && /second connection/.test(message),
            `the message to name the mistake: ${message}`,
          );
        }
        expect((await subject.count(event.paymentId)) === 0, 'no credit through the second connection');
        expect((await handle(delivery(event))).status === 200, 'the retry through ctx.tx to credit');
        expect((await subject.count(event.paymentId)) === 1, 'exactly one credit');
      },
    );
  }

  const callbackPool = subject.callbackPool;
  if (callbackPool !== undefined && raw !== undefined) {
    // The table is read when a case runs: a subject may open its client after the cases are listed.
    const insertText = (marker: string) => `insert into ${raw.table} (marker) values ('${marker}')`;
    const readText = () => `select marker from ${raw.table} limit 1`;
    const query = (pool: Awaited<ReturnType<typeof callbackPool>>, text: string) =>
      new Promise<void>((resolve, reject) => pool.callbackQuery(text, (error) => (error ? reject(error) : resolve())));

    add(
      "a callback-style write inside a read callback is refused (the callback runs in its caller's context)",
      async () => {
        const pool = await callbackPool();
        try {
          // Connections opened outside any delivery: their answers arrive in the context that opened them.
          await Promise.all([query(pool, readText()), query(pool, readText())]);
          const event = samplePaymentPaidEvent();
          const { handle, codeOf } = handlerOn<Tx>(pool.store, async (paid) => {
            await new Promise<void>((resolve, reject) =>
              pool.callbackQuery(readText(), (error) => {
                if (error) return reject(error);
                pool.callbackQuery(insertText(paid.paymentId), (inner) => (inner ? reject(inner) : resolve()));
              }),
            );
          });
          for (const attempt of [1, 2]) {
            expect((await handle(delivery(event))).status === 500, `attempt ${attempt} to answer 500`);
            if (attempt === 1)
              expect(codeOf() === 'WRITE_OUTSIDE_TRANSACTION', `WRITE_OUTSIDE_TRANSACTION, got ${String(codeOf())}`);
          }
          expect((await subject.count(event.paymentId)) === 0, 'no credit from the callback');
        } finally {
          await pool.close();
        }
      },
    );

    add('a plain request on a connection opened during a delivery is not judged by it; both succeed', async () => {
      const pool = await callbackPool();
      try {
        const event = samplePaymentPaidEvent();
        const audit = `audit:${event.paymentId}`;
        let entered: () => void = () => {};
        const inside = new Promise<void>((resolve) => (entered = resolve));
        let release: () => void = () => {};
        const gate = new Promise<void>((resolve) => (release = resolve));
        const { handle } = handlerOn<Tx>(pool.store, async (paid, ctx) => {
          // The store holds one connection; this read opens the second, in the delivery's context.
          await query(pool, readText());
          entered();
          await gate;
          await pool.write(ctx.tx, paid.paymentId);
        });
        const answered = handle(delivery(event));
        await inside;
        // The plain request, outside any delivery, gets the connection the delivery opened.
        await new Promise<void>((resolve, reject) =>
          pool.callbackQuery(readText(), (error) => {
            if (error) return reject(error);
            pool.callbackQuery(insertText(audit), (inner) => (inner ? reject(inner) : resolve()));
          }),
        );
        release();
        expect((await answered).status === 200, 'the innocent delivery to credit');
        expect((await subject.count(audit)) === 1, 'the plain request write to land');
        expect((await subject.count(event.paymentId)) === 1, 'exactly one credit');
      } finally {
        await pool.close();
      }
    });
  }

  const poolOfOne = subject.poolOfOne;
  if (poolOfOne !== undefined) {
    add('on a pool of one, a delivery and a plain request interleave: only the delivery write is refused', async () => {
      const one = await poolOfOne();
      try {
        const event = samplePaymentPaidEvent();
        let entered: () => void = () => {};
        const inside = new Promise<void>((resolve) => {
          entered = resolve;
        });
        let release: () => void = () => {};
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        const { handle, codeOf } = handlerOn<Tx>(one.store, async (paid) => {
          entered();
          await gate;
          await one.globalWrite(paid.paymentId);
        });
        const answered = handle(delivery(event));
        await inside;
        // The plain request queues behind the delivery's connection, issued outside any delivery.
        const plain = Promise.resolve(one.globalWrite(`${event.paymentId}:plain`));
        release();
        expect((await answered).status === 500, 'the delivery write to be refused');
        expect(codeOf() === 'WRITE_OUTSIDE_TRANSACTION', `WRITE_OUTSIDE_TRANSACTION, got ${String(codeOf())}`);
        await plain;
        expect((await subject.count(`${event.paymentId}:plain`)) === 1, 'the plain request write to land');
        expect((await subject.count(event.paymentId)) === 0, 'no credit from the delivery');
        const { handle: retry } = handlerOn<Tx>(one.store, async (paid, ctx) => {
          await one.write(ctx.tx, paid.paymentId);
        });
        expect((await retry(delivery(event))).status === 200, 'the retry through ctx.tx to credit');
        expect((await subject.count(event.paymentId)) === 1, 'exactly one credit');
      } finally {
        await one.close();
      }
    });
  }
  cases.push(...lateUseCases(subject));
  return cases;
}

/**
 * A credit through the app client `write`, twice: attempt 1 awaits it and fails, attempt 2 catches its
 * error and returns. Both are refused (500, the refusal's code), and nothing is credited.
 */
async function refusedTwice<Tx>(
  subject: GuardSubject<Tx>,
  write: (marker: string) => PromiseLike<unknown>,
  name: string,
): Promise<void> {
  const event = samplePaymentPaidEvent();
  let calls = 0;
  const { handle, codeOf } = handlerOn<Tx>(subject.store(), async (paid) => {
    calls += 1;
    if (calls === 1) {
      await write(paid.paymentId);
      throw new Error('the first attempt fails after its write');
    }
    await Promise.resolve(write(paid.paymentId)).then(undefined, () => {});
  });
  const refusals = ['WRITE_OUTSIDE_TRANSACTION', 'OWN_TRANSACTION_IN_HANDLER'];
  for (const attempt of [1, 2]) {
    const answer = await handle(delivery(event));
    expect(answer.status === 500, `attempt ${attempt} of ${name} to answer 500, got ${answer.status}`);
    // The caught refusal's own error is the pipeline's to log; its answer and the count are what hold here.
    if (attempt === 1) {
      expect(refusals.includes(String(codeOf())), `a refusal's code for ${name}, got ${String(codeOf())}`);
    }
  }
  expect((await subject.count(event.paymentId)) === 0, `no credit through ${name}`);
}

/** A TypeORM repository of marks (`{ marker }` rows), as the guard's cases write and read it. */
interface MarkRepository {
  insert(row: { marker: string }): Promise<unknown>;
  find(options: { take: number }): Promise<unknown>;
}

/** What `typeOrmGuardWrites` uses of a TypeORM `DataSource` or `EntityManager`. */
interface TypeOrmMarks<Mark> {
  getRepository(target: Mark): MarkRepository;
}

/** What `typeOrmGuardWrites` uses of a TypeORM `DataSource` to open transactions of its own. */
interface TypeOrmTransactions<Manager> {
  transaction(work: (manager: Manager) => Promise<unknown>): Promise<unknown>;
  readonly manager: { transaction(work: (manager: Manager) => Promise<unknown>): Promise<unknown> };
  createQueryRunner(): {
    readonly manager: Manager;
    startTransaction(): Promise<void>;
    commitTransaction(): Promise<void>;
    release(): Promise<void>;
  };
}

/**
 * A TypeORM subject's writes on any database, marks written through the entity `mark`: through `ctx.tx`
 * not awaited, through the app's `dataSource`, and in each of TypeORM's own transactions (the
 * `DataSource`'s, its manager's, a query runner's).
 *
 * @example
 * ```ts
 * const subject = { store: () => new TypeOrmStore({ dataSource, tableName }), ...typeOrmGuardWrites(dataSource, Mark), ... };
 * ```
 */
export function typeOrmGuardWrites<Mark, Manager extends TypeOrmMarks<Mark>>(
  dataSource: TypeOrmTransactions<Manager> & TypeOrmMarks<Mark>,
  mark: Mark,
): Pick<GuardSubject<Manager>, 'lazy' | 'startWrite' | 'globalWrite' | 'globalRead' | 'ownTransactions'> {
  const write = (manager: Manager, marker: string) => manager.getRepository(mark).insert({ marker });
  return {
    lazy: false,
    startWrite: write,
    globalWrite: (marker) => dataSource.getRepository(mark).insert({ marker }),
    globalRead: () => dataSource.getRepository(mark).find({ take: 1 }),
    ownTransactions: {
      'dataSource.transaction()': (marker) => dataSource.transaction((manager) => write(manager, marker)),
      'dataSource.manager.transaction()': (marker) =>
        dataSource.manager.transaction((manager) => write(manager, marker)),
      'queryRunner.startTransaction()': async (marker) => {
        const runner = dataSource.createQueryRunner();
        try {
          await runner.startTransaction();
          await write(runner.manager, marker);
          await runner.commitTransaction();
        } finally {
          await runner.release();
        }
      },
    },
  };
}

/**
 * A subject's own-transaction forms named now (a case list is made before its client opens) and run on
 * the client's forms, read from `of()` once the client is open.
 *
 * @example
 * ```ts
 * ownTransactions: namedOwnTransactions(['db.transaction()'], () => subject.ownTransactions),
 * ```
 */
export function namedOwnTransactions(
  forms: readonly string[],
  of: () => Record<string, (marker: string) => PromiseLike<unknown>>,
): Record<string, (marker: string) => PromiseLike<unknown>> {
  return Object.fromEntries(
    forms.map((form) => [form, (marker: string) => (of()[form] as (m: string) => PromiseLike<unknown>)(marker)]),
  );
}
