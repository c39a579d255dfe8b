import type { PrismaLike, PrismaTransaction } from '@service-pay/sql';
import { type MySqlTableOptions, SqlStore } from '@service-pay/sql';
import { guardPrismaPool, prismaClient, prismaOption } from '@service-pay/sql/clients/prisma';
import { mysqlDialect } from '@service-pay/sql/mysql';
import {
  describeMariaDbPool,
  guardMariaDbPool,
  isMariaDbPool,
  type MariaDbPoolLike,
} from './clients/mariadb/mariadb-pool-guard.js';

export { OwnTransactionError } from '@service-pay/core/node';

export type { MariaDbPoolLike, PrismaLike, PrismaTransaction };

/**
 * Options of `PrismaStore` on MySQL and MariaDB.
 *
 * @example
 * ```ts
 * const options: PrismaStoreOptions<typeof prisma> = { prisma, transactionTimeoutMs: 60_000 };
 * ```
 */
export interface PrismaStoreOptions<Client extends PrismaLike> extends MySqlTableOptions {
  /** The app's `PrismaClient` on MySQL or MariaDB. */
  prisma: Client;
  /**
   * The `mariadb` pool your adapter was built on (`new PrismaMariaDb(pool)`). Given, a write or a
   * transaction the handler sends through the app's `prisma` beside `ctx.tx` during a delivery is refused
   * (`WriteOutsideTransactionError`, `OwnTransactionError`): Prisma gives no public way to see its
   * statements, the pool does. Without it (an adapter built from settings makes its pool itself) only
   * `prisma.$transaction` is refused, and the store says so once at construction.
   */
  pool?: MariaDbPoolLike | undefined;
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
 * The transactional store on Prisma with MySQL or MariaDB: each delivery runs inside Prisma's own
 * interactive `$transaction`, and `ctx.tx` is its transaction client, so the shop writes its credit with
 * its Prisma models and the credit commits with the dedupe record, or not at all. The key is taken without
 * waiting (409 at once for a concurrent delivery, in any process) as a row lock that ends with the
 * transaction: nothing session-scoped ever goes back to Prisma's pool.
 *
 * Inside `onPaymentPaid`, `prisma.$transaction(...)` on the client given here throws `OwnTransactionError`:
 * a transaction of the handler's own would commit its credit even when the delivery fails, and the
 * sender's retry would credit again. Use `ctx.tx`. Given the adapter's pool (`options.pool`), a write
 * through `prisma.order...` instead of `ctx.tx.order...` is refused too (`WriteOutsideTransactionError`).
 *
 * @example
 * ```ts
 * import { PrismaMariaDb } from '@prisma/adapter-mariadb';
 * import { createWebhookHandler } from '@service-pay/core';
 * import { PrismaStore } from '@service-pay/mysql/prisma';
 * import mariadb from 'mariadb';
 * import { PrismaClient } from './generated/prisma/client';
 *
 * const pool = mariadb.createPool(process.env.DATABASE_URL!); // mariadb://user:password@host/db
 * const prisma = new PrismaClient({ adapter: new PrismaMariaDb(pool) });
 * const store = new PrismaStore({ prisma, pool }); // the pool lets it refuse prisma's writes beside ctx.tx
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.order.update({ where: { orderNo: event.orderNo }, data: { paid: true } });
 * } });
 * ```
 */
export class PrismaStore<Client extends PrismaLike> extends SqlStore<PrismaTransaction<Client>> {
  constructor(options: PrismaStoreOptions<Client>) {
    const prisma = prismaOption<Client>(
      options,
      'PrismaStore',
      'new PrismaClient({ adapter: new PrismaMariaDb(url) })',
    );
    const { client, scope } = prismaClient(prisma, options, 'PrismaStore');
    // An adapter built from settings makes its pool itself: nothing public to guard then.
    const pool = guardPrismaPool(prisma, options.pool, scope, {
      adapter: 'a mariadb pool (new PrismaMariaDb(pool))',
      pool: 'the mariadb pool',
      is: isMariaDbPool,
      guard: guardMariaDbPool,
    });
    super({
      store: 'PrismaStore',
      client,
      dialect: mysqlDialect,
      options,
      scope,
      describePool: pool === undefined ? undefined : () => describeMariaDbPool(pool),
    });
  }
}
