import { createHash } from 'node:crypto';
import type { InboxRecord } from '@service-pay/core';
import type { TableName } from './table-name.js';

/** The savepoint taken right after the key: a rejection rolls back to it and keeps only the inbox row. */
const SAVEPOINT = 'service_pay_handler';

/** A statement and its bound values, as mysql2's `query(sql, values)` takes them. */
export interface Statement {
  sql: string;
  values: unknown[];
}

/**
 * Every statement the store sends, for one inbox table. Values are always bound (`?`); mysql2 escapes them
 * on the client (`query`), so each statement is one round trip.
 */
export class InboxSql {
  constructor(readonly table: TableName) {}

  /** Creates the table and its indexes if missing (idempotent). */
  migrate(): string {
    return `CREATE TABLE IF NOT EXISTS ${this.table.sql} (
  \`key\` VARCHAR(512) NOT NULL,
  fingerprint VARCHAR(255) NOT NULL,
  payment_id VARCHAR(255) NOT NULL,
  delivery_id VARCHAR(255) NULL,
  source VARCHAR(16) NOT NULL,
  outcome VARCHAR(16) NOT NULL,
  reason TEXT NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (\`key\`),
  INDEX ${this.table.createdAtIndexSql} (created_at),
  INDEX ${this.table.paymentIdIndexSql} (payment_id),
  CHECK (source IN ('webhook', 'reconciliation')),
  CHECK (outcome IN ('credited', 'rejected'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
  }

  /**
   * The key's lock name for `GET_LOCK`: at most 64 characters (MySQL's limit), so a hash of table and key.
   * Locks are per server, so the table's name is part of it: two inbox tables never share a lock.
   */
  lockName(key: string): string {
    return `service-pay:${createHash('sha256').update(`${this.table.name}:${key}`).digest('hex').slice(0, 51)}`;
  }

  /** Takes the key without waiting (0 s): `locked` 1 when this session now holds it; `id` the session's. */
  lock(key: string): Statement {
    return { sql: 'SELECT GET_LOCK(?, 0) AS locked, CONNECTION_ID() AS id', values: [this.lockName(key)] };
  }

  /** Frees the key; the session's other locks (none) are untouched. */
  unlock(key: string): Statement {
    return { sql: 'DO RELEASE_LOCK(?)', values: [this.lockName(key)] };
  }

  /** The key's row, read inside the transaction after the lock (its snapshot starts at this read). */
  read(key: string): Statement {
    return { sql: `SELECT fingerprint FROM ${this.table.sql} WHERE \`key\` = ?`, values: [key] };
  }

  savepoint(): string {
    return `SAVEPOINT ${SAVEPOINT}`;
  }

  /** The inbox row, after rolling back to the savepoint for a rejection. */
  record(key: string, fingerprint: string, record: InboxRecord): Statement[] {
    const insert: Statement = {
      sql: `INSERT INTO ${this.table.sql} (\`key\`, fingerprint, payment_id, delivery_id, source, outcome, reason) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      values: [
        key,
        fingerprint,
        record.paymentId,
        record.deliveryId ?? null,
        record.source,
        record.outcome,
        record.reason ?? null,
      ],
    };
    return record.outcome === 'rejected'
      ? [{ sql: `ROLLBACK TO SAVEPOINT ${SAVEPOINT}`, values: [] }, insert]
      : [insert];
  }

  /**
   * The keys table of the ORM stores: one row per key, the anchor of the row lock a delivery takes in its
   * client's own transaction (`FOR UPDATE NOWAIT`). Row locks end with the transaction, so nothing is held
   * by a session that goes back to the ORM's pool (a `GET_LOCK` would be). Idempotent.
   */
  migrateKeys(): string {
    return `CREATE TABLE IF NOT EXISTS ${this.table.keysSql} (
  \`key\` VARCHAR(512) NOT NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (\`key\`),
  INDEX ${this.table.createdAtIndexSql} (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
  }

  /**
   * Outside any transaction, without locking: whether the key's anchor row exists, and the key's inbox
   * fingerprint if it was recorded (a duplicate is answered from this alone).
   */
  peek(key: string): Statement {
    return {
      sql: `SELECT k.\`key\` AS anchored, i.fingerprint FROM (SELECT ? AS \`key\`) AS wanted LEFT JOIN ${this.table.keysSql} k ON k.\`key\` = wanted.\`key\` LEFT JOIN ${this.table.sql} i ON i.\`key\` = wanted.\`key\``,
      values: [key],
    };
  }

  /**
   * Creates the key's anchor row, outside any transaction (autocommit). Only sent when `peek` found none:
   * on an existing row InnoDB's duplicate check waits for whoever holds it.
   */
  ensureKey(key: string): Statement {
    return { sql: `INSERT IGNORE INTO ${this.table.keysSql} (\`key\`) VALUES (?)`, values: [key] };
  }

  /**
   * In the delivery's transaction: takes the key's anchor row without waiting (busy -> the server answers
   * a lock error at once), then reads the inbox row. No row: the anchor was pruned meanwhile. The inbox read
   * is a plain read, correlated with the locked row so that it runs after the lock (an uncorrelated one is
   * evaluated once, before it), and InnoDB takes its snapshot then: it sees the commit of whoever held the
   * key before. Were it ever to miss one, the inbox row's primary key still refuses the second insert.
   */
  claim(key: string): Statement {
    return {
      sql: `SELECT CONNECTION_ID() AS id, (SELECT i.fingerprint FROM ${this.table.sql} i WHERE i.\`key\` = k.\`key\`) AS fingerprint FROM ${this.table.keysSql} k WHERE k.\`key\` = ? FOR UPDATE NOWAIT`,
      values: [key],
    };
  }

  /** Deletes up to `batch` anchor rows older than `olderThanMs`, as `pruneBatch` does inbox rows. */
  pruneKeysBatch(batch: number, olderThanMs: number): Statement {
    return {
      sql: `DELETE FROM ${this.table.keysSql} WHERE created_at < NOW(3) - INTERVAL ? MICROSECOND LIMIT ${batch}`,
      values: [Math.floor(olderThanMs) * 1000],
    };
  }

  /** Deletes up to `batch` rows older than `olderThanMs`; run until it deletes fewer. */
  pruneBatch(batch: number, olderThanMs: number): Statement {
    return {
      sql: `DELETE FROM ${this.table.sql} WHERE created_at < NOW(3) - INTERVAL ? MICROSECOND LIMIT ${batch}`,
      values: [Math.floor(olderThanMs) * 1000],
    };
  }
}
