import type { LedgerFlavour } from '../../ledger/ledger-flavour.js';
import { nameParts } from '../../ledger/ledger-flavour.js';
import { quoteLiteral } from './sql-text.js';

const quote = (part: string) => `"${part}"`;

/**
 * The ledger on PostgreSQL: values written in as literals (as every statement of this dialect, so any
 * client's raw query runs them), `INSERT ... ON CONFLICT`, and the index in the table's schema.
 *
 * @example
 * ```ts
 * new LedgerStatements(table, postgresLedgerFlavour).migrate();
 * ```
 */
export const postgresLedgerFlavour: LedgerFlavour = {
  value: (value) =>
    value === null ? 'NULL' : typeof value === 'number' ? String(Math.trunc(value)) : quoteLiteral(value),
  types: { key: 'text', text: 'text', bigint: 'bigint', engine: '' },
  upsert: 'on-conflict',
  returning: () => true,
  names(table) {
    const { qualifiers, bare } = nameParts(table);
    const ledger = [...qualifiers, `${bare}_ledger`].map(quote).join('.');
    // An index is made in its table's schema, and named there without one.
    return { ledger, index: quote(`${bare}_ledger_open_idx`), indexOn: ledger };
  },
};
