import {
  createWebhookHandler,
  fingerprintOf,
  type PaymentPaidEvent,
  PaymentRejectedError,
  signWebhook,
  type TransactionalStore,
  type WebhookRequest,
  type WebhookRequestHandler,
  type WebhookResponse,
} from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientFixture, POSTGRES_CLIENTS } from './clients/index.js';
import { nodePostgres } from './clients/node-postgres.js';
import { uniqueName } from './support/database.js';

const SECRET = 'whsec_postgres_store_tests_0123456789';

/** One attempt of the sender: signed now, with a fresh delivery id, as the service retries. */
function delivery(event: PaymentPaidEvent): WebhookRequest {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  return { method: 'POST', headers, rawBody: body };
}

/** A promise and the function that settles it, to hold a handler where a test wants it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Error lines logged by the handlers, as `code: message`. */
const errorLines: string[] = [];
const quiet = {
  warn: () => {},
  error: (fields: unknown, message?: string) => errorLines.push(`${(fields as { code?: unknown }).code}: ${message}`),
};

/**
 * A fixture of the registry as these tests use it: one store for the file, the credit into its marks table
 * (the mark is the payment id), a statement through `ctx.tx`, and plain SQL outside any delivery.
 */
interface Subject {
  store: TransactionalStore<unknown>;
  inbox: string;
  /** The marks table: credits, one mark per credit, no unique constraint. */
  credits: string;
  credit(tx: unknown, paymentId: string): Promise<void>;
  /** Any statement through `ctx.tx`, as text. */
  exec(tx: unknown, text: string): PromiseLike<unknown>;
  failingQuery(tx: unknown): PromiseLike<unknown>;
  count(paymentId: string): Promise<number>;
  rows<R>(text: string, params?: unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

async function subjectOf(open: () => Promise<ClientFixture<never>>): Promise<Subject> {
  const client = await open();
  const { failingQuery } = client;
  if (failingQuery === undefined) throw new Error(`${client.name}: the fixture has no failingQuery`);
  return {
    store: client.store() as unknown as TransactionalStore<unknown>,
    inbox: client.inbox,
    credits: client.marks,
    credit: (tx, paymentId) => client.write(tx as never, paymentId),
    exec: (tx, text) => client.exec(tx as never, text),
    failingQuery: (tx) => failingQuery(tx as never),
    count: (paymentId) => client.count(paymentId),
    rows: async <R>(text: string, params?: unknown[]) => (await client.rows(text, params)) as R[],
    close: () => client.close(),
  };
}

for (const entry of POSTGRES_CLIENTS) {
  describe(`the webhook handler with ${entry.name}`, () => {
    let f: Subject;
    beforeAll(async () => {
      f = await subjectOf(entry.open);
      // Constraint trigger that fails the COMMIT (not the statement) for payments whose order number says so.
      await f.rows(`create table commit_bombs_${f.credits} (payment_id text not null)`);
      await f.rows(`create or replace function commit_bomb_${f.credits}() returns trigger language plpgsql as $$
        begin raise exception 'commit bomb for %', new.payment_id; end $$`);
      await f.rows(`create constraint trigger bomb after insert on commit_bombs_${f.credits}
        deferrable initially deferred for each row execute function commit_bomb_${f.credits}()`);
    });
    afterAll(async () => {
      await f.rows(`drop table if exists commit_bombs_${f.credits}`);
      await f.rows(`drop function if exists commit_bomb_${f.credits}()`);
      await f.close();
    });

    const credits = (paymentId: string) => f.count(paymentId);
    const inboxRow = async (paymentId: string) =>
      (
        await f.rows<Record<string, unknown>>(`select * from ${f.inbox} where key = $1`, [`payment.paid:${paymentId}`])
      )[0];

    function handler(options: {
      onPaymentPaid: (event: PaymentPaidEvent, tx: unknown, signal: AbortSignal) => Promise<void>;
      handlerTimeoutMs?: number;
    }): WebhookRequestHandler {
      return createWebhookHandler({
        secret: SECRET,
        store: f.store,
        logger: quiet,
        ...(options.handlerTimeoutMs === undefined ? {} : { handlerTimeoutMs: options.handlerTimeoutMs }),
        onPaymentPaid: (event, ctx) => options.onPaymentPaid(event, ctx.tx, ctx.signal),
      });
    }
    const crediting = () => handler({ onPaymentPaid: (event, tx) => f.credit(tx, event.paymentId) });

    /** A first attempt answered 500 with `code`, and nothing of it committed: no credit, no inbox row. */
    async function expectNothingCommitted(answer: WebhookResponse, code: string, paymentId: string) {
      expect(answer.status).toBe(500);
      expect(JSON.parse(answer.body).error).toBe(code);
      expect(await credits(paymentId)).toBe(0);
      expect(await inboxRow(paymentId)).toBeUndefined();
    }

    /** The sender's retry is answered 200 and leaves exactly one credit. */
    async function expectRetryCreditsOnce(handle: WebhookRequestHandler, event: PaymentPaidEvent) {
      expect((await handle(delivery(event))).status).toBe(200);
      expect(await credits(event.paymentId)).toBe(1);
    }

    it('a first delivery commits the credit and the inbox row together; a duplicate is answered 200 without running', async () => {
      const handle = crediting();
      const event = samplePaymentPaidEvent();
      const first = delivery(event);
      expect(await handle(first)).toMatchObject({ status: 200, body: '{"received":true}' });
      expect(await credits(event.paymentId)).toBe(1);
      const row = await inboxRow(event.paymentId);
      expect(row).toMatchObject({
        payment_id: event.paymentId,
        delivery_id: first.headers['x-service-delivery' as never],
        source: 'webhook',
        outcome: 'credited',
        reason: null,
      });
      expect(row?.fingerprint).toBe(fingerprintOf(event));
      expect(row?.created_at).toBeInstanceOf(Date);
      expect(await handle(delivery(event))).toMatchObject({ status: 200, body: '{"received":true,"duplicate":true}' });
      expect(await credits(event.paymentId)).toBe(1);
    });

    it('a delivery while another holds the payment is answered 409 at once, and the sender’s retry is a duplicate', async () => {
      const held = gate();
      const entered = gate();
      const handle = handler({
        onPaymentPaid: async (event, tx) => {
          await f.credit(tx, event.paymentId);
          entered.open();
          await held.promise;
        },
      });
      const event = samplePaymentPaidEvent();
      const first = handle(delivery(event));
      await entered.promise;
      let firstDone = false;
      void first.then(() => {
        firstDone = true;
      });
      const second = await handle(delivery(event));
      // Answered while the first handler is still held: begin did not wait for the other transaction.
      expect(firstDone).toBe(false);
      expect(second.status).toBe(409);
      expect(JSON.parse(second.body).error).toBe('DELIVERY_IN_PROGRESS');
      expect(second.headers['retry-after']).toBe('1');
      held.open();
      expect((await first).status).toBe(200);
      expect(await handle(delivery(event))).toMatchObject({ status: 200, body: '{"received":true,"duplicate":true}' });
      expect(await credits(event.paymentId)).toBe(1);
    });

    it('PaymentRejectedError rolls back the handler’s writes and commits the rejection row', async () => {
      const handle = handler({
        onPaymentPaid: async (event, tx) => {
          await f.credit(tx, event.paymentId);
          throw new PaymentRejectedError('underpaid');
        },
      });
      const event = samplePaymentPaidEvent();
      expect(await handle(delivery(event))).toMatchObject({ status: 200, body: '{"received":true,"rejected":true}' });
      expect(await credits(event.paymentId)).toBe(0);
      expect(await inboxRow(event.paymentId)).toMatchObject({ outcome: 'rejected', reason: 'underpaid' });
      expect(await handle(delivery(event))).toMatchObject({ status: 200, body: '{"received":true,"duplicate":true}' });
    });

    it('a handler that throws rolls back: 500, nothing credited, no row; the retry credits once', async () => {
      let calls = 0;
      const handle = handler({
        onPaymentPaid: async (event, tx) => {
          await f.credit(tx, event.paymentId);
          if (++calls === 1) throw new Error('transient');
        },
      });
      const event = samplePaymentPaidEvent();
      await expectNothingCommitted(await handle(delivery(event)), 'HANDLER_FAILED', event.paymentId);
      await expectRetryCreditsOnce(handle, event);
    });

    it('a handler past its deadline is rolled back at once; its late writes never commit; the retry credits once', async () => {
      const late = gate();
      let lateWrite: unknown = 'not tried';
      let attempt = 0;
      const handle = handler({
        handlerTimeoutMs: 150,
        onPaymentPaid: async (event, tx) => {
          await f.credit(tx, event.paymentId);
          if (++attempt > 1) return;
          // Ignores ctx.signal, as a stuck API call would, then writes again through the old transaction.
          await new Promise((resolve) => setTimeout(resolve, 400));
          lateWrite = await f.credit(tx, event.paymentId).then(
            () => 'written',
            (error: Error) => error.message,
          );
          late.open();
        },
      });
      const event = samplePaymentPaidEvent();
      errorLines.length = 0;
      const answer = await handle(delivery(event));
      expect(answer.status).toBe(500);
      expect(JSON.parse(answer.body).error).toBe('HANDLER_TIMEOUT');
      // Said as what happened: rolled back, not a lease given up (a transactional store has none).
      expect(errorLines).toEqual([
        'HANDLER_TIMEOUT: onPaymentPaid was still running at handlerTimeoutMs: ctx.signal aborted and its transaction rolled back (nothing credited; the sender retries).',
      ]);
      // The key is free now, not when the stuck handler finally returns.
      expect(await credits(event.paymentId)).toBe(0);
      await late.promise;
      // Prisma's transaction client refuses it itself (it is bound to the transaction, not a connection).
      expect(lateWrite).toMatch(/transaction has ended|Transaction already closed/);
      expect(await credits(event.paymentId)).toBe(0);
      await expectRetryCreditsOnce(handle, event);
    });

    it('a COMMIT that fails is answered 500 COMMIT_FAILED and credits nothing; the retry credits once', async () => {
      let attempt = 0;
      const handle = handler({
        onPaymentPaid: async (event, tx) => {
          await f.credit(tx, event.paymentId);
          // The deferred trigger raises only at COMMIT, after the handler returned.
          if (++attempt === 1) await f.credit(tx, event.paymentId).then(() => bomb(tx, event.paymentId));
        },
      });
      const bomb = async (tx: unknown, paymentId: string) => {
        await f.exec(tx, `insert into commit_bombs_${f.credits} (payment_id) values ('${paymentId}')`);
      };
      const event = samplePaymentPaidEvent();
      await expectNothingCommitted(await handle(delivery(event)), 'COMMIT_FAILED', event.paymentId);
      await expectRetryCreditsOnce(handle, event);
    });

    it('a statement of the handler that swallowed its error cannot commit: 500, nothing credited', async () => {
      const handle = handler({
        onPaymentPaid: async (event, tx) => {
          await f.credit(tx, event.paymentId);
          await Promise.resolve(f.failingQuery(tx)).catch(() => {}); // the transaction is now aborted
        },
      });
      const event = samplePaymentPaidEvent();
      await expectNothingCommitted(await handle(delivery(event)), 'COMMIT_FAILED', event.paymentId);
    });

    it('the same payment id with a different amount after it was recorded is answered 422 PAYLOAD_CONFLICT', async () => {
      const handle = crediting();
      const event = samplePaymentPaidEvent();
      expect((await handle(delivery(event))).status).toBe(200);
      const changed = await handle(delivery({ ...event, amount: '999.00' }));
      expect(changed.status).toBe(422);
      expect(JSON.parse(changed.body).error).toBe('PAYLOAD_CONFLICT');
      expect(await credits(event.paymentId)).toBe(1);
    });
  });
}

describe('the webhook handler with PostgresStore (PostgreSQL): a deadline inside a statement', () => {
  let f: Subject;
  beforeAll(async () => {
    f = await subjectOf(nodePostgres.open);
  });
  afterAll(() => f.close());

  it('a handler stuck in a statement past its deadline: the connection is closed, the backend ended, the key free', async () => {
    let attempt = 0;
    let stuck: Promise<unknown> = Promise.resolve();
    const stuckStatement = `select pg_sleep(30) as ${uniqueName('stuck')}`;
    const handle = createWebhookHandler({
      secret: SECRET,
      store: f.store,
      logger: quiet,
      handlerTimeoutMs: 150,
      onPaymentPaid: async (event, ctx) => {
        await f.credit(ctx.tx, event.paymentId);
        if (++attempt === 1) {
          stuck = Promise.resolve(f.exec(ctx.tx, stuckStatement)).catch((error: Error) => error);
          await stuck;
        }
      },
    });
    const event = samplePaymentPaidEvent();
    const answer = await handle(delivery(event));
    expect(JSON.parse(answer.body).error).toBe('HANDLER_TIMEOUT');
    // The 30 s statement was ended with its connection, not left running with the key. Found by its own
    // text: other files' statements run on the same server at the same time, pg_sleep among them.
    expect(await stuck).toBeInstanceOf(Error);
    const sleeping = await f.rows<{ n: number }>(
      'select count(*)::int as n from pg_stat_activity where query = $1 and datname = current_database()',
      [stuckStatement],
    );
    expect(sleeping[0]?.n).toBe(0);
    expect((await handle(delivery(event))).status).toBe(200);
    expect(await f.count(event.paymentId)).toBe(1);
  });
});

describe('the webhook handler with PostgresStore (PostgreSQL): a begin that arrives after the pipeline gave up', () => {
  it('is answered 503, and the transaction that opens later is rolled back: no pool client leaks', async () => {
    const { openPool } = await import('./support/database.js');
    const { PostgresStore } = await import('../src/index.js');
    const pool = await openPool({ max: 1 });
    const inbox = uniqueName('late_inbox');
    try {
      const store = new PostgresStore({ pool, tableName: inbox });
      await store.migrate();
      // The pool's only client is held by another delivery's transaction, so the next begin waits for it.
      const holder = await store.begin('payment.paid:p_holder', 'fp');
      if (holder.state !== 'claimed') throw new Error('expected claimed');
      const handle = createWebhookHandler({
        secret: SECRET,
        store,
        logger: quiet,
        storeTimeoutMs: 100,
        onPaymentPaid: () => {
          throw new Error('must not run: the pipeline gave up before the transaction opened');
        },
      });
      const answer = await handle(delivery(samplePaymentPaidEvent()));
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body).error).toBe('STORE_UNAVAILABLE');
      expect(pool.waitingCount).toBe(1);
      await holder.session.rollback(new Error('done'));
      // The late begin now gets the client, opens its transaction, and the pipeline rolls it back.
      await expect.poll(() => pool.waitingCount === 0 && pool.idleCount === pool.totalCount).toBe(true);
      const again = await store.begin('payment.paid:p_holder', 'fp');
      expect(again.state).toBe('claimed');
      if (again.state === 'claimed') await again.session.rollback(new Error('done'));
    } finally {
      await pool.query(`drop table if exists ${inbox}`);
      await pool.end();
    }
  });
});
