import {
  DB_WRITES_BESIDE_TX,
  type DrizzleDatabase,
  type PostgresTableOptions,
  SqlStore,
  sayUnguarded,
} from '@service-pay/sql';
import { drizzleClient, drizzleOption } from '@service-pay/sql/clients/drizzle';
import { postgresDialect } from '@service-pay/sql/postgres';
import { is, type SQLWrapper } from 'drizzle-orm';
import { PgDatabase } from 'drizzle-orm/pg-core';
import { guardPgPool } from './clients/node-postgres/pg-pool-guard.js';
import { guardPostgresJs, isPostgresJs } from './clients/postgres-js/postgres-js.js';
import { describePgPool, isPgPool, keepCheckedOutClientsFromCrashing } from './pool-errors.js';

export { OwnTransactionError } from '@service-pay/core/node';

/**
 * What `DrizzleStore` uses of a Drizzle database on PostgreSQL (node-postgres, postgres.js, PGlite, Neon,
 * ...): its interactive `transaction` and `execute`.
 *
 * @example
 * ```ts
 * import { drizzle } from 'drizzle-orm/node-postgres';
 * const db: DrizzlePgDatabase = drizzle(pool);
 * ```
 */
export interface DrizzlePgDatabase extends DrizzleDatabase<SQLWrapper | string> {}

/**
 * The transaction object a Drizzle database hands its `transaction` callback: `ctx.tx`.
 *
 * @example
 * ```ts
 * type Tx = DrizzleTransaction<typeof db>; // PgTransaction<NodePgQueryResultHKT, ...>
 * ```
 */
export type DrizzleTransaction<Db extends DrizzlePgDatabase> = Parameters<Parameters<Db['transaction']>[0]>[0];

/**
 * Options of `DrizzleStore`.
 *
 * @example
 * ```ts
 * const options: DrizzleStoreOptions<typeof db> = { db: drizzle(pool) };
 * ```
 */
export interface DrizzleStoreOptions<Db extends DrizzlePgDatabase> extends PostgresTableOptions {
  /** The app's Drizzle database on PostgreSQL (`drizzle(pool)`, `drizzle(postgresJsSql)`, ...). */
  db: Db;
}

/**
 * The transactional store on Drizzle ORM (PostgreSQL, any of Drizzle's drivers): each delivery runs inside
 * Drizzle's own `db.transaction(...)`, and `ctx.tx` is that transaction, so the shop writes its credit with
 * its Drizzle schema and the credit commits with the dedupe record, or not at all. Same table and
 * guarantees as `PostgresStore`.
 *
 * Inside `onPaymentPaid`, `db.transaction(...)` on the `db` given here throws `OwnTransactionError`: a
 * transaction of the handler's own would commit its credit even when the delivery fails, and the sender's
 * retry would credit again. Use `ctx.tx` (its own `ctx.tx.transaction(...)` is a savepoint, which is fine).
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { DrizzleStore } from '@service-pay/postgres/drizzle';
 * import { eq } from 'drizzle-orm';
 * import { drizzle } from 'drizzle-orm/node-postgres';
 *
 * const db = drizzle(pool);
 * const store = new DrizzleStore({ db });
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.update(orders).set({ paid: true }).where(eq(orders.orderNo, event.orderNo));
 * } });
 * ```
 */
export class DrizzleStore<Db extends DrizzlePgDatabase> extends SqlStore<DrizzleTransaction<Db>> {
  constructor(options: DrizzleStoreOptions<Db>) {
    const db = drizzleOption<Db>(options, 'DrizzleStore', 'drizzle(pool)', {
      is: (value) => is(value, PgDatabase),
      which:
        'on PostgreSQL (drizzle-orm/node-postgres, drizzle-orm/postgres-js, ...); for MySQL and SQLite see the README',
    });
    // On a node-postgres pool, a connection dropping under a delivery (PostgreSQL restarted, a deadline's
    // backend ended) must fail that delivery, not crash the app: see pool-errors.ts.
    const pool = (db as { $client?: unknown }).$client;
    if (isPgPool(pool)) keepCheckedOutClientsFromCrashing(pool);
    const { client, scope } = drizzleClient<DrizzleTransaction<Db>>(db, 'DrizzleStore');
    // The app's writes beside ctx.tx are refused on the client under the database (public as db.$client).
    if (isPgPool(pool)) guardPgPool(pool, scope, 'DrizzleStore');
    else if (isPostgresJs(pool)) guardPostgresJs(pool, scope, 'DrizzleStore');
    else sayUnguarded(db, 'DrizzleStore', DB_WRITES_BESIDE_TX, 'or build db on a node-postgres Pool or postgres.js');
    super({
      store: 'DrizzleStore',
      client,
      dialect: postgresDialect,
      options,
      scope,
      describePool: isPgPool(pool) ? () => describePgPool(pool) : undefined,
    });
  }
}
