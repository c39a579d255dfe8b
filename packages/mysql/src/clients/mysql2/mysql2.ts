import { resultOf, type SqlClient, type Statement } from '@service-pay/sql';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { guardConnection } from './transaction-guard.js';

const ignore = () => {};

/**
 * mysql2's promise pool: a delivery's transaction is one checked-out connection between START TRANSACTION
 * and COMMIT or ROLLBACK, and `ctx.tx` is that `PoolConnection`. A connection whose end is unknown (a
 * failed ROLLBACK, a killed session) is destroyed, never given back to the pool.
 *
 * @example
 * ```ts
 * const client = mysql2Client(pool, 'MySqlStore');
 * ```
 */
export function mysql2Client(pool: Pool, store: string): SqlClient<PoolConnection> {
  const run = async (executor: Pool | PoolConnection, statement: Statement) =>
    resultOf(await executor.query(statement.sql, [...statement.values]));
  return {
    async transaction(work) {
      const connection = await pool.getConnection();
      // A connection that drops while checked out emits 'error'; with no listener Node would throw it. The
      // statement in flight fails by itself, and that is where the delivery learns of it.
      connection.on('error', ignore);
      const release = () => {
        connection.removeListener('error', ignore);
        connection.release();
      };
      try {
        await connection.query('START TRANSACTION');
      } catch (error) {
        connection.destroy();
        throw error;
      }
      try {
        await work(connection);
      } catch (error) {
        await connection.query('ROLLBACK').then(release, () => connection.destroy());
        throw error;
      }
      try {
        await connection.query('COMMIT');
      } catch (error) {
        // Failed or unknown: closing the session rolls back whatever is left and frees the key.
        connection.destroy();
        throw error;
      }
      release();
    },
    query: run,
    queryOutside: (statement) => run(pool, statement),
    // guardConnection checks query and execute's text itself, objects ({ sql }) included.
    rawTextMethods: [],
    // No describePool: mysql2's pool shows its limit (`pool.config.connectionLimit`) but counts its
    // connections and waiting callers only in underscore-prefixed internals (`_allConnections`,
    // `_connectionQueue`), so a full pool is logged as the store not answering in time.
    guard: (tx, ended) => guardConnection(tx, ended, store),
  };
}
