import { endedError, nestedTransactionError } from '@service-pay/sql';
import { endsMySqlTransaction as endsTransaction } from '@service-pay/sql/mysql';
import type { PoolConnection } from 'mysql2/promise';

const CONTROL_METHODS = new Set(['beginTransaction', 'commit', 'rollback', 'release', 'destroy', 'end', 'changeUser']);

/**
 * The connection as the handler sees it: `query` and `execute` work, but nothing once the delivery has
 * ended (the connection is back in the pool by then, serving someone else), no statement that ends the
 * transaction, and none of the connection's own transaction or release calls.
 */
export function guardConnection(
  connection: PoolConnection,
  ended: () => boolean,
  store = 'MySqlStore',
): PoolConnection {
  return new Proxy(connection, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (CONTROL_METHODS.has(property as string)) {
        return () => {
          throw ended() ? endedError(store) : nestedTransactionError(store);
        };
      }
      return (...args: unknown[]) => {
        if (ended()) throw endedError(store);
        if (property === 'query' || property === 'execute') {
          const first = args[0];
          const text = typeof first === 'string' ? first : (first as { sql?: unknown } | null)?.sql;
          if (endsTransaction(text)) throw nestedTransactionError(store);
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
