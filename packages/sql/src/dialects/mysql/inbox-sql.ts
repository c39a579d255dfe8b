import { createHash } from 'node:crypto';
import type { InboxDraft, InboxRecord } from '@service-pay/core';
import type { Statement } from '../../client.js';
import { inboxRowValues } from '../../inbox-row.js';
import type { TableName } from './table-name.js';

/**
 * How many lock slots the ORM stores' keys table holds: 65,536 rows of one integer. Two deliveries of
 * different payments in flight at once share a slot with a chance of 1 in 65,536; the second is then
 * answered 409 and retried by the sender, never credited twice.
 */
export const LOCK_SLOTS = 65_536;

/**
 * Every statement the store sends, for one inbox table. Values are always bound (`?`); mysql2 escapes them
 * on the client (`query`), so each statement is one round trip.
 */
export class InboxSql {
  constructor(readonly table: TableName) {}

  /**
   * Creates the table and its indexes if missing, then widens what an older version made narrower: every
   * text column holds what core accepts (a payment id of 256 characters, a key of 512). Idempotent; a
   * column already that wide is left as it is.
   */
  migrateStatements(): string[] {
    return [this.createTable(), this.widen()];
  }

  /** The inbox table as this version makes it. */
  private createTable(): string {
    return `CREATE TABLE IF NOT EXISTS ${this.table.sql} (
  \`key\` VARCHAR(512) NOT NULL,
  fingerprint VARCHAR(255) NOT NULL,
  payment_id VARCHAR(256) NOT NULL,
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
   * Versions before this one made `payment_id` VARCHAR(255), one short of core's 256 characters: widened in
   * place (an online change: the length prefix already takes two bytes in utf8mb4). A no-op once wide.
   */
  private widen(): string {
    return `ALTER TABLE ${this.table.sql} MODIFY payment_id VARCHAR(256) NOT NULL`;
  }

  /** The inbox row, in the delivery's transaction. */
  record(key: string, fingerprint: string, record: InboxRecord): Statement {
    return {
      sql: `INSERT INTO ${this.table.sql} (\`key\`, fingerprint, payment_id, delivery_id, source, outcome, reason) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      values: inboxRowValues(key, fingerprint, record),
    };
  }

  /**
   * The inbox row in a transaction of its own (a rejection, after its delivery rolled back): kept as it is
   * if the key has a row already (a later delivery recorded first).
   */
  recordApart(key: string, fingerprint: string, record: InboxRecord): Statement {
    const insert = this.record(key, fingerprint, record);
    return { sql: `${insert.sql} ON DUPLICATE KEY UPDATE fingerprint = fingerprint`, values: insert.values };
  }

  /**
   * The lock slots of the ORM stores (`<table>_keys`): a fixed set of rows, one of which a delivery locks
   * (`FOR UPDATE NOWAIT`) in its client's own transaction. Row locks end with the transaction, so nothing
   * is held by a session that goes back to the ORM's pool (a `GET_LOCK` would be), and the rows exist
   * before any delivery, so taking one never waits (inserting a row per key would wait behind a holder).
   * Filled once, idempotent.
   */
  migrateSlots(): string[] {
    const hex = Array.from({ length: 16 }, (_, i) => `SELECT ${i} AS n`).join(' UNION ALL ');
    return [
      `CREATE TABLE IF NOT EXISTS ${this.table.keysSql} (
  slot INT NOT NULL,
  PRIMARY KEY (slot)
) ENGINE=InnoDB`,
      `INSERT IGNORE INTO ${this.table.keysSql} (slot) SELECT a.n * 4096 + b.n * 256 + c.n * 16 + d.n FROM (${hex}) a, (${hex}) b, (${hex}) c, (${hex}) d`,
    ];
  }

  /** The key's lock slot: a hash of table and key, so two keys share one only by chance (1 in `LOCK_SLOTS`). */
  slot(key: string): number {
    return createHash('sha256').update(`${this.table.name}:${key}`).digest().readUInt32BE(0) % LOCK_SLOTS;
  }

  /**
   * In the delivery's transaction: takes the key's slot without waiting (held -> the server answers a lock
   * error at once), then reads the inbox row. The read refers to the locked row, so it runs after the lock
   * (an uncorrelated one is evaluated once, before it), and InnoDB takes its snapshot then: it sees the
   * commit of whoever held the slot before. Were it ever to miss one, the inbox row's primary key still
   * refuses the second insert. No row: the slots were never made (`migrate()`).
   */
  claim(key: string): Statement {
    return {
      sql: `SELECT CONNECTION_ID() AS id, (SELECT i.fingerprint FROM ${this.table.sql} i WHERE i.\`key\` = ? AND s.slot IS NOT NULL) AS fingerprint FROM ${this.table.keysSql} s WHERE s.slot = ? FOR UPDATE NOWAIT`,
      values: [key, this.slot(key)],
    };
  }

  /**
   * The claim on MariaDB, which also writes the inbox row (outcome `credited`: a rejection rolls it back and
   * records itself apart), so a fresh delivery sends nothing at commit but COMMIT. The key's own row is the
   * lock: the insert takes it, and finding it held by another transaction (a delivery under way, a prune)
   * answers a lock error at once, because the statement waits for no lock (`innodb_lock_wait_timeout = 0`
   * for it alone). A key with a committed row is a duplicate: the insert becomes an update of a column the
   * draft leaves empty, so the returned row says `existed` and carries the recorded fingerprint, and the
   * store rolls that update back with the transaction. The insert checks the committed row itself, not a
   * snapshot. A store on the reading claim (MySQL 8, or an older version of this package) inserts its row
   * before COMMIT, so the primary key still lets only one of two such deliveries commit.
   */
  take(key: string, fingerprint: string, draft: InboxDraft): Statement {
    return {
      sql:
        'SET STATEMENT innodb_lock_wait_timeout = 0 FOR ' +
        `INSERT INTO ${this.table.sql} (\`key\`, fingerprint, payment_id, delivery_id, source, outcome) ` +
        "VALUES (?, ?, ?, ?, ?, 'credited') ON DUPLICATE KEY UPDATE reason = 'existing' " +
        'RETURNING CONNECTION_ID() AS id, fingerprint, reason IS NOT NULL AS existed',
      values: [key, fingerprint, draft.paymentId, draft.deliveryId ?? null, draft.source],
    };
  }

  /**
   * The key's recorded fingerprint, read without a lock (a consistent read: it waits for no one), after a
   * claim met the key's lock. Its snapshot is taken by this read, after the lock was met, so it sees a row
   * committed before; one committed just after is missed, and the delivery answered 409 and retried.
   */
  recorded(key: string): Statement {
    return { sql: `SELECT fingerprint FROM ${this.table.sql} WHERE \`key\` = ?`, values: [key] };
  }

  /** Deletes up to `batch` rows older than `olderThanMs`; run until it deletes fewer. */
  pruneBatch(batch: number, olderThanMs: number): Statement {
    return {
      sql: `DELETE FROM ${this.table.sql} WHERE created_at < NOW(3) - INTERVAL ? MICROSECOND LIMIT ${batch}`,
      values: [Math.floor(olderThanMs) * 1000],
      write: true,
    };
  }
}
