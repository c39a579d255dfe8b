import type { PrismaLike, PrismaTransaction } from '@service-pay/sql';
import { type PostgresTableOptions, SqlStore } from '@service-pay/sql';
import { guardPrismaPool, prismaClient, prismaOption } from '@service-pay/sql/clients/prisma';
import { postgresDialect } from '@service-pay/sql/postgres';
import type { Pool } from 'pg';
import { guardPgPool } from './clients/node-postgres/pg-pool-guard.js';
import { describePgPool, isPgPool } from './pool-errors.js';

export { OwnTransactionError } from '@service-pay/core/node';

export type { PrismaLike, PrismaTransaction };

/**
 * Options of `PrismaStore`.
 *
 * @example
 * ```ts
 * const options: PrismaStoreOptions<typeof prisma> = { prisma, transactionTimeoutMs: 60_000 };
 * ```
 */
export interface PrismaStoreOptions<Client extends PrismaLike> extends PostgresTableOptions {
  /** The app's `PrismaClient` on PostgreSQL. */
  prisma: Client;
  /**
   * The node-postgres `Pool` your adapter was built on (`new PrismaPg(pool)`). Given, a write or a
   * transaction the handler sends through the app's `prisma` beside `ctx.tx` during a delivery is refused
   * (`WriteOutsideTransactionError`, `OwnTransactionError`): Prisma gives no public way to see its
   * statements, the pool does. Without it only `prisma.$transaction` is refused, and the store says so once
   * at construction.
   */
  pool?: Pool | undefined;
  /**
   * Prisma's own limit on an interactive transaction (its `timeout`), which would otherwise end a delivery
   * after 5 s. Keep it above the handler's `handlerTimeoutMs` (default 30 s) plus the commit: default
   * 60 000. Past it Prisma rolls back and the delivery answers 500 (`COMMIT_FAILED`): nothing credited.
   */
  transactionTimeoutMs?: number | undefined;
  /** How long a delivery may wait for one of Prisma's connections (its `maxWait`); default 5 000. */
  maxWaitMs?: number | undefined;
}

/**
 * The transactional store on Prisma (PostgreSQL): each delivery runs inside Prisma's own interactive
 * `prisma.$transaction(async (tx) => ...)`, and `ctx.tx` is that transaction client, so the shop writes its
 * credit with its Prisma models (`ctx.tx.order.update(...)`) and the credit commits with the dedupe record,
 * or not at all. Same table and guarantees as `PostgresStore`.
 *
 * Inside `onPaymentPaid`, `prisma.$transaction(...)` on the client given here throws `OwnTransactionError`:
 * a transaction of the handler's own would commit its credit even when the delivery fails, and the
 * sender's retry would credit again. Use `ctx.tx`. Writes through `prisma.order...` instead of
 * `ctx.tx.order...` are outside the delivery too: always `ctx.tx`.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { PrismaStore } from '@service-pay/postgres/prisma';
 *
 * const store = new PrismaStore({ prisma }); // the app's PrismaClient (adapter-pg)
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.order.update({ where: { orderNo: event.orderNo }, data: { paid: true } });
 * } });
 * ```
 */
export class PrismaStore<Client extends PrismaLike> extends SqlStore<PrismaTransaction<Client>> {
  constructor(options: PrismaStoreOptions<Client>) {
    const prisma = prismaOption<Client>(options, 'PrismaStore', 'new PrismaClient({ adapter })');
    const { client, scope } = prismaClient(prisma, options, 'PrismaStore');
    guardPrismaPool(prisma, options.pool, scope, {
      adapter: 'a pg Pool (new PrismaPg(pool))',
      pool: 'the node-postgres Pool',
      is: isPgPool,
      guard: guardPgPool,
    });
    const pool = options.pool;
    super({
      store: 'PrismaStore',
      client,
      dialect: postgresDialect,
      options,
      scope,
      // With the adapter's pool given, a delivery that waited for a connection of a full pool says so,
      // with the pool's counts, instead of a plain timeout.
      describePool: isPgPool(pool) ? () => describePgPool(pool) : undefined,
    });
  }
}
