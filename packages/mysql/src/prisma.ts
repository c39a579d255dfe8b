import type { PrismaLike, PrismaTransaction } from '@service-pay/sql';
import { type MySqlTableOptions, SqlStore, sayUnguarded } from '@service-pay/sql';
import { prismaClient, prismaOption } from '@service-pay/sql/clients/prisma';
import { mysqlDialect } from '@service-pay/sql/mysql';

export { OwnTransactionError } from '@service-pay/core/node';

export type { PrismaLike, PrismaTransaction };

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
 * sender's retry would credit again. Use `ctx.tx`.
 *
 * @example
 * ```ts
 * import { PrismaMariaDb } from '@prisma/adapter-mariadb';
 * import { createWebhookHandler } from '@service-pay/core';
 * import { PrismaStore } from '@service-pay/mysql/prisma';
 * import { PrismaClient } from './generated/prisma/client';
 *
 * const prisma = new PrismaClient({ adapter: new PrismaMariaDb(process.env.DATABASE_URL!) });
 * const store = new PrismaStore({ prisma });
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
    // @prisma/adapter-mariadb makes its pool itself from the settings it is given: nothing public to guard.
    sayUnguarded(
      prisma,
      'PrismaStore',
      "writes through the app's prisma beside ctx.tx (prisma.$transaction is refused)",
      'write through ctx.tx only',
    );
    super({ store: 'PrismaStore', client, dialect: mysqlDialect, options, scope });
  }
}
