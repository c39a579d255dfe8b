import {
  DB_WRITES_BESIDE_TX,
  type DrizzleDatabase,
  type MySqlTableOptions,
  SqlStore,
  sayUnguarded,
} from '@service-pay/sql';
import { drizzleClient, drizzleOption } from '@service-pay/sql/clients/drizzle';
import { mysqlDialect } from '@service-pay/sql/mysql';
import { is, type SQLWrapper } from 'drizzle-orm';
import { MySqlDatabase } from 'drizzle-orm/mysql-core';
import { corePoolOf, guardMysql2Pool } from './clients/mysql2/mysql2-pool-guard.js';

export { OwnTransactionError } from '@service-pay/core/node';

/**
 * Options of `DrizzleStore` on MySQL and MariaDB.
 *
 * @example
 * ```ts
 * const options: DrizzleStoreOptions<typeof db> = { db: drizzle({ client: pool }) };
 * ```
 */
export interface DrizzleStoreOptions<Db extends DrizzleMySqlDatabase> extends MySqlTableOptions {
  /** The app's Drizzle database on MySQL or MariaDB (`drizzle({ client: pool })` of `drizzle-orm/mysql2`). */
  db: Db;
}

/**
 * What `DrizzleStore` uses of a Drizzle database on MySQL or MariaDB (`drizzle-orm/mysql2`): its
 * interactive `transaction` and `execute`.
 *
 * @example
 * ```ts
 * import { drizzle } from 'drizzle-orm/mysql2';
 * const db: DrizzleMySqlDatabase = drizzle({ client: pool });
 * ```
 */
export interface DrizzleMySqlDatabase extends DrizzleDatabase<SQLWrapper | string> {}

/**
 * The transaction object a Drizzle database hands its `transaction` callback: `ctx.tx`.
 *
 * @example
 * ```ts
 * type Tx = DrizzleTransaction<typeof db>; // MySqlTransaction<MySql2QueryResultHKT, ...>
 * ```
 */
export type DrizzleTransaction<Db extends DrizzleMySqlDatabase> = Parameters<Parameters<Db['transaction']>[0]>[0];

/**
 * The transactional store on Drizzle ORM with MySQL or MariaDB: each delivery runs inside Drizzle's own
 * `db.transaction(...)`, and `ctx.tx` is that transaction, so the shop writes its credit with its Drizzle
 * schema and the credit commits with the dedupe record, or not at all. The key is taken without waiting
 * (409 at once for a concurrent delivery, in any process) as a row lock that ends with the transaction:
 * nothing session-scoped ever goes back to the pool.
 *
 * Inside `onPaymentPaid`, `db.transaction(...)` on the `db` given here throws `OwnTransactionError`: a
 * transaction of the handler's own would commit its credit even when the delivery fails, and the sender's
 * retry would credit again. Use `ctx.tx` (its own `ctx.tx.transaction(...)` is a savepoint, which is fine).
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { DrizzleStore } from '@service-pay/mysql/drizzle';
 * import { eq } from 'drizzle-orm';
 * import { drizzle } from 'drizzle-orm/mysql2';
 *
 * const db = drizzle({ client: pool });
 * const store = new DrizzleStore({ db });
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.update(orders).set({ paid: true }).where(eq(orders.orderNo, event.orderNo));
 * } });
 * ```
 */
export class DrizzleStore<Db extends DrizzleMySqlDatabase> extends SqlStore<DrizzleTransaction<Db>> {
  constructor(options: DrizzleStoreOptions<Db>) {
    const db = drizzleOption<Db>(options, 'DrizzleStore', 'drizzle({ client: pool })', {
      is: (value) => is(value, MySqlDatabase),
      which: 'on MySQL or MariaDB (drizzle-orm/mysql2); for PostgreSQL use @service-pay/postgres/drizzle',
    });
    const { client, scope } = drizzleClient<DrizzleTransaction<Db>>(db, 'DrizzleStore');
    // The app's writes beside ctx.tx are refused on the mysql2 pool under the database (public as db.$client).
    const core = corePoolOf((db as { $client?: unknown }).$client);
    if (core === undefined) {
      sayUnguarded(db, 'DrizzleStore', DB_WRITES_BESIDE_TX, 'or build db on a mysql2 pool');
    } else guardMysql2Pool(core, scope, 'DrizzleStore');
    super({ store: 'DrizzleStore', client, dialect: mysqlDialect, options, scope });
  }
}
