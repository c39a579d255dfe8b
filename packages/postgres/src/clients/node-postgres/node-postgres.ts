import { endedError, nestedTransactionError, resultOf, type SqlClient, type Statement } from '@service-pay/sql';
import { endsPostgresTransaction } from '@service-pay/sql/postgres';
import type { Pool, PoolClient, QueryResult } from 'pg';

const ignore = () => {};

/**
 * node-postgres: a delivery's transaction is one pool client, checked out for it and given back once (closed
 * and dropped instead when its end is unknown), and `ctx.tx` is that `PoolClient`. BEGIN travels with the
 * claim and the claim with it, in one message (the simple protocol runs several statements per message),
 * so a fresh delivery costs the claim, the credit and COMMIT.
 *
 * @example
 * ```ts
 * const client = nodePostgresClient(pool, 'PostgresStore');
 * ```
 */
export function nodePostgresClient(pool: Pool, store: string): SqlClient<PoolClient> {
  /** Checked out, BEGIN not sent yet: it goes with the first statement. */
  const unopened = new WeakSet<PoolClient>();
  const run = async (executor: Pool | PoolClient, statement: Statement) => {
    const values = statement.values.length === 0 ? undefined : [...statement.values];
    let text = statement.sql;
    if (unopened.delete(executor as PoolClient)) {
      if (values === undefined) text = `BEGIN;\n${text}`;
      else await executor.query('BEGIN');
    }
    const answer = (await executor.query(text, values)) as QueryResult | QueryResult[];
    return resultOf(Array.isArray(answer) ? answer[answer.length - 1] : answer);
  };
  return {
    async transaction(work) {
      const client = await pool.connect();
      // A connection that drops while checked out emits 'error'; with no listener Node would throw it. The
      // statement in flight fails by itself, and that is where the delivery learns of it.
      client.on('error', ignore);
      unopened.add(client);
      let broken: unknown;
      /** COMMIT was sent: whatever it answered, the transaction is over. */
      let over = false;
      try {
        await work(client);
        if (unopened.has(client)) return;
        over = true;
        const answer = await client.query('COMMIT').catch((error: unknown) => {
          // Refused by the server (a deferred constraint): the transaction is over, the connection fine.
          if (!isServerError(error)) broken = error;
          throw error;
        });
        // A transaction that had failed (the handler caught a statement's error and returned) answers its
        // COMMIT with ROLLBACK rather than an error.
        if (answer.command !== 'COMMIT') {
          throw new Error(`${store}: COMMIT rolled back a failed transaction; nothing was recorded.`);
        }
      } catch (error) {
        if (!over && !unopened.has(client)) {
          await client.query('ROLLBACK').catch((failed: unknown) => {
            broken = failed;
          });
        }
        throw error;
      } finally {
        unopened.delete(client);
        // Kept on a dropped client: closing it may still emit 'error'. A healthy one gets the pool's listener.
        if (broken === undefined) client.off('error', ignore);
        client.release(broken === undefined ? undefined : broken instanceof Error ? broken : new Error(String(broken)));
      }
    },
    query: run,
    queryOutside: (statement) => run(pool, statement),
    rawTextMethods: ['query'],
    guard: (tx, ended) => guardPoolClient(tx, ended, store),
  };
}

/**
 * The pool client as the handler sees it: every pg method works, but `query` is refused once the delivery
 * has ended (a late handler never writes into a connection back in the pool), and so are BEGIN/COMMIT/
 * ROLLBACK through it and `release` (the store ends the transaction and gives the client back). A refused
 * query answers as node-postgres answers: a rejection, or the callback's error.
 */
function guardPoolClient(client: PoolClient, ended: () => boolean, store: string): PoolClient {
  const query = (...args: unknown[]): unknown => {
    const first = args[0] as { text?: unknown; submit?: unknown } | string | null;
    const text = typeof first === 'string' ? first : first?.text;
    const refused = ended()
      ? endedError(store)
      : endsPostgresTransaction(text)
        ? nestedTransactionError(store)
        : undefined;
    if (refused === undefined) return (client.query as (...a: unknown[]) => unknown)(...args);
    const callback = args[args.length - 1];
    if (typeof callback === 'function') return void queueMicrotask(() => callback(refused));
    if (typeof (first as { submit?: unknown } | null)?.submit === 'function') throw refused;
    return Promise.reject(refused);
  };
  const release = () => {
    throw new Error(`${store}: do not release ctx.tx; the store ends the transaction and gives it back.`);
  };
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'query') return query;
      if (property === 'release') return release;
      return Reflect.get(target, property, receiver);
    },
  });
}

/** An error the server sent (it has a SQLSTATE): the connection itself is still fine. */
function isServerError(error: unknown): boolean {
  return typeof (error as { code?: unknown } | null)?.code === 'string' && 'severity' in (error as object);
}
