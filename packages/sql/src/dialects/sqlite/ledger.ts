import type { LedgerFlavour } from '../../ledger/ledger-flavour.js';
import { nameParts } from '../../ledger/ledger-flavour.js';

const quote = (part: string) => `"${part}"`;

/**
 * The ledger on SQLite: bound values, `INSERT ... ON CONFLICT ... RETURNING` (SQLite 3.35), and the
 * index named in the table's schema and made on the bare table (SQLite's syntax).
 *
 * @example
 * ```ts
 * new LedgerStatements(table, sqliteLedgerFlavour).migrate();
 * ```
 */
export const sqliteLedgerFlavour: LedgerFlavour = {
  value(value, values) {
    if (value === null) return 'NULL';
    values.push(value);
    return '?';
  },
  types: { key: 'TEXT', text: 'TEXT', bigint: 'INTEGER', engine: '' },
  upsert: 'on-conflict',
  returning: () => true,
  names(table) {
    const { qualifiers, bare } = nameParts(table);
    return {
      ledger: [...qualifiers, `${bare}_ledger`].map(quote).join('.'),
      index: [...qualifiers, `${bare}_ledger_open_idx`].map(quote).join('.'),
      indexOn: quote(`${bare}_ledger`),
    };
  },
};
