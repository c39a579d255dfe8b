import type { SqlClient } from '../client.js';

/** Per connection, shared by every store on it: whether a transaction of ours holds it, and who waits. */
const gates = new WeakMap<object, { held: boolean; waiters: (() => void)[] }>();

/**
 * A client on a database of one connection (SQLite), where a transaction holds the only connection there
 * is: one transaction at a time per `connection`, however many stores share it. A delivery never waits for
 * it (`busy`: the store answers in-progress at once, as for a held key on a server database); `migrate`
 * and `prune` wait their turn, so nothing they send joins a delivery's open transaction.
 *
 * @example
 * ```ts
 * const client = oneConnection(betterSqlite3Client(database, 'SqliteStore'), database);
 * ```
 */
export function oneConnection<Tx>(client: SqlClient<Tx>, connection: object): SqlClient<Tx> {
  let gate = gates.get(connection);
  if (gate === undefined) {
    gate = { held: false, waiters: [] };
    gates.set(connection, gate);
  }
  const turn = gate;
  const inTurn = async <T>(work: () => PromiseLike<T>): Promise<T> => {
    // Taken at once when free (in the same tick as a `busy` that said so), else in the order asked.
    while (turn.held) await new Promise<void>((resolve) => turn.waiters.push(resolve));
    turn.held = true;
    try {
      return await work();
    } finally {
      turn.held = false;
      turn.waiters.shift()?.();
    }
  };
  return {
    ...client,
    transaction: (work) => inTurn(() => client.transaction(work)),
    queryOutside: (statement) => inTurn(() => client.queryOutside(statement)),
    busy: () => turn.held,
  };
}
