import { refuseOwnTransactions } from '@service-pay/core/node';
import { answered, type Row, resultOf, type SqlClient, type Statement, type StatementResult } from '../client.js';
import { sayUnguarded } from '../guard/unguarded.js';
import { milliseconds } from '../prune-age.js';
import { clientOption } from './option.js';

/** The options Prisma's interactive `$transaction` takes that the store sets. */
interface PrismaTransactionOptions {
  maxWait?: number;
  timeout?: number;
}

/**
 * What the store uses of a Prisma client, on any database: its interactive `$transaction` and its raw
 * queries. The generated `PrismaClient` fits.
 *
 * @example
 * ```ts
 * const prisma: PrismaLike = new PrismaClient({ adapter });
 * ```
 */
export interface PrismaLike {
  // biome-ignore lint/suspicious/noExplicitAny: the transaction client's type is the generated client's
  $transaction<R>(fn: (tx: any) => Promise<R>, options?: PrismaTransactionOptions): Promise<R>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
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

/** The limits every Prisma store takes, checked with the store's name. */
export interface PrismaLimits {
  transactionTimeoutMs?: number | undefined;
  maxWaitMs?: number | undefined;
}

const DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_WAIT_MS = 5_000;

/**
 * Prisma, on any database: the delivery in `prisma.$transaction(async (tx) => ...)` with Prisma's own limit
 * raised above the handler's deadline (Prisma ends a transaction after 5 s by default), the store's
 * statements through `$queryRawUnsafe` (`$executeRawUnsafe` for a counted write). `$transaction` is
 * refused inside a delivery of this store (`scope`).
 *
 * @example
 * ```ts
 * const { client, scope } = prismaClient(prisma, options, 'PrismaStore');
 * ```
 */
export function prismaClient<Client extends PrismaLike>(
  prisma: Client,
  limits: PrismaLimits,
  store: string,
): { client: SqlClient<PrismaTransaction<Client>>; scope: object } {
  const timeout = milliseconds(
    limits.transactionTimeoutMs,
    DEFAULT_TRANSACTION_TIMEOUT_MS,
    store,
    'transactionTimeoutMs',
  );
  const maxWait = milliseconds(limits.maxWaitMs, DEFAULT_MAX_WAIT_MS, store, 'maxWaitMs');
  const scope = {};
  const own = refuseOwnTransactions(prisma, ['$transaction'], scope, store);
  const run = (client: PrismaLike, statement: Statement) => {
    try {
      return statement.write === true
        ? answered(client.$executeRawUnsafe(statement.sql, ...statement.values), writeResult)
        : answered(client.$queryRawUnsafe<Row[]>(statement.sql, ...statement.values), queryResult);
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    scope,
    client: {
      transaction: (work) => own.$transaction(work, { timeout, maxWait }),
      query: (tx, statement) => run(tx as PrismaLike, statement),
      queryOutside: (statement) => run(prisma, statement),
      rawTextMethods: ['$queryRawUnsafe', '$executeRawUnsafe'],
    },
  };
}

/**
 * Checks that `prisma` is a Prisma client, naming the store in the error.
 *
 * @example
 * ```ts
 * const prisma = prismaOption(options, 'PrismaStore', 'new PrismaClient({ adapter })');
 * ```
 */
export function prismaOption<Client extends PrismaLike>(options: unknown, store: string, example: string): Client {
  const prisma = clientOption<Client>(options, 'prisma', ['$transaction', '$queryRawUnsafe', '$executeRawUnsafe']);
  if (prisma === undefined) {
    throw new TypeError(`${store}: options.prisma must be a PrismaClient (${example}).`);
  }
  return prisma;
}

/**
 * How a Prisma store sees the pool its driver adapter runs on: which pool the adapter takes, and the
 * client file that guards it.
 */
export interface PrismaPoolGuard<Pool> {
  /** How the app builds the adapter on a pool of its own, for the warning (`a pg Pool (new PrismaPg(pool))`). */
  readonly adapter: string;
  /** The pool as the TypeError names it (`the node-postgres Pool`). */
  readonly pool: string;
  is(value: unknown): value is Pool;
  guard(pool: Pool, scope: object, store: string): void;
}

/**
 * Guards the pool under the app's Prisma client (`options.pool`) for the store's deliveries (`scope`), so
 * that a write or a transaction sent through `prisma` beside `ctx.tx` is refused: Prisma gives no public
 * way to see its statements, the pool does. Without one, says once (`sayUnguarded`) that only
 * `prisma.$transaction` is refused; anything else as the pool is a TypeError.
 *
 * @example
 * ```ts
 * const guarded = guardPrismaPool(prisma, options.pool, scope, { adapter: 'a pg Pool (new PrismaPg(pool))', pool: 'the node-postgres Pool', is: isPgPool, guard: guardPgPool });
 * ```
 */
export function guardPrismaPool<Pool>(
  prisma: object,
  pool: unknown,
  scope: object,
  how: PrismaPoolGuard<Pool>,
): Pool | undefined {
  if (pool === undefined) {
    sayUnguarded(
      prisma,
      'PrismaStore',
      "writes through the app's prisma beside ctx.tx (prisma.$transaction is refused)",
      `build the adapter on ${how.adapter} and pass that pool as options.pool`,
    );
    return undefined;
  }
  if (!how.is(pool)) throw new TypeError(`PrismaStore: options.pool must be ${how.pool} your adapter was built on.`);
  how.guard(pool, scope, 'PrismaStore');
  return pool;
}

/** What `$executeRawUnsafe` answers (the count of rows written), as a statement's result. */
function writeResult(count: unknown): StatementResult {
  return { rows: [], affected: Number(count) };
}

/** What `$queryRawUnsafe` answers (its rows), as a statement's result. */
function queryResult(rows: unknown): StatementResult {
  return resultOf(rows ?? []);
}
