import { refuseOwnTransactions } from '@service-pay/core/node';
import { type SQL, sql } from 'drizzle-orm';
import { answered, type SqlClient, type Statement } from '../client.js';
import { clientOption } from './option.js';

/** What the store uses of a Drizzle database, on any dialect: its interactive `transaction` and `execute`. */
export interface DrizzleDatabaseLike {
  // biome-ignore lint/suspicious/noExplicitAny: the transaction's type is the dialect's
  transaction(fn: (tx: any) => Promise<any>, config?: any): Promise<any>;
  // biome-ignore lint/suspicious/noExplicitAny: the query is drizzle-orm's SQL, of whichever copy the app installed
  execute(query: any): PromiseLike<unknown>;
}

/**
 * What `DrizzleStore` uses of a Drizzle database, with the query type of the app's drizzle-orm
 * (`SQLWrapper | string`): its interactive `transaction` and `execute`. Each dialect's package names it for
 * its dialect (`DrizzlePgDatabase`, `DrizzleMySqlDatabase`).
 *
 * @example
 * ```ts
 * export interface DrizzlePgDatabase extends DrizzleDatabase<SQLWrapper | string> {}
 * ```
 */
export interface DrizzleDatabase<Query> {
  // biome-ignore lint/suspicious/noExplicitAny: Drizzle's transaction type is whatever the database says
  transaction<T>(work: (tx: any) => Promise<T>, config?: any): Promise<T>;
  execute(query: Query): PromiseLike<unknown>;
}

/**
 * Checks that `options.db` is a Drizzle database (`example` shows how one is made) and one of the store's
 * dialect (`dialect.is`; `dialect.which` says which, and where the others go), naming the store in the error.
 *
 * @example
 * ```ts
 * const db = drizzleOption<Db>(options, 'DrizzleStore', 'drizzle(pool)', { is: (value) => is(value, PgDatabase), which: 'on PostgreSQL' });
 * ```
 */
export function drizzleOption<Db>(
  options: unknown,
  store: string,
  example: string,
  dialect: { is: (db: object) => boolean; which: string },
): Db {
  const db = clientOption<object>(options, 'db', ['transaction']);
  if (db === undefined) {
    throw new TypeError(`${store}: options.db must be a Drizzle database (${example}).`);
  }
  if (!dialect.is(db)) throw new TypeError(`${store}: options.db must be a Drizzle database ${dialect.which}.`);
  return db as Db;
}

/**
 * Drizzle ORM, on any of its dialects and drivers: the delivery in `db.transaction(...)`, the store's
 * statements through `execute`. `db.transaction()` is refused inside a delivery of this store (`scope`).
 *
 * @example
 * ```ts
 * const { client, scope } = drizzleClient(db, 'DrizzleStore');
 * ```
 */
export function drizzleClient<Tx>(db: DrizzleDatabaseLike, store: string): { client: SqlClient<Tx>; scope: object } {
  const scope = {};
  const own = refuseOwnTransactions(db, ['transaction'], scope, store);
  const run = (executor: DrizzleDatabaseLike, statement: Statement) => {
    try {
      return answered(executor.execute(bound(statement)));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    scope,
    client: {
      transaction: (work) => own.transaction(work),
      query: (tx, statement) => run(tx as DrizzleDatabaseLike, statement),
      queryOutside: (statement) => run(db, statement),
      rawTextMethods: [],
    },
  };
}

/**
 * The statement as Drizzle SQL: its text with each `?` bound to the next value, so Drizzle writes the
 * dialect's own placeholders (a statement with values never quotes a `?` in its text).
 */
function bound(statement: Statement): SQL {
  if (statement.values.length === 0) return sql.raw(statement.sql);
  const parts = statement.sql.split('?');
  const chunks: SQL[] = [sql.raw(parts[0] as string)];
  parts.slice(1).forEach((part, i) => {
    chunks.push(sql`${statement.values[i]}`, sql.raw(part));
  });
  return sql.join(chunks);
}
