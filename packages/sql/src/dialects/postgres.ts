export { endsPostgresTransaction, explainPostgresError, postgresDialect } from './postgres/dialect.js';
export { InboxSql } from './postgres/inbox-sql.js';
export { quoteLiteral, quoteNullable } from './postgres/sql-text.js';
export { type TableName, tableName } from './postgres/table-name.js';
