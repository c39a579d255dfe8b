export { endsSqliteTransaction, explainSqliteError, isSqliteBusy } from './sqlite/dialect.js';
export { InboxSql, SAVEPOINT, type Statement as SqliteStatement } from './sqlite/inbox-sql.js';
export { type TableName, tableName } from './sqlite/table-name.js';
