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
export type { PrismaLike, PrismaTransaction } from './clients/prisma.js';
export type { ClaimResult, Interruption, SqlDialect } from './dialect.js';
export { HeldSession, type HeldSessionContext } from './held-session.js';
export { oneConnection } from './one-connection.js';
export { PendingQueries, QueryNotAwaitedError } from './pending-queries.js';
export {
  type Checkout,
  checkoutDelivery,
  guardPoolQueries,
  type QueryJudge,
  type RunningDelivery,
} from './pool-guard.js';
export { IN_PROGRESS_RETRY_MS, milliseconds, PRUNE_BATCH, pruneAge } from './prune-age.js';
export { INTERRUPT_GRACE_MS, ROLLBACK_GRACE_MS, rollBackInterrupting } from './rollback-escalation.js';
export { type SqlBinding, SqlStore } from './sql-store.js';
export { type StatementKind, statementKind, statementRefusal } from './statement-kind.js';
export { DEFAULT_TABLE_NAME, type TableNameRules, tableNameParts } from './table-name.js';
export { endedError, nestedTransactionError } from './transaction-errors.js';
export { sayUnguarded } from './unguarded.js';
