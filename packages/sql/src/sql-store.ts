import {
  type HeldTransaction,
  holdTransaction,
  type InboxDraft,
  type StorePoolState,
  type TransactionalStore,
  type TransactionClaim,
} from '@service-pay/core';
import { asStoreWork } from '@service-pay/core/node';
import { AutoMigration, autoMigrateOption, MissingTableError } from './auto-migrate.js';
import type { SqlClient } from './client.js';
import type { Interruption, SqlDialect } from './dialect.js';
import { HeldSession, type HeldSessionContext } from './guard/held-session.js';
import { endedError, nestedTransactionError } from './guard/transaction-errors.js';
import { LedgerStatements } from './ledger/ledger-statements.js';
import { SqlLedger } from './ledger/sql-ledger.js';
import { IN_PROGRESS_RETRY_MS, PRUNE_BATCH, pruneAge } from './prune-age.js';
import type { InboxTableName, SqlStoreOptions } from './table-name.js';

/** How long `migrate` waits for a database's write lock held by another writer, and how often it tries. */
const MIGRATE_LOCK_WAIT_MS = 10_000;
const MIGRATE_LOCK_RETRY_MS = 25;

/**
 * A store as a binding of one client to one dialect: what `KyselyStore`, `DrizzleStore`, `PrismaStore`,
 * `KnexStore` and `TypeOrmStore` pass once their options are checked.
 *
 * @example
 * ```ts
 * const binding: SqlBinding<Transaction<DB>, PostgresTable> = { store: 'KyselyStore', client: kyselyClient(db), dialect: postgresDialect, options, scope };
 * ```
 */
export interface SqlBinding<Tx, Table extends { readonly name: string }> {
  /** The public store's name, for every message (`KyselyStore`). */
  readonly store: string;
  readonly client: SqlClient<Tx>;
  readonly dialect: SqlDialect<Table>;
  /**
   * The app's options, of which the store reads `tableName` (default `service_pay_inbox`) and `autoMigrate`
   * (default true); both are checked here, so a store passes its options as given.
   */
  readonly options: SqlStoreOptions;
  /** Names this store's deliveries for the own-transaction guard (`refuseOwnTransactions`). */
  readonly scope: object;
  /** The pool under the client, where the store was given it (else the client's own `describePool`). */
  readonly describePool?: (() => StorePoolState | undefined) | undefined;
}

/**
 * A SQL store as the app sees it, the type of `PostgresStore` and `SqliteStore`: core's transactional store
 * with its table's name, `migrate()` and `prune()`. Each store's own type says how it takes a key and what
 * its migration makes.
 *
 * @example
 * ```ts
 * export interface SqliteStore<Tx = Database> extends SqlStoreApi<Tx> {}
 * ```
 */
export interface SqlStoreApi<Tx> extends TransactionalStore<Tx> {
  readonly kind: 'transactional';
  /** The inbox table's name as given (default `service_pay_inbox`). */
  readonly tableName: string;
  /**
   * Opens a transaction holding `key`, or says why not: another delivery holds it (`in-progress`, without
   * waiting) or it was recorded before (`completed`, with the recorded fingerprint).
   */
  begin(key: string, fingerprint: string): Promise<TransactionClaim<Tx>>;
  /** Creates the inbox table and its indexes if they are missing; idempotent. Run it once at start-up. */
  migrate(): Promise<void>;
  /**
   * Deletes inbox rows older than `olderThanMs`, in batches; resolves with how many. A pruned payment would
   * be credited again if delivered again: keep rows longer than the sender retries and you reconcile.
   */
  prune(options: { olderThanMs: number }): Promise<number>;
}

/**
 * The transactional store on a client's own interactive transaction, for any dialect: each attempt runs
 * inside the client's transaction, held open (core's `holdTransaction`) until the pipeline commits or rolls
 * back, so `ctx.tx` is the client's transaction object and the shop's credit, written with its own ORM,
 * commits with the inbox row. The public stores extend it and only check their options.
 *
 * @example
 * ```ts
 * class KyselyStore<DB> extends SqlStore<Transaction<DB>, PostgresTable> {
 *   constructor(options: KyselyStoreOptions<DB>) {
 *     super({ store: 'KyselyStore', client: kyselyClient(db), dialect: postgresDialect, options, scope });
 *   }
 * }
 * ```
 */
export abstract class SqlStore<Tx, Table extends { readonly name: string } = { readonly name: string }>
  implements TransactionalStore<Tx>
{
  readonly kind = 'transactional';
  /** The inbox table's name as given (default `service_pay_inbox`). */
  readonly tableName: string;
  readonly #binding: SqlBinding<Tx, Table>;
  readonly #table: Table;
  readonly #auto: AutoMigration;
  /** What every held session of this store shares: made once, not per delivery. */
  readonly #context: HeldSessionContext<Tx, Table>;
  /**
   * The operator's ledger of failing payments, in a table beside the inbox (`<inbox>_ledger`, made by
   * `migrate()`), written outside every delivery's transaction.
   */
  readonly ledger: SqlLedger | undefined;
  readonly #ledgerSql: LedgerStatements | undefined;

  protected constructor(binding: SqlBinding<Tx, Table>) {
    this.#binding = binding;
    this.#table = binding.dialect.table(binding.options.tableName, binding.store);
    this.tableName = this.#table.name;
    this.#auto = new AutoMigration(autoMigrateOption(binding.options.autoMigrate, binding.store), () => this.migrate());
    const { store, client, dialect, scope } = binding;
    this.#ledgerSql =
      dialect.ledger === undefined
        ? undefined
        : new LedgerStatements(this.#table as unknown as InboxTableName, dialect.ledger);
    this.ledger =
      this.#ledgerSql === undefined
        ? undefined
        : new SqlLedger(client as SqlClient<unknown>, this.#ledgerSql, this.#auto, (error) =>
            dialect.explainError(error, this.#table, store, this.#auto.enabled),
          );
    this.#context = {
      store,
      client,
      dialect,
      scope,
      table: this.#table,
      interrupt: (session, how, wanted) => this.#interrupt(session, how, wanted),
      rules: {
        rawTextMethods: client.rawTextMethods,
        endsTransaction: (text) => dialect.endsTransaction(text),
        endedError: () => endedError(store),
        nestedError: () => nestedTransactionError(store),
      },
      abortsTransaction:
        dialect.abortsTransaction === undefined
          ? undefined
          : (error) => dialect.abortsTransaction?.(error, this.#table) === true,
    };
  }

  /**
   * Opens the client's transaction holding `key`, or says why not: another transaction holds it
   * (`in-progress`, without waiting) or it was recorded before (`completed`, with the recorded fingerprint).
   */
  begin(key: string, fingerprint: string, draft?: InboxDraft): Promise<TransactionClaim<Tx>> {
    return this.#begin(key, fingerprint, draft, false);
  }

  /**
   * `begin`; a claim that meets a missing table is retried once (`retried`) after auto-migration, and one
   * that shows another server than the one learned of, once after learning it again.
   */
  async #begin(
    key: string,
    fingerprint: string,
    draft: InboxDraft | undefined,
    retried: boolean,
  ): Promise<TransactionClaim<Tx>> {
    const { store, client, dialect } = this.#binding;
    const table = this.#table;
    if (client.busy?.()) return { state: 'in-progress', retryAfterMs: IN_PROGRESS_RETRY_MS };
    let held: HeldTransaction<Tx>;
    try {
      // The connection the client checks out for it is the store's: its guard never judges ctx.tx's statements.
      held = await holdTransaction<Tx>((work) => asStoreWork(() => client.transaction(work)));
    } catch (error) {
      // A client whose BEGIN takes the lock (SQLite's BEGIN IMMEDIATE) meets another writer there.
      if (dialect.isLockBusy(error)) return { state: 'in-progress', retryAfterMs: IN_PROGRESS_RETRY_MS };
      throw error;
    }
    let claim: ReturnType<typeof dialect.readClaim>;
    try {
      const { probe } = dialect;
      if (probe !== undefined && !probe.learned(table)) {
        probe.learn((await client.query(held.tx, probe.statement(table))).rows, table);
      }
      const statement = dialect.claim(table, key, draft === undefined ? undefined : { fingerprint, draft });
      claim = dialect.readClaim((await client.query(held.tx, statement)).rows, table, store);
    } catch (error) {
      if (dialect.isLockBusy(error)) return this.#lockMet(held, key);
      await held.rollback();
      // The server behind the pool is not the one the store learned of (a failover): learn it again.
      if (!retried && dialect.probe?.unlearn?.(error, table)) return this.#begin(key, fingerprint, draft, true);
      const explained = dialect.explainError(error, table, store, this.#auto.enabled);
      // With autoMigrate on, the store creates what is missing: the message is only read when it is off.
      const failure =
        explained instanceof MissingTableError && !this.#auto.enabled
          ? await this.#whatIsMissing(explained)
          : explained;
      if (retried) throw failure;
      return this.#auto.recover(failure, () => this.#begin(key, fingerprint, draft, true));
    }
    if (claim.state === 'free') {
      return {
        state: 'claimed',
        session: new HeldSession(this.#context, held, key, fingerprint, claim.written, claim.session, draft?.paymentId),
      };
    }
    // Nothing to do in this transaction; a failed rollback leaves nothing behind either (the server rolls
    // back what a dropped connection held). Where the dialect says so, the answer does not wait for that
    // ROLLBACK, a round trip that changes nothing (another delivery of the key meanwhile is answered right:
    // `ClaimResult`); the connection goes back to the pool when it is done (`rollback()` never rejects). A
    // client of one connection (`busy`) waits: the next delivery would find it busy and be answered 409.
    if (claim.answerBeforeRollback === true && client.busy === undefined) void held.rollback();
    else await held.rollback();
    return claim.state === 'held'
      ? { state: 'in-progress', retryAfterMs: IN_PROGRESS_RETRY_MS }
      : { state: 'completed', fingerprint: claim.fingerprint };
  }

  /**
   * The claim met the key's lock: another delivery is under way, or the key is recorded and its lock held by
   * a transaction that changes nothing (a duplicate answered before its ROLLBACK, a prune). The recorded row,
   * read without a lock where the dialect can, tells them apart; a read that fails says "under way", the
   * answer that is always safe (the sender retries).
   */
  async #lockMet(held: HeldTransaction<Tx>, key: string): Promise<TransactionClaim<Tx>> {
    const { client, dialect } = this.#binding;
    const recorded = dialect.recorded?.(this.#table, key);
    let fingerprint: string | undefined;
    if (recorded !== undefined) {
      try {
        fingerprint = recorded.fingerprint((await client.query(held.tx, recorded.statement)).rows);
      } catch {
        // Left undefined: a read that failed answers "under way".
      }
    }
    await held.rollback();
    return fingerprint === undefined
      ? { state: 'in-progress', retryAfterMs: IN_PROGRESS_RETRY_MS }
      : { state: 'completed', fingerprint };
  }

  /**
   * The connection pool's state (size, in use, waiting) where the client shows it; asked by the pipeline
   * only when `begin` did not answer in time, to tell a full pool from a database that does not answer.
   */
  describePool(): StorePoolState | undefined {
    const { describePool, client } = this.#binding;
    return describePool === undefined ? client.describePool?.() : describePool();
  }

  /**
   * Creates the inbox table (and what the claim needs) if missing; idempotent and safe from several
   * processes at once. Run it once at start-up.
   */
  async migrate(): Promise<void> {
    try {
      await this.#migrate();
    } catch (error) {
      // A table of the same name with other columns fails its indexes: say so rather than the raw error.
      throw this.#binding.dialect.explainError(error, this.#table, this.#binding.store, true);
    }
  }

  async #migrate(): Promise<void> {
    const { client, dialect } = this.#binding;
    const inbox = dialect.migrate(this.#table);
    const statements = [...inbox.statements, ...(this.#ledgerSql?.migrate() ?? [])];
    const { inTransaction } = inbox;
    if (!inTransaction) {
      for (const statement of statements) await client.queryOutside(statement);
      return;
    }
    // On a database of one writer (SQLite) the transaction takes the write lock without waiting, which a
    // delivery wants (409 at once) but migrate does not: several processes starting together each migrate,
    // and all but one would meet the lock and fail to start. So migrate waits its turn, for a bounded time.
    const giveUpAt = Date.now() + MIGRATE_LOCK_WAIT_MS;
    for (;;) {
      try {
        await client.transaction(async (tx) => {
          for (const statement of statements) await client.query(tx, statement);
        });
        return;
      } catch (error) {
        if (!dialect.isLockBusy(error) || Date.now() >= giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, MIGRATE_LOCK_RETRY_MS));
      }
    }
  }

  /**
   * Deletes inbox rows older than `olderThanMs`, in batches; resolves with how many. A pruned payment would
   * be credited again if delivered again: keep rows longer than the sender retries and you reconcile.
   */
  async prune(options: { olderThanMs: number }): Promise<number> {
    const { store, client, dialect } = this.#binding;
    const olderThanMs = pruneAge(options, store);
    let deleted = 0;
    for (;;) {
      const count = dialect.deleted(
        await client.queryOutside(dialect.pruneBatch(this.#table, PRUNE_BATCH, olderThanMs)),
      );
      deleted += count;
      if (count < PRUNE_BATCH) return deleted;
    }
  }

  /** The dialect's closer look at a missing table or claim function, or `missing` as it was. */
  async #whatIsMissing(missing: MissingTableError): Promise<Error> {
    const { store, client, dialect } = this.#binding;
    const probe = dialect.whatIsMissing?.(this.#table, store);
    if (probe === undefined) return missing;
    try {
      return probe.explain((await client.queryOutside(probe.statement)).rows) ?? missing;
    } catch {
      return missing;
    }
  }

  /** Sends `dialect.interrupt`'s plan while `wanted()`; never rejects (the rollback then ends as it will). */
  async #interrupt(session: unknown, how: Interruption, wanted: () => boolean): Promise<void> {
    const { client, dialect } = this.#binding;
    const plan = client.busy === undefined ? dialect.interrupt(session, how) : undefined;
    if (plan === undefined || !wanted()) return;
    try {
      if ('statement' in plan) {
        await client.queryOutside(plan.statement);
        return;
      }
      // One connection for both: the statement stops what the look saw, not what runs after another wait.
      await client.transaction(async (tx) => {
        const { rows } = await client.query(tx, plan.look);
        // The look may have waited for a connection until the rollback ended and the connection it names
        // went to another delivery. This process learns of that end before it lends the connection, and
        // the look's answer (which saw the other delivery's statement, sent after that) comes later still:
        // asked now, `wanted()` tells whether what the look saw is the handler's statement.
        if (!wanted()) return;
        const stop = plan.stop(rows);
        if (stop !== undefined) await client.query(tx, stop);
      });
    } catch {
      // Not interrupted: the rollback ends when the statement does, or the escalation goes on.
    }
  }
}
