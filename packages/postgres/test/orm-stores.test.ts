import { createWebhookHandler, type PaymentPaidEvent, signWebhook, type WebhookRequest } from '@service-pay/core';
import { OwnTransactionError } from '@service-pay/core/node';
import { samplePaymentPaidEvent, transactionalStoreConformance } from '@service-pay/core/testing';
import { writeGuardCases } from '@service-pay/sql/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORM_CLIENTS, type OrmClient } from './support/orm-clients.js';

/**
 * Every ORM store (Kysely, Drizzle on node-postgres and postgres.js, Knex, TypeORM) on the machine's
 * PostgreSQL: the transactional conformance suite, the guard on `ctx.tx`, and what the user's natural
 * mistake (the ORM's own transaction inside the handler) now produces. Marks are counted in a table without
 * a unique constraint, so a second credit would show.
 */
const SECRET = 'whsec_postgres_orm_store_tests_0123';

function delivery(event: PaymentPaidEvent, attempt = 1): WebhookRequest {
  const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: `dl_orm_${event.paymentId}_${attempt}` });
  return { method: 'POST', headers, rawBody: body };
}

/** Each client's own-transaction forms, as its fixture names them (support/orm-clients.ts). */
const OWN_TRANSACTIONS: Record<string, string[]> = {
  kysely: ['db.transaction()', 'db.startTransaction()', 'pool.connect() + BEGIN'],
  drizzleNodePostgres: ['db.transaction()', 'pool.connect() + BEGIN'],
  drizzlePostgresJs: ['db.transaction()', 'sql.begin()'],
  knex: ['knex.transaction()', 'knex.transactionProvider()'],
  typeOrm: ['dataSource.transaction()', 'dataSource.manager.transaction()', 'queryRunner.startTransaction()'],
  prisma: ['prisma.$transaction(fn)', 'prisma.$transaction([...])'],
};

for (const open of ORM_CLIENTS) {
  // biome-ignore lint/suspicious/noExplicitAny: each client has its own transaction type
  let client: OrmClient<any>;
  const label = open.name.replace(/Client$/, '');

  describe(`ORM store (${label}) on PostgreSQL`, () => {
    beforeAll(async () => {
      client = await open();
    });
    afterAll(async () => {
      await client?.close();
    });

    describe('transactional conformance', () => {
      const cases = transactionalStoreConformance(() => client.store(), {
        write: (tx, marker) => client.write(tx, marker),
        count: (marker) => client.count(marker),
        slowQuery: (tx, ms) => client.slowQuery(tx, ms),
      });
      for (const c of cases) it(c.name, c.run);
    });

    describe('the delivery transaction is the only way to write', () => {
      const cases = writeGuardCases({
        store: () => client.store(),
        write: (tx, marker) => client.write(tx, marker),
        count: (marker) => client.count(marker),
        get lazy() {
          return client.guard.lazy;
        },
        startWrite: (tx, marker) => client.guard.startWrite(tx, marker),
        globalWrite: (marker) => client.guard.globalWrite(marker),
        globalRead: () => client.guard.globalRead(),
        // Named now (the cases are listed before the client opens), run on the client once it is open.
        ownTransactions: Object.fromEntries(
          (OWN_TRANSACTIONS[label] ?? []).map((name) => [
            name,
            (marker: string) => (client.guard.ownTransactions[name] as (m: string) => PromiseLike<unknown>)(marker),
          ]),
        ),
        stepwise: ['pool.connect() + BEGIN'],
        poolOfOne: () => (client.guard.poolOfOne as NonNullable<typeof client.guard.poolOfOne>)(),
      });
      for (const c of cases) it(c.name, c.run);
    });

    it('credits once through ctx.tx with the ORM, a throw after the write rolls it back, the retry credits once', async () => {
      const event = samplePaymentPaidEvent();
      let calls = 0;
      const handle = createWebhookHandler({
        secret: SECRET,
        store: client.store(),
        logger: { warn: () => {}, error: () => {} },
        onPaymentPaid: async (paid, ctx) => {
          calls += 1;
          await client.write(ctx.tx, paid.paymentId);
          if (calls === 1) throw new Error('the first attempt fails after writing its credit');
        },
      });
      expect((await handle(delivery(event, 1))).status).toBe(500);
      expect(await client.count(event.paymentId)).toBe(0);
      expect((await handle(delivery(event, 2))).status).toBe(200);
      const third = await handle(delivery(event, 3));
      expect(third.status).toBe(200);
      expect(third.body).toContain('duplicate');
      expect(await client.count(event.paymentId)).toBe(1);
      expect(calls).toBe(2);
    });

    it("the natural mistake (the ORM's own transaction in the handler) fails clearly and credits nothing", async () => {
      const event = samplePaymentPaidEvent();
      const logged: Array<Record<string, unknown>> = [];
      const handle = createWebhookHandler({
        secret: SECRET,
        store: client.store(),
        logger: { warn: () => {}, error: (fields) => logged.push(fields as Record<string, unknown>) },
        onPaymentPaid: async (paid) => {
          await client.writeInOwnTransaction(paid.paymentId);
        },
      });
      for (let attempt = 1; attempt <= 3; attempt++) {
        expect((await handle(delivery(event, attempt))).status).toBe(500);
      }
      expect(await client.count(event.paymentId)).toBe(0);
      const err = logged[0]?.err as OwnTransactionError | undefined;
      expect(err).toBeInstanceOf(OwnTransactionError);
      expect(err?.code).toBe('OWN_TRANSACTION_IN_HANDLER');
      expect(err?.message).toMatch(/Write the credit through ctx\.tx/);
      // Outside a delivery the app's client is untouched.
      await client.writeInOwnTransaction(`outside:${event.paymentId}`);
      expect(await client.count(`outside:${event.paymentId}`)).toBe(1);
    });

    it('ctx.tx refuses any use once the delivery has ended (and BEGIN/COMMIT through raw SQL)', async () => {
      const store = client.store();
      const claim = await store.begin(`guard:${event()}`, 'fp');
      if (claim.state !== 'claimed') throw new Error(`expected a claim, got ${claim.state}`);
      const { tx } = claim.session;
      if (client.raw) {
        for (const text of ['COMMIT', 'rollback', 'BEGIN', 'start transaction']) {
          expect(() => client.raw?.(tx, text)).toThrow(/ctx\.tx is already the delivery transaction/);
        }
      }
      await client.write(tx, 'guard');
      await claim.session.rollback(new Error('done'));
      // Prisma's model delegates are objects, not calls the guard sees: Prisma refuses them itself (its
      // transaction client is bound to the transaction, never to a pooled connection).
      await expect(Promise.resolve().then(() => client.write(tx, 'late'))).rejects.toThrow(
        /this delivery transaction has ended|Transaction already closed/,
      );
      expect(await client.count('late')).toBe(0);
    });

    it('makes its claim function again when it is missing (autoMigrate, the default)', async () => {
      const store = client.store();
      await client.rows(`drop function ${client.inbox}_claim(text)`);
      const claim = await store.begin(`old:${event()}`, 'fp');
      expect(claim.state).toBe('claimed');
      if (claim.state === 'claimed') await claim.session.rollback(new Error('done'));
    });

    it('prunes old rows and answers how many', async () => {
      const store = client.store();
      const claim = await store.begin(`prune:${event()}`, 'fp');
      if (claim.state !== 'claimed') throw new Error('expected a claim');
      await claim.session.commit({ outcome: 'credited', paymentId: 'p_prune', deliveryId: 'dl_1', source: 'webhook' });
      expect(await store.prune({ olderThanMs: 60_000 })).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await store.prune({ olderThanMs: 1 })).toBeGreaterThanOrEqual(1);
      await expect(store.prune({ olderThanMs: -1 })).rejects.toThrow(/olderThanMs must be a number/);
    });

    it('keeps a rejection reason with a question mark and a backslash intact', async () => {
      const store = client.store();
      const key = `reject:${event()}`;
      const claim = await store.begin(key, 'fp');
      if (claim.state !== 'claimed') throw new Error('expected a claim');
      const reason = "why? it's a\\?b";
      await claim.session.commit({
        outcome: 'rejected',
        paymentId: 'p_r',
        deliveryId: undefined,
        source: 'webhook',
        reason,
      });
      expect(await store.begin(key, 'fp')).toEqual({ state: 'completed', fingerprint: 'fp' });
      const [row] = await client.rows(`select reason, outcome from ${client.inbox} where key = $1`, [key]);
      expect(row).toEqual({ reason, outcome: 'rejected' });
    });
  });
}

let sequence = 0;
const event = () => `${Date.now().toString(36)}_${(sequence++).toString(36)}`;
