import type { InboxDraft, InboxRecord } from '@service-pay/core';
import type { Row, Statement, StatementResult } from './client.js';
import type { LedgerFlavour } from './ledger/ledger-flavour.js';

/**
 * What the claim statement found, as the dialect reads its answer: the key is this transaction's to run
 * (`session` names the connection, for interrupting it), another transaction holds it, or it was recorded.
 *
 * `answerBeforeRollback: true` on a claim that does not run says the store may answer before that
 * transaction's ROLLBACK is done: the transaction changed nothing, and another delivery of the key meanwhile
 * gets the right answer without waiting for it (on PostgreSQL and MySQL a claim that meets the key's lock
 * reads the recorded row: a duplicate's lock held until its ROLLBACK is met as a duplicate). Left out, the
 * store waits for the ROLLBACK.
 */
export type ClaimResult =
  | { readonly state: 'free'; readonly session: unknown; readonly written: boolean }
  | { readonly state: 'held'; readonly answerBeforeRollback?: boolean }
  | { readonly state: 'completed'; readonly fingerprint: string; readonly answerBeforeRollback?: boolean };

/** How far a rollback has to go to end a transaction whose handler still runs a statement. */
export type Interruption = 'statement' | 'session';

/**
 * How a dialect interrupts a connection from another one. The interruption may wait for a connection of a
 * full pool while the one it means ends its rollback and goes to another delivery, so it must stop nothing
 * then. Either one statement that checks, as it runs, that the connection is still in the claiming
 * transaction (`statement`), or, where the database has no such condition, a `look` at what the connection
 * runs now and, from its rows, the statement that stops that (`stop`; undefined: nothing to stop), both
 * sent on one connection, the second only while the rollback is still pending.
 *
 * @example
 * ```ts
 * const plan: InterruptPlan = { look: statement('SELECT * FROM information_schema.PROCESSLIST WHERE ID = 42'),
 *   stop: (rows) => (rows[0] === undefined ? undefined : statement('KILL QUERY 42')) };
 * ```
 */
export type InterruptPlan =
  | { readonly statement: Statement }
  | { readonly look: Statement; readonly stop: (rows: readonly Row[]) => Statement | undefined };

/**
 * What the statements say, for one database: the inbox table, the claim, lock-busy errors, error
 * explanations, and how to interrupt a running statement. One file per dialect (`dialects/postgres.ts`,
 * `dialects/mysql.ts`); any client (`SqlClient`) runs them.
 *
 * @example
 * ```ts
 * const table = postgresDialect.table('billing.inbox', 'KyselyStore');
 * await client.queryOutside(postgresDialect.claim(table, key));
 * ```
 */
export interface SqlDialect<Table extends { readonly name: string }> {
  /** For messages: `PostgreSQL`, `MySQL`. */
  readonly name: string;
  /** Checks and quotes the inbox table's name; a `TypeError` naming `store` when it is not one. */
  table(value: unknown, store: string): Table;
  /** Creates (or widens) the inbox and what the claim needs; run in order, `inTransaction` or autocommit. */
  migrate(table: Table): { readonly statements: readonly Statement[]; readonly inTransaction: boolean };
  /**
   * In the delivery's transaction: takes the key without waiting and reads its inbox row. Given `row`, a
   * dialect that can also writes the inbox row in the same statement (then `readClaim` says `written`),
   * so the commit has nothing left to send.
   */
  claim(table: Table, key: string, row?: { fingerprint: string; draft: InboxDraft }): Statement;
  /**
   * Optional: what the dialect must learn of the server before a store's first claim (MariaDB's
   * `INSERT ... RETURNING`, which MySQL 8 lacks), asked once per store in its first delivery's
   * transaction; `learn` keeps the answer on the store's `table`, where `claim` reads it. `unlearn`, given
   * a claim's failure, forgets it and answers true when the failure shows another server answering now
   * (a failover to another kind): the store then asks again and claims again, once.
   */
  readonly probe?: {
    statement(table: Table): Statement;
    learned(table: Table): boolean;
    learn(rows: readonly Row[], table: Table): void;
    unlearn?(error: unknown, table: Table): boolean;
  };
  /** Reads the claim's answer; throws (naming `store`) when it shows a table that was never migrated. */
  readClaim(rows: readonly Row[], table: Table, store: string): ClaimResult;
  /** Whether the claim failed because another transaction holds the key (answered without waiting). */
  isLockBusy(error: unknown): boolean;
  /**
   * Optional: after a claim met the key's lock (`isLockBusy`), in the same transaction, a read of the key's
   * recorded row that takes no lock, and its fingerprint from the answer (undefined: no row). A recorded row
   * is final, so whoever holds the lock (a duplicate whose ROLLBACK trails its answer, a prune) the delivery
   * is a duplicate; without one, another delivery is under way.
   */
  recorded?(
    table: Table,
    key: string,
  ): { readonly statement: Statement; fingerprint(rows: readonly Row[]): string | undefined };
  /** The inbox row, in the delivery's transaction (when the claim did not write it). */
  record(table: Table, key: string, fingerprint: string, record: InboxRecord): Statement;
  /**
   * The inbox row in a transaction of its own, kept as it is if the key has one: a rejection rolls its
   * delivery back and then records itself with this.
   */
  recordApart(table: Table, key: string, fingerprint: string, record: InboxRecord): Statement;
  /** Deletes up to `batch` rows older than `olderThanMs`. */
  pruneBatch(table: Table, batch: number, olderThanMs: number): Statement;
  /** How many rows a `pruneBatch` deleted. */
  deleted(result: StatementResult): number;
  /**
   * How to interrupt `session`'s running statement (`statement`) or end the session (`session`) from
   * another connection, and only while it is still the claiming transaction's; undefined when `session`
   * cannot be named.
   */
  interrupt(session: unknown, how: Interruption): InterruptPlan | undefined;
  /**
   * A database error as the fix it needs, naming `store`: a missing table becomes a `MissingTableError`
   * that says `migrate()` (and, when the store does not create it itself, `autoMigrate`).
   */
  explainError(error: unknown, table: Table, store: string, autoMigrate: boolean): unknown;
  /**
   * Optional, asked only after a claim failed for something missing and the store will not create it
   * itself (`autoMigrate: false`): a statement that says what of the inbox exists, and the message its
   * answer makes (`undefined`: keep the first one). Tells "no table at all" from "a table made by hand
   * without what the claim needs" (PostgreSQL's claim functions).
   */
  whatIsMissing?(
    table: Table,
    store: string,
  ): { readonly statement: Statement; explain(rows: readonly Row[]): Error | undefined };
  /**
   * Optional: a failure the handler threw during a delivery, as the mistake it reveals (undefined: none).
   * SQLite: `SQLITE_BUSY` there is a write through a second connection, waiting for the lock the
   * delivery's own transaction holds.
   */
  explainHandlerError?(error: unknown, store: string): Error | undefined;
  /** Whether SQL text would end or restart the delivery's transaction (BEGIN, COMMIT, ROLLBACK, ...). */
  endsTransaction(text: unknown): boolean;
  /**
   * Optional, for a database where a failed statement leaves the transaction unable to commit (PostgreSQL:
   * every later statement is refused, and COMMIT ends the transaction as a ROLLBACK without an error of its
   * own, which most clients report as a success). A statement that fails in such a transaction and
   * succeeds in a sound one (one that rolled back to a savepoint is sound again): sent before COMMIT only
   * when a statement the handler sent through `ctx.tx` failed, so a handler that caught that failure does
   * not commit nothing and answer 200.
   */
  readonly soundCheck?: Statement;
  /**
   * Optional: whether a failed statement's error means the server has already rolled the whole transaction
   * back (MySQL's deadlock; its lock wait timeout on a server set to roll back for it, as `table.server`
   * learned; SQLite's disk full). Once one is seen, `ctx.tx` refuses every further statement (each would
   * run outside any transaction and commit on its own) and the delivery fails, whatever the handler did
   * with the error.
   */
  abortsTransaction?(error: unknown, table: Table): boolean;
  /** Optional: how the operator's ledger is written in this dialect; a store without it keeps no ledger. */
  readonly ledger?: LedgerFlavour;
}
