import type { InboxRecord } from '@service-pay/core';
import type { TableName } from './table-name.js';

/** The savepoint taken right after the key: a rejection rolls back to it and keeps only the inbox row. */
export const SAVEPOINT = 'service_pay_handler';

/** A statement and its bound values. */
export interface Statement {
  readonly sql: string;
  readonly args: readonly (string | number | null)[];
}

/**
 * Every statement the store sends, for one inbox table. Values are always bound, never written into the
 * text. `created_at` is milliseconds since the epoch, set by the store (SQLite has no timestamp type).
 */
export class InboxSql {
  readonly createTable: string;
  readonly createIndexes: readonly string[];
  readonly lookup: string;
  readonly insert: string;
  readonly pruneBatch: string;

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
    this.lookup = `SELECT fingerprint FROM ${t} WHERE key = ?`;
    this.insert = `INSERT INTO ${t} (key, fingerprint, payment_id, delivery_id, source, outcome, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
    this.pruneBatch = `DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE created_at < ? LIMIT ?)`;
  }

  /** The inbox row of one attempt. A plain INSERT: a second writer cannot exist while we hold SQLite's write lock. */
  record(key: string, fingerprint: string, record: InboxRecord, now: number): Statement {
    return {
      sql: this.insert,
      args: [
        key,
        fingerprint,
        record.paymentId,
        record.deliveryId ?? null,
        record.source,
        record.outcome,
        record.reason ?? null,
        now,
      ],
    };
  }
}
