import { endedError, nestedTransactionError } from '@service-pay/sql';
import { endsMySqlTransaction as endsTransaction } from '@service-pay/sql/mysql';
import type { PoolConnection } from 'mysql2/promise';

const CONTROL_METHODS = new Set(['beginTransaction', 'commit', 'rollback', 'release', 'destroy', 'end', 'changeUser']);

/**
 * The connection as the handler sees it: `query` and `execute` work, but nothing once the delivery has
 * ended (the connection is back in the pool by then, serving someone else), no statement that ends the
 * transaction, and none of the connection's own transaction or release calls. The same holds for the
 * callback connection under it (`ctx.tx.connection`) and the promise one it makes (`.promise()`): the
 * same session, so the same rules.
 */
export function guardConnection(
  connection: PoolConnection,
  ended: () => boolean,
  store = 'MySqlStore',
): PoolConnection {
  return guardSession(connection, ended, store);
}

/** `guardConnection` for either of mysql2's two faces of one session (promise or callback). */
function guardSession<T extends object>(session: T, ended: () => boolean, store: string): T {
  let inner: object | undefined;
  return new Proxy(session, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property === 'connection' && typeof value === 'object' && value !== null) {
        inner ??= guardSession(value, ended, store);
        return inner;
      }
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
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        // The callback connection's promise face: a new object on the same session.
        if (property === 'promise' && typeof result === 'object' && result !== null) {
          return guardSession(result, ended, store);
        }
        return result;
      };
    },
  });
}
