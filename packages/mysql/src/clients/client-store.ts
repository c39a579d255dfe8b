import type { TransactionalStore, TransactionClaim } from '@service-pay/core';
import { InboxSql } from '../inbox-sql.js';
import { tableName } from '../table-name.js';
import { type ClientAdapter, MySqlClientDriver } from './client-driver.js';

/**
 * What every ORM store on MySQL does once its client is checked: the inbox table of `MySqlStore` (plus a
 * keys table beside it) and its guarantees, through the client's own transactions. Subclasses only check
 * their options and say how to talk to their client (`ClientAdapter`).
 */
export abstract class MySqlClientStore<Tx> implements TransactionalStore<Tx> {
  readonly kind = 'transactional';
  /** The inbox table's name as given (default `service_pay_inbox`); its keys table is `<name>_keys`. */
  readonly tableName: string;
  readonly #driver: MySqlClientDriver<Tx>;
  readonly #name: string;

  /**
   * @param scope names this store's deliveries for `refuseOwnTransactions` (the subclass wraps its client's
   * transaction methods before calling `super`, so it cannot use `this` yet).
   */
  protected constructor(adapter: ClientAdapter<Tx>, table: string | undefined, scope: object) {
    const name = tableName(table, { withKeysTable: true });
    this.tableName = name.name;
    this.#name = adapter.store;
    this.#driver = new MySqlClientDriver(adapter, new InboxSql(name), scope);
  }

  /**
   * Opens the client's transaction holding `key`, or says why not: another transaction holds it
   * (`in-progress`, without waiting) or it was recorded before (`completed`, with the recorded fingerprint).
   */
  begin(key: string, fingerprint: string): Promise<TransactionClaim<Tx>> {
    return this.#driver.begin(key, fingerprint);
  }

  /** Creates the inbox table and its keys table if missing; idempotent and safe from several processes. */
  migrate(): Promise<void> {
    return this.#driver.migrate();
  }

  /**
   * Deletes inbox rows (and keys) older than `olderThanMs`, in batches; resolves with how many inbox rows. A
   * pruned payment would be credited again if delivered again: keep rows longer than the sender retries
   * and you reconcile.
   */
  async prune(options: { olderThanMs: number }): Promise<number> {
    const olderThanMs = (options as { olderThanMs?: unknown } | null)?.olderThanMs;
    if (typeof olderThanMs !== 'number' || !Number.isFinite(olderThanMs) || olderThanMs < 0) {
      throw new RangeError(
        `${this.#name}.prune: olderThanMs must be a number of milliseconds >= 0, got ${JSON.stringify(olderThanMs)}.`,
      );
    }
    return await this.#driver.prune(olderThanMs);
  }
}
