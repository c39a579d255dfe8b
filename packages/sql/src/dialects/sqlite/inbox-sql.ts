import type { InboxRecord } from '@service-pay/core';
import type { Statement } from '../../client.js';
import { inboxRowValues } from '../../inbox-row.js';
import type { TableName } from './table-name.js';

/**
 * Every statement the SQLite dialect sends, for one inbox table. Values are always bound, never written
 * into the text. `created_at` is milliseconds since the epoch, set by the store (SQLite has no timestamp
 * type).
 */
export class InboxSql {
  readonly createTable: string;
  readonly createIndexes: readonly string[];
  readonly #insert: string;

  constructor(readonly table: TableName) {
    const t = table.sql;
    const bare = `"${table.name.split('.').pop()}"`;
    this.createTable = `CREATE TABLE IF NOT EXISTS ${t} (
  key TEXT PRIMARY KEY NOT NULL,
  fingerprint TEXT NOT NULL,
  payment_id TEXT NOT NULL,
  delivery_id TEXT,
  source TEXT NOT NULL CHECK (source IN ('webhook', 'reconciliation')),
  outcome TEXT NOT NULL CHECK (outcome IN ('credited', 'rejected')),
  reason TEXT,
  created_at INTEGER NOT NULL
)`;
    this.createIndexes = [
      `CREATE INDEX IF NOT EXISTS ${table.createdAtIndexSql} ON ${bare} (created_at)`,
      `CREATE INDEX IF NOT EXISTS ${table.paymentIdIndexSql} ON ${bare} (payment_id)`,
    ];
    this.#insert = `INSERT INTO ${t} (key, fingerprint, payment_id, delivery_id, source, outcome, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
  }

  /**
   * Takes SQLite's write lock and reads the key's row, in one statement: an UPDATE that changes nothing is
   * a write, so it takes the lock before it looks (without waiting once the transaction began IMMEDIATE;
   * SQLITE_BUSY when another connection writes), and RETURNING gives the row if the key has one.
   */
  claim(key: string): Statement {
    return { sql: `UPDATE ${this.table.sql} SET key = key WHERE key = ? RETURNING fingerprint`, values: [key] };
  }

  /** The inbox row of one attempt. A plain INSERT: a second writer cannot exist while we hold the write lock. */
  record(key: string, fingerprint: string, record: InboxRecord): Statement {
    return {
      sql: this.#insert,
      values: [...inboxRowValues(key, fingerprint, record), Date.now()],
    };
  }

  /** The inbox row in a transaction of its own (a rejection), kept as it is if the key has one. */
  recordApart(key: string, fingerprint: string, record: InboxRecord): Statement {
    const row = this.record(key, fingerprint, record);
    return { sql: `${row.sql} ON CONFLICT (key) DO NOTHING`, values: row.values };
  }

  /** Deletes up to `batch` rows older than `olderThanMs`; run until it deletes fewer. */
  pruneBatch(batch: number, olderThanMs: number): Statement {
    const t = this.table.sql;
    return {
      sql: `DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE created_at < ? LIMIT ?)`,
      values: [Date.now() - Math.floor(olderThanMs), batch],
      write: true,
    };
  }
}
