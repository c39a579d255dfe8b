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
export type { ClaimResult, Interruption, SqlDialect } from './dialect.js';
export type { MySqlTableOptions } from './dialects/mysql/table-name.js';
export type { PostgresTableOptions } from './dialects/postgres/table-name.js';
export type { SqliteTableOptions } from './dialects/sqlite/table-name.js';
export { HeldSession, type HeldSessionContext } from './held-session.js';
export { oneConnection } from './one-connection.js';
export { PendingQueries, QueryNotAwaitedError } from './pending-queries.js';
export {
  answeredCallback,
  type Checkout,
  callerBound,
  checkoutDelivery,
  guardPoolQueries,
  type QuerySend,
  type RunningDelivery,
} from './pool-guard.js';
export { IN_PROGRESS_RETRY_MS, milliseconds, PRUNE_BATCH, pruneAge } from './prune-age.js';
export { MARIADB_READ_ONLY_PREFIX } from './read-only-prefix.js';
export { INTERRUPT_GRACE_MS, ROLLBACK_GRACE_MS, rollBackInterrupting } from './rollback-escalation.js';
export { type SqlBinding, SqlStore, type SqlStoreApi } from './sql-store.js';
export {
  isReadOnlyRefusal,
  type SqlDialectName,
  type StatementKind,
  serverRefusal,
  statementKind,
  statementRefusal,
} from './statement-kind.js';
export {
  DEFAULT_TABLE_NAME,
  type InboxTableName,
  quotedTableName,
  type SqlStoreOptions,
  type TableNameRules,
  tableNameParts,
} from './table-name.js';
export { abortedTransactionError, endedError, nestedTransactionError } from './transaction-errors.js';
export { DB_WRITES_BESIDE_TX, sayUnguarded } from './unguarded.js';
