import type { TransactionalStore, TransactionClaim } from '@service-pay/core';
import { pruneAge } from '../driver.js';
import { InboxSql } from '../inbox-sql.js';
import { tableName } from '../table-name.js';
import { type ClientAdapter, ClientDriver } from './client-driver.js';

/**
 * What every ORM store does once its client is checked: the same inbox table and guarantees as
 * `PostgresStore`, through the client's own transactions. Subclasses only check their options and say how
 * to talk to their client (`ClientAdapter`).
 */
export abstract class ClientStore<Tx> implements TransactionalStore<Tx> {
  readonly kind = 'transactional';
  /** The inbox table's name as given (default `service_pay_inbox`, the same table as `PostgresStore`'s). */
  readonly tableName: string;
  readonly #driver: ClientDriver<Tx>;
  readonly #name: string;

  /**
   * @param scope names this store's deliveries for `refuseOwnTransactions` (the subclass wraps its client's
   * transaction methods before calling `super`, so it cannot use `this` yet).
   */
  protected constructor(adapter: ClientAdapter<Tx>, table: string | undefined, scope: object) {
    const name = tableName(table);
    this.tableName = name.name;
    this.#name = adapter.store;
    this.#driver = new ClientDriver(adapter, new InboxSql(name), scope);
  }

  /**
   * Opens the client's transaction holding `key`, or says why not: another transaction holds it
   * (`in-progress`, without waiting) or it was recorded before (`completed`, with the recorded fingerprint).
   */
  begin(key: string, fingerprint: string): Promise<TransactionClaim<Tx>> {
    return this.#driver.begin(key, fingerprint);
  }

  /** Creates the inbox table and its indexes if missing; idempotent and safe from several processes. */
  migrate(): Promise<void> {
    return this.#driver.migrate();
  }

  /**
   * Deletes inbox rows older than `olderThanMs`, in batches; resolves with how many. A pruned payment would
   * be credited again if delivered again: keep rows longer than the sender retries and you reconcile.
   */
  async prune(options: { olderThanMs: number }): Promise<number> {
    return await this.#driver.prune(pruneAge(options, this.#name));
  }
}
