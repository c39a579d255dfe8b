import { clientGuard, OwnTransactionError, refusedValue, wrapMethod } from '@service-pay/core/node';
import { statementRefusal } from '@service-pay/sql';
import type { PGliteLike } from '../../pglite-types.js';

/**
 * Refuses, during a delivery of a store given `pglite`, a write or a transaction the handler sends through
 * the app's PGlite instance beside `ctx.tx`: `query`, `exec` and the tagged `sql` judged by their text,
 * `transaction()` refused. PGlite is one connection, which the delivery's transaction holds: such a
 * statement would otherwise wait behind the delivery and run after it, outside it (a write then commits
 * apart from a delivery that failed, and the retry credits again). Wraps those methods once on the
 * instance given; the store opens its own transactions before any delivery runs. Reads are let through
 * (they wait for the delivery to end).
 *
 * @example
 * ```ts
 * guardPGlite(pglite, scope, 'PostgresStore');
 * ```
 */
export function guardPGlite(pglite: PGliteLike, scope: object, store: string): void {
  const guard = clientGuard(pglite, scope, store);
  wrapMethod(pglite, 'transaction', (original, args) => {
    const inside = guard.running();
    if (inside === undefined) return original(...args);
    return refusedValue(inside.delivery.refuse(new OwnTransactionError(inside.store, 'pglite.transaction()')));
  });
  for (const method of ['query', 'exec', 'sql']) {
    wrapMethod(pglite, method, (original, args) => {
      const inside = guard.running();
      if (inside === undefined) return original(...args);
      const first = args[0] as unknown;
      const text = Array.isArray(first) ? first.join('$') : first;
      const error = statementRefusal(inside.store, text, `pglite.${method}`);
      if (error === undefined) return original(...args);
      return refusedValue(inside.delivery.refuse(error));
    });
  }
}
