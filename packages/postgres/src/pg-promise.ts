import { type PostgresTableOptions, SqlStore } from '@service-pay/sql';
import { postgresDialect } from '@service-pay/sql/postgres';
import type { Pool } from 'pg';
import type { IDatabase, ITask } from 'pg-promise';
import { guardPgPool } from './clients/node-postgres/pg-pool-guard.js';
import { isPgPromiseDatabase, pgPromiseClient } from './clients/pg-promise.js';
import { describePgPool } from './pool-errors.js';

export { OwnTransactionError } from '@service-pay/core/node';

/**
 * Options of `PgPromiseStore`.
 *
 * @example
 * ```ts
 * import pgPromise from 'pg-promise';
 * const options: PgPromiseStoreOptions = { db: pgPromise()(process.env.DATABASE_URL!) };
 * ```
 */
export interface PgPromiseStoreOptions<Ext = object> extends PostgresTableOptions {
  /** The app's pg-promise database (`pgp(connection)`). Each delivery holds one connection of its pool. */
  db: IDatabase<Ext>;
}

/**
 * The transactional store on pg-promise: each delivery runs inside the app's own `db.tx(...)`, and `ctx.tx`
 * is that transaction (`ctx.tx.none(...)`, `ctx.tx.one(...)`; `ctx.tx.tx(...)` nests as a savepoint), so the
 * credit is written with the client the shop already uses and commits with the dedupe record, or not at
 * all. Same table and guarantees as `PostgresStore`: the key is taken without waiting (409 at once for a
 * concurrent delivery, in any process), a rejection keeps its inbox row, a crash or a lost connection rolls
 * back and frees the key.
 *
 * Inside `onPaymentPaid`, `db.tx()` and `db.txIf()` on the `db` given here are refused with
 * `OwnTransactionError`, and a write through `db` (`db.none(...)`, `db.task(...)`, `db.connect()`) with
 * `WriteOutsideTransactionError`: either would commit its credit even when the delivery fails, and the
 * sender's retry would credit again. A read through `db` runs in a read-only transaction of its own, as on
 * node-postgres' pool. Use `ctx.tx`.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { PgPromiseStore } from '@service-pay/postgres/pg-promise';
 * import pgPromise from 'pg-promise';
 *
 * const db = pgPromise()(process.env.DATABASE_URL!); // the app's db, everywhere
 * const store = new PgPromiseStore({ db });
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.none('update orders set paid = true where order_no = $1', [event.orderNo]);
 * } });
 * ```
 */
export class PgPromiseStore<Ext = object> extends SqlStore<ITask<Ext> & Ext> {
  constructor(options: PgPromiseStoreOptions<Ext>) {
    const db = (options as Partial<PgPromiseStoreOptions<Ext>> | null)?.db;
    if (!isPgPromiseDatabase(db)) {
      throw new TypeError(
        'PgPromiseStore: options.db must be a pg-promise database (pgPromise()(connection)), not a task or transaction.',
      );
    }
    const { client, scope } = pgPromiseClient(db as IDatabase<Ext>, 'PgPromiseStore');
    // pg-promise's pool is node-postgres' own (a copy pg-promise installs): the same guard as PostgresStore's.
    const pool = db.$pool as unknown as Pool;
    guardPgPool(pool, scope, 'PgPromiseStore');
    super({
      store: 'PgPromiseStore',
      client,
      dialect: postgresDialect,
      options,
      scope,
      describePool: () => describePgPool(pool),
    });
  }
}
