import type { InboxTableName } from '../table-name.js';

/**
 * What differs between the databases in the ledger's statements: how a value is written into the text,
 * the column types, how an existing row is updated on insert, and the table's and index's names. One per
 * dialect (`dialects/<dialect>/ledger.ts`); `LedgerStatements` writes the rest once.
 *
 * @example
 * ```ts
 * const flavour: LedgerFlavour = { ...sqliteLedgerFlavour };
 * ```
 */
export interface LedgerFlavour {
  /** Writes `value` into a statement: a literal (PostgreSQL), or `?` with the value pushed to `values`. */
  value(value: string | number | null, values: unknown[]): string;
  /** Column types: text that is a key (indexable) and free text, and a 64-bit integer. */
  readonly types: { key: string; text: string; bigint: string; engine: string };
  /** `on-conflict`: `INSERT ... ON CONFLICT (payment_id) DO UPDATE` (`excluded.`); else MySQL's. */
  readonly upsert: 'on-conflict' | 'on-duplicate-key';
  /** Whether the insert can answer the row's attempts (`RETURNING`); MySQL 8 cannot, MariaDB can. */
  returning(table: InboxTableName): boolean;
  /** The ledger table beside `table`, quoted, and its index's name and the table it is created on. */
  names(table: InboxTableName): { ledger: string; index: string; indexOn: string };
}

/** A table name's parts (checked by the dialect when the store was made: plain identifiers). */
export function nameParts(table: InboxTableName): { qualifiers: string[]; bare: string } {
  const parts = table.name.split('.');
  return { qualifiers: parts.slice(0, -1), bare: parts[parts.length - 1] as string };
}
