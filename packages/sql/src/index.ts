export {
  type AutoMigrateOption,
  AutoMigration,
  autoMigrateOption,
  InboxTableMismatchError,
  MissingTableError,
  migrateAdvice,
} from './auto-migrate.js';
export {
  type Row,
  resultOf,
  type SqlClient,
  type Statement,
  type StatementResult,
  statement,
} from './client.js';
export type { DrizzleDatabase } from './clients/drizzle.js';
export type { PrismaLike, PrismaTransaction } from './clients/prisma.js';
export type { ClaimResult, Interruption, InterruptPlan, SqlDialect } from './dialect.js';
export type { MySqlTableOptions } from './dialects/mysql/table-name.js';
export type { PostgresTableOptions } from './dialects/postgres/table-name.js';
export type { SqliteTableOptions } from './dialects/sqlite/table-name.js';
export { HeldSession, type HeldSessionContext } from './guard/held-session.js';
export { oneConnection } from './guard/one-connection.js';
export { PendingQueries, QueryNotAwaitedError } from './guard/pending-queries.js';
export {
  answeredCallback,
  type Checkout,
  callerBound,
  checkoutDelivery,
  guardPoolQueries,
  type QuerySend,
  type RunningDelivery,
} from './guard/pool-guard.js';
export { MARIADB_READ_ONLY_PREFIX } from './guard/read-only-prefix.js';
export {
  isReadOnlyRefusal,
  type SqlDialectName,
  type StatementKind,
  serverRefusal,
  statementKind,
  statementRefusal,
} from './guard/statement-kind.js';
export { abortedTransactionError, endedError, nestedTransactionError } from './guard/transaction-errors.js';
export { DB_WRITES_BESIDE_TX, sayUnguarded } from './guard/unguarded.js';
export { IN_PROGRESS_RETRY_MS, milliseconds, PRUNE_BATCH, pruneAge } from './prune-age.js';
export { INTERRUPT_GRACE_MS, ROLLBACK_GRACE_MS, rollBackInterrupting } from './rollback-escalation.js';
export { type SqlBinding, SqlStore, type SqlStoreApi } from './sql-store.js';
export {
  DEFAULT_TABLE_NAME,
  type InboxTableName,
  quotedTableName,
  type SqlStoreOptions,
  type TableNameRules,
  tableNameParts,
} from './table-name.js';
