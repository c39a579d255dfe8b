/**
 * What makes one statement run read-only on MariaDB: `SET STATEMENT tx_read_only=1 FOR`, in a comment
 * only MariaDB runs (`/*M!`), so the statement is one round trip as before and nothing of the mode
 * outlives it on the connection. A write inside it (a function that inserts, whatever the text hid) fails
 * with `ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION` (1792). MySQL reads the prefix as a comment: there only
 * the text check holds.
 *
 * @example
 * ```ts
 * connection.query(MARIADB_READ_ONLY_PREFIX + 'select credit(?)', [id]); // refused by MariaDB: 1792
 * ```
 */
export const MARIADB_READ_ONLY_PREFIX = '/*M!100300 SET STATEMENT tx_read_only=1 FOR */ ';
