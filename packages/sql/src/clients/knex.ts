import type { StorePoolState } from '@service-pay/core';
import { clientGuard, refusedValue, refuseOwnTransactions, wrapMethod } from '@service-pay/core/node';
import type { Knex } from 'knex';
import { answered, runThrough, type SqlClient, type Statement } from '../client.js';
import { MARIADB_READ_ONLY_PREFIX } from '../guard/read-only-prefix.js';
import { isReadOnlyRefusal, serverRefusal, statementKind, statementRefusal } from '../guard/statement-kind.js';
import { clientOption } from './option.js';

/**
 * Knex (and MikroORM through its Knex), on any dialect: the delivery in `knex.transaction(...)`, the
 * store's statements through `raw` (Knex binds `?` in its own dialect). `transaction()` and
 * `transactionProvider()` are refused inside a delivery of this store (`scope`), and so is a write or a
 * BEGIN the handler sends through the app's `knex` beside `ctx.tx` (see `guardKnexQueries`).
 *
 * @example
 * ```ts
 * const { client, scope } = knexClient(knex, 'KnexStore');
 * ```
 */
export function knexClient(knex: Knex, store: string): { client: SqlClient<Knex.Transaction>; scope: object } {
  const scope = {};
  const own = refuseOwnTransactions(knex, ['transaction', 'transactionProvider'], scope, store, {
    transaction: "knex.transaction() (MikroORM's em.flush() and em.transactional() without { ctx: ctx.tx } call it)",
  });
  guardKnexQueries(knex, scope, store);
  const run = (executor: Knex | Knex.Transaction, statement: Statement) => {
    try {
      return answered(
        statement.values.length === 0
          ? executor.raw(statement.sql)
          : executor.raw(statement.sql, statement.values as Knex.RawBinding[]),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    scope,
    client: {
      ...runThrough<Knex.Transaction, Knex>(knex, run, (work) => own.transaction(work), ['raw']),
      describePool: () => describeTarnPool((knex.client as { pool?: unknown } | undefined)?.pool),
    },
  };
}

/** What Knex's pool (tarn) shows of itself, publicly: `max` and its counting methods. */
interface TarnPool {
  readonly max: number;
  numUsed(): number;
  numPendingAcquires(): number;
}

/** Knex's pool (tarn) as a pool state; `undefined` before Knex made it, or for anything else. */
function describeTarnPool(pool: unknown): StorePoolState | undefined {
  const tarn = pool as Partial<TarnPool> | null | undefined;
  if (typeof tarn?.numUsed !== 'function' || typeof tarn.numPendingAcquires !== 'function') return undefined;
  if (typeof tarn.max !== 'number') return undefined;
  return { size: tarn.max, inUse: tarn.numUsed(), waiting: tarn.numPendingAcquires() };
}

/**
 * Checks that `knex` is the app's Knex instance on one of `dialects` (Knex's `client.dialect` names),
 * naming the store in the error.
 *
 * @example
 * ```ts
 * const knex = knexOption(options, 'KnexStore', ['postgresql'], "client: 'pg'");
 * ```
 */
export function knexOption(options: unknown, store: string, dialects: readonly string[], example: string): Knex {
  const knex = clientOption<Knex>(options, 'knex', ['transaction', 'raw'], 'function');
  if (knex === undefined) {
    throw new TypeError(`${store}: options.knex must be a Knex instance (knex({ ${example}, ... })).`);
  }
  if ((knex as { isTransaction?: unknown }).isTransaction === true) {
    throw new TypeError(`${store}: options.knex is a transaction; pass the app's Knex instance.`);
  }
  const dialect = (knex.client as { dialect?: unknown } | undefined)?.dialect;
  if (!dialects.includes(dialect as string)) {
    throw new TypeError(
      `${store}: options.knex must use ${example}, not ${JSON.stringify(dialect)}; the README lists each database's store.`,
    );
  }
  return knex;
}

/**
 * Refuses, during a delivery of a store given `knex`, a write or a BEGIN sent through the app's `knex`
 * beside `ctx.tx`, judged by the async context that built and ran it, before it waits for a connection (a
 * refusal never queues behind the delivery's own). Every query of `knex` itself runs through its client's
 * `runner(builder)`, wrapped on that instance (`knex.client`); a transaction's queries run through a client
 * of their own (Knex builds one per transaction from the class, not from this instance), so `ctx.tx` is
 * never judged. Reads pass; a refusal is a rejected promise.
 */
function guardKnexQueries(knex: Knex, scope: object, store: string): void {
  const client = knex.client as object;
  const guard = clientGuard(client, scope, store);
  wrapMethod(client, 'runner', (original, args) => {
    const inside = guard.running();
    if (inside === undefined) return original(...args);
    const error = statementRefusal(inside.store, sqlOf(args[0]), 'knex');
    if (error === undefined) return original(...args);
    return refusedValue(inside.delivery.refuse(error));
  });
  // What the runner let through is plainly a read: it runs where the server refuses writes.
  const dialect = String((knex.client as { dialect?: unknown }).dialect ?? '');
  wrapMethod(client, 'query', (original, args) => {
    const inside = guard.running();
    const [connection, query] = args as [{ query?: unknown }, { sql?: unknown } | string];
    const text = typeof query === 'string' ? query : query?.sql;
    if (inside === undefined || statementKind(text) === 'end') return original(...args);
    const mapped = (failure: unknown) => {
      if (!isReadOnlyRefusal(failure)) throw failure;
      const refusal = serverRefusal(inside.store, text, 'knex');
      void inside.delivery.refuse(refusal);
      throw refusal;
    };
    let answer: Promise<unknown>;
    if (dialect === 'postgresql' && typeof connection?.query === 'function') {
      // node-postgres queues the three in order on the connection Knex acquired for this query.
      const send = (sql: string) => (connection.query as (s: string) => Promise<unknown>).call(connection, sql);
      void send('BEGIN READ ONLY').catch(() => {});
      answer = (original(...args) as Promise<unknown>).then(undefined, mapped);
      void send('ROLLBACK').catch(() => {});
    } else if (dialect === 'mysql' && typeof text === 'string') {
      const readOnly =
        typeof query === 'string'
          ? MARIADB_READ_ONLY_PREFIX + text
          : { ...query, sql: MARIADB_READ_ONLY_PREFIX + text };
      answer = (original(connection, readOnly, ...args.slice(2)) as Promise<unknown>).then(undefined, mapped);
    } else return original(...args);
    inside.delivery.hold(answer);
    return answer;
  });
}

/** The SQL text a Knex builder or raw will run (`toSQL()`), all of its statements joined. */
function sqlOf(builder: unknown): string | undefined {
  const toSql = (builder as { toSQL?: unknown } | null)?.toSQL;
  if (typeof toSql !== 'function') return undefined;
  try {
    const compiled = toSql.call(builder) as unknown;
    const list = (Array.isArray(compiled) ? compiled : [compiled]) as Array<{ sql?: unknown } | null>;
    return list.map((one) => String(one?.sql ?? '')).join(';\n');
  } catch {
    return undefined;
  }
}
