export { endsSqliteTransaction, explainSqliteError, isSqliteBusy, sqliteDialect } from './sqlite/dialect.js';
export { InboxSql } from './sqlite/inbox-sql.js';
export { type TableName, tableName } from './sqlite/table-name.js';
