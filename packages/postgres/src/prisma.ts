import { refuseOwnTransactions } from '@service-pay/core/node';
import type { ClientAdapter, Row } from './clients/client-driver.js';
import { ClientStore } from './clients/client-store.js';

export { OwnTransactionError } from '@service-pay/core/node';

/** The options Prisma's interactive `$transaction` takes that the store sets. */
interface PrismaTransactionOptions {
  maxWait?: number;
  timeout?: number;
}

/**
 * What `PrismaStore` uses of a Prisma client on PostgreSQL (Prisma 7 with `@prisma/adapter-pg`, or 5/6):
 * its interactive `$transaction` and `$queryRawUnsafe`. The generated `PrismaClient` fits.
 *
 * @example
 * ```ts
 * import { PrismaPg } from '@prisma/adapter-pg';
 * const prisma: PrismaLike = new PrismaClient({ adapter: new PrismaPg({ connectionString }) });
 * ```
 */
export interface PrismaLike {
  // biome-ignore lint/suspicious/noExplicitAny: the transaction client's type is the generated client's
  $transaction<R>(fn: (tx: any) => Promise<R>, options?: PrismaTransactionOptions): Promise<R>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
}

/**
 * The transaction client Prisma hands its interactive `$transaction` callback: `ctx.tx`.
 *
 * @example
 * ```ts
 * type Tx = PrismaTransaction<typeof prisma>; // Omit<PrismaClient, '$connect' | '$transaction' | ...>
 * ```
 */
export type PrismaTransaction<Client extends PrismaLike> = Parameters<Parameters<Client['$transaction']>[0]>[0];

/**
 * Options of `PrismaStore`.
 *
 * @example
 * ```ts
 * const options: PrismaStoreOptions<typeof prisma> = { prisma, transactionTimeoutMs: 60_000 };
 * ```
 */
export interface PrismaStoreOptions<Client extends PrismaLike> {
  /** The app's `PrismaClient` on PostgreSQL. */
  prisma: Client;
  /**
   * Prisma's own limit on an interactive transaction (its `timeout`), which would otherwise end a delivery
   * after 5 s. Keep it above the handler's `handlerTimeoutMs` (default 30 s) plus the commit: default
   * 60 000. Past it Prisma rolls back and the delivery answers 500 (`COMMIT_FAILED`): nothing credited.
   */
  transactionTimeoutMs?: number | undefined;
  /** How long a delivery may wait for one of Prisma's connections (its `maxWait`); default 5 000. */
  maxWaitMs?: number | undefined;
  /** `name` or `schema.name`; default `service_pay_inbox` (the same table as `PostgresStore`'s). */
  tableName?: string | undefined;
}

const DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_WAIT_MS = 5_000;

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
export class PrismaStore<Client extends PrismaLike> extends ClientStore<PrismaTransaction<Client>> {
  constructor(options: PrismaStoreOptions<Client>) {
    const prisma = (options as Partial<PrismaStoreOptions<Client>> | null)?.prisma;
    if (
      prisma === null ||
      typeof prisma !== 'object' ||
      typeof prisma.$transaction !== 'function' ||
      typeof prisma.$queryRawUnsafe !== 'function'
    ) {
      throw new TypeError('PrismaStore: options.prisma must be a PrismaClient (new PrismaClient({ adapter })).');
    }
    const timeout = milliseconds(options.transactionTimeoutMs, DEFAULT_TRANSACTION_TIMEOUT_MS, 'transactionTimeoutMs');
    const maxWait = milliseconds(options.maxWaitMs, DEFAULT_MAX_WAIT_MS, 'maxWaitMs');
    const scope = {};
    const own = refuseOwnTransactions(prisma, ['$transaction'], scope, 'PrismaStore');
    const rows = async (client: PrismaLike, text: string) => (await client.$queryRawUnsafe<Row[]>(text)) ?? [];
    const adapter: ClientAdapter<PrismaTransaction<Client>> = {
      store: 'PrismaStore',
      transaction: (work) => own.$transaction(work, { timeout, maxWait }),
      query: (tx, text) => rows(tx as PrismaLike, text),
      queryOutside: (text) => rows(prisma, text),
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
