import { refuseOwnTransactions } from '@service-pay/core/node';
import type { ClientAdapter, Row } from './clients/client-driver.js';
import { MySqlClientStore } from './clients/client-store.js';

export { OwnTransactionError } from '@service-pay/core/node';

/** The options Prisma's interactive `$transaction` takes that the store sets. */
interface PrismaTransactionOptions {
  maxWait?: number;
  timeout?: number;
}

/**
 * What `PrismaStore` uses of a `PrismaClient` on MySQL or MariaDB (Prisma 7 on `@prisma/adapter-mariadb`):
 * its interactive `$transaction` and raw queries.
 *
 * @example
 * ```ts
 * const prisma: PrismaLike = new PrismaClient({ adapter: new PrismaMariaDb(process.env.DATABASE_URL!) });
 * ```
 */
export interface PrismaLike {
  // biome-ignore lint/suspicious/noExplicitAny: the transaction client's type is the generated client's
  $transaction<R>(fn: (tx: any) => Promise<R>, options?: PrismaTransactionOptions): Promise<R>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

/**
 * The interactive transaction client Prisma hands its `$transaction` callback: `ctx.tx`.
 *
 * @example
 * ```ts
 * type Tx = PrismaTransaction<typeof prisma>; // Omit<PrismaClient, '$transaction' | ...>
 * ```
 */
export type PrismaTransaction<Client extends PrismaLike> = Parameters<Parameters<Client['$transaction']>[0]>[0];

/**
 * Options of `PrismaStore` on MySQL and MariaDB.
 *
 * @example
 * ```ts
 * const options: PrismaStoreOptions<typeof prisma> = { prisma, transactionTimeoutMs: 60_000 };
 * ```
 */
export interface PrismaStoreOptions<Client extends PrismaLike> {
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
  /** `name` or `database.name`, at most 59 characters; default `service_pay_inbox` (and `<name>_keys`). */
  tableName?: string | undefined;
}

const DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_WAIT_MS = 5_000;

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
export class PrismaStore<Client extends PrismaLike> extends MySqlClientStore<PrismaTransaction<Client>> {
  constructor(options: PrismaStoreOptions<Client>) {
    const prisma = (options as Partial<PrismaStoreOptions<Client>> | null)?.prisma;
    if (
      prisma === null ||
      typeof prisma !== 'object' ||
      typeof prisma.$transaction !== 'function' ||
      typeof prisma.$queryRawUnsafe !== 'function' ||
      typeof prisma.$executeRawUnsafe !== 'function'
    ) {
      throw new TypeError('PrismaStore: options.prisma must be a PrismaClient (new PrismaClient({ adapter })).');
    }
    const timeout = milliseconds(options.transactionTimeoutMs, DEFAULT_TRANSACTION_TIMEOUT_MS, 'transactionTimeoutMs');
    const maxWait = milliseconds(options.maxWaitMs, DEFAULT_MAX_WAIT_MS, 'maxWaitMs');
    const scope = {};
    const own = refuseOwnTransactions(prisma, ['$transaction'], scope, 'PrismaStore');
    const rows = async (client: PrismaLike, sql: string, values: unknown[]) =>
      (await client.$queryRawUnsafe<Row[]>(sql, ...values)) ?? [];
    const adapter: ClientAdapter<PrismaTransaction<Client>> = {
      store: 'PrismaStore',
      transaction: (work) => own.$transaction(work, { timeout, maxWait }),
      query: (tx, statement) => rows(tx as PrismaLike, statement.sql, statement.values),
      queryOutside: (statement) => rows(prisma, statement.sql, statement.values),
      affectedOutside: async (statement) => Number(await prisma.$executeRawUnsafe(statement.sql, ...statement.values)),
      rawTextMethods: ['$queryRawUnsafe', '$executeRawUnsafe'],
    };
    super(adapter, options.tableName, scope);
  }
}

function milliseconds(value: unknown, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new RangeError(`PrismaStore: ${name} must be a number of milliseconds > 0, got ${JSON.stringify(value)}.`);
  }
  return value;
}
