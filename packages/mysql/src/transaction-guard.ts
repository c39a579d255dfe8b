import type { PoolConnection } from 'mysql2/promise';

/** The error a query through `ctx.tx` gets once its transaction has ended (committed, rolled back). */
export function endedError(): Error {
  return new Error(
    'MySqlStore: this delivery transaction has ended (committed, rolled back or past its deadline); ' +
      'ctx.tx cannot be used after onPaymentPaid returned or timed out.',
  );
}

/** The error a transaction-control statement or call through `ctx.tx` gets. */
export function nestedTransactionError(): Error {
  return new Error(
    'MySqlStore: ctx.tx is already the delivery transaction; do not BEGIN, COMMIT or ROLLBACK through it, nor ' +
      'release it. Use SAVEPOINT for nested work; the store commits. (Statements that commit implicitly, such ' +
      'as CREATE or ALTER TABLE, do not belong in a handler either.)',
  );
}

/**
 * Statements that would end or restart the delivery's transaction from inside the handler: BEGIN, START
 * TRANSACTION, COMMIT, ROLLBACK (not ROLLBACK TO SAVEPOINT), SET autocommit, XA, and the DDL that MySQL
 * commits implicitly before running (CREATE/ALTER/DROP/RENAME/TRUNCATE, LOCK TABLES).
 */
export function endsTransaction(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  const match = /^\s*([A-Za-z]+)(?:\s+([A-Za-z]+))?(?:\s+([A-Za-z]+))?/.exec(text);
  if (match === null) return false;
  const first = (match[1] as string).toLowerCase();
  const second = match[2]?.toLowerCase();
  if (['begin', 'commit', 'xa', 'create', 'alter', 'drop', 'rename', 'truncate'].includes(first)) return true;
  if (first === 'rollback') return second !== 'to' && !(second === 'work' && match[3]?.toLowerCase() === 'to');
  if (first === 'start') return second === 'transaction';
  if (first === 'lock') return second === 'tables' || second === 'table';
  if (first === 'set') return second === 'autocommit';
  return false;
}

const CONTROL_METHODS = new Set(['beginTransaction', 'commit', 'rollback', 'release', 'destroy', 'end', 'changeUser']);

/**
 * The connection as the handler sees it: `query` and `execute` work, but nothing once the delivery has
 * ended (the connection is back in the pool by then, serving someone else), no statement that ends the
 * transaction, and none of the connection's own transaction or release calls.
 */
export function guardConnection(connection: PoolConnection, ended: () => boolean): PoolConnection {
  return new Proxy(connection, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (CONTROL_METHODS.has(property as string)) {
        return () => {
          throw ended() ? endedError() : nestedTransactionError();
        };
      }
      return (...args: unknown[]) => {
        if (ended()) throw endedError();
        if (property === 'query' || property === 'execute') {
          const first = args[0];
          const text = typeof first === 'string' ? first : (first as { sql?: unknown } | null)?.sql;
          if (endsTransaction(text)) throw nestedTransactionError();
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
