import type { LedgerFlavour } from '../../ledger/ledger-flavour.js';
import { nameParts } from '../../ledger/ledger-flavour.js';
import type { TableName } from './table-name.js';

const quote = (part: string) => `\`${part}\``;

/**
 * The ledger on MySQL and MariaDB: bound values, `INSERT ... ON DUPLICATE KEY UPDATE` (answering the
 * attempts with `RETURNING` where the server takes it: MariaDB), and the index made with the table (MySQL 8
 * has no `CREATE INDEX IF NOT EXISTS`).
 *
 * @example
 * ```ts
 * new LedgerStatements(table, mysqlLedgerFlavour).migrate();
 * ```
 */
export const mysqlLedgerFlavour: LedgerFlavour = {
  value(value, values) {
    if (value === null) return 'NULL';
    values.push(value);
    return '?';
  },
  types: { key: 'VARCHAR(512)', text: 'TEXT', bigint: 'BIGINT', engine: ' ENGINE=InnoDB' },
  upsert: 'on-duplicate-key',
  returning: (table) => (table as TableName).server?.insertReturning === true,
  names(table) {
    const { qualifiers, bare } = nameParts(table);
    return {
      ledger: [...qualifiers, `${bare}_ledger`].map(quote).join('.'),
      index: quote('service_pay_ledger_open_idx'),
      indexOn: '',
    };
  },
};
