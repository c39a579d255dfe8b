export { endsMySqlTransaction, explainMySqlError, isMySqlLockBusy, mysqlDialect } from './mysql/dialect.js';
export { InboxSql, LOCK_SLOTS } from './mysql/inbox-sql.js';
export { type TableName, tableName } from './mysql/table-name.js';
