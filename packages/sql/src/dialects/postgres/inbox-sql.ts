import type { InboxDraft, InboxRecord } from '@service-pay/core';
import { quoteLiteral, quoteNullable } from './sql-text.js';
import type { TableName } from './table-name.js';

/** The savepoint taken right after the key: a rejection rolls back to it and keeps only the inbox row. */
const SAVEPOINT = 'service_pay_handler';

/**
 * Every statement the store sends, for one inbox table. Begin and commit are one message each (one round
 * trip): several statements in the simple protocol, with the values written as literals.
 */
export class InboxSql {
  constructor(readonly table: TableName) {}

  /**
   * Creates the table and its indexes (created_at for prune, payment_id for lookups) if missing; run inside a transaction. The advisory lock makes concurrent migrations (several
   * processes starting at once) take turns: `CREATE TABLE IF NOT EXISTS` alone can fail when two race.
   */
  migrate(): string {
    return this.migrateStatements().join(';\n');
  }

  /** `migrate` one statement at a time, for clients whose raw query takes one statement per call. */
  migrateStatements(): string[] {
    const t = this.table.sql;
    return [
      // Selected from, not selected: the lock function returns void, which some clients (Prisma) cannot read.
      `SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(hashtextextended(${quoteLiteral(`service-pay:migrate:${this.table.name}`)}, 0))) AS migration_lock`,
      `CREATE TABLE IF NOT EXISTS ${t} (
  key text PRIMARY KEY,
  fingerprint text NOT NULL,
  payment_id text NOT NULL,
  delivery_id text,
  source text NOT NULL CHECK (source IN ('webhook', 'reconciliation')),
  outcome text NOT NULL CHECK (outcome IN ('credited', 'rejected')),
  reason text,
  created_at timestamptz NOT NULL DEFAULT now()
)`,
      `CREATE INDEX IF NOT EXISTS ${this.table.createdAtIndexSql} ON ${t} (created_at)`,
      `CREATE INDEX IF NOT EXISTS ${this.table.paymentIdIndexSql} ON ${t} (payment_id)`,
      this.claimFunction(),
      this.takeFunction(),
    ];
  }

  /**
   * Opens the transaction and takes the key without waiting. Four statements, four results:
   * BEGIN; locked (true when this transaction now holds the key); the key's row if it was recorded before
   * (read after the lock, in a snapshot of its own); SAVEPOINT. The lock is a transaction-level advisory
   * lock on a 64-bit hash of table and key: it goes with the transaction, whatever ends it (commit,
   * rollback, a dropped connection, a crash).
   */
  begin(key: string): string {
    return `BEGIN;\n${this.lockAndRead(key)}`;
  }

  /**
   * `begin` without its BEGIN, for clients that open the transaction themselves (postgres.js `sql.begin`):
   * three statements, three results (locked with the backend's pid, the key's row, SAVEPOINT). The row is
   * read by a statement of its own, after the lock: in READ COMMITTED each statement sees what committed
   * before it started, so a row committed by the transaction that held the lock until a moment ago is seen.
   */
  lockAndRead(key: string): string {
    return `SELECT pg_try_advisory_xact_lock(hashtextextended(${quoteLiteral(`${this.table.name}:${key}`)}, 0)) AS locked, pg_backend_pid() AS pid;
${this.beginWithoutLock(key)}`;
  }

  /**
   * The claim as one function, for clients that send one statement per round trip (the ORM stores): the
   * lock, then the key's row, each statement in a snapshot of its own (a VOLATILE PL/pgSQL function takes
   * one per statement in READ COMMITTED, exactly as `lockAndRead`'s separate statements do), with the
   * backend's pid and the transaction's start (together they name this transaction in `pg_stat_activity`).
   * Same lock key as `lockAndRead`: every store on the table agrees.
   */
  private claimFunction(): string {
    return `CREATE OR REPLACE FUNCTION ${this.table.claimFunctionSql}(claim_key text, OUT locked boolean, OUT fingerprint text, OUT pid integer, OUT xact_us text)
LANGUAGE plpgsql VOLATILE AS $service_pay$
BEGIN
  locked := pg_try_advisory_xact_lock(hashtextextended(${quoteLiteral(`${this.table.name}:`)} || claim_key, 0));
  SELECT inbox.fingerprint INTO fingerprint FROM ${this.table.sql} AS inbox WHERE inbox.key = claim_key;
  pid := pg_backend_pid();
  xact_us := ((extract(epoch FROM now()) * 1000000)::bigint)::text;
END
$service_pay$`;
  }

  /**
   * The claim that also writes the inbox row, as one function: the lock; if taken, the row (outcome
   * `credited`, settled at commit: a rejection rolls it back and records itself apart) inserted unless the
   * key has one; if not inserted, the key's row read in a snapshot of its own (so a row committed by the
   * lock's previous holder is seen). Nothing waits: the lock is tried, and a key whose row is not yet
   * committed is always held by the transaction writing it.
   */
  private takeFunction(): string {
    return `CREATE OR REPLACE FUNCTION ${this.table.takeFunctionSql}(claim_key text, claim_fingerprint text, claim_payment_id text, claim_delivery_id text, claim_source text, OUT locked boolean, OUT inserted boolean, OUT fingerprint text, OUT pid integer, OUT xact_us text)
LANGUAGE plpgsql VOLATILE AS $service_pay$
BEGIN
  locked := pg_try_advisory_xact_lock(hashtextextended(${quoteLiteral(`${this.table.name}:`)} || claim_key, 0));
  inserted := false;
  IF locked THEN
    INSERT INTO ${this.table.sql} AS inbox (key, fingerprint, payment_id, delivery_id, source, outcome)
      VALUES (claim_key, claim_fingerprint, claim_payment_id, claim_delivery_id, claim_source, 'credited')
      ON CONFLICT (key) DO NOTHING;
    inserted := FOUND;
  END IF;
  IF NOT inserted THEN
    SELECT inbox.fingerprint INTO fingerprint FROM ${this.table.sql} AS inbox WHERE inbox.key = claim_key;
  END IF;
  pid := pg_backend_pid();
  xact_us := ((extract(epoch FROM now()) * 1000000)::bigint)::text;
END
$service_pay$`;
  }

  /** Calls the take function: one row (locked, inserted, fingerprint or null, pid, xact_us). */
  take(key: string, fingerprint: string, draft: InboxDraft): string {
    const args = [
      quoteLiteral(key),
      quoteLiteral(fingerprint),
      quoteLiteral(draft.paymentId),
      quoteNullable(draft.deliveryId),
      quoteLiteral(draft.source),
    ].join(', ');
    return `SELECT locked, inserted, fingerprint, pid, xact_us FROM ${this.table.takeFunctionSql}(${args})`;
  }

  /** Calls the claim function for `key`: one row (locked, fingerprint or null, pid, xact_us). */
  claim(key: string): string {
    return `SELECT locked, fingerprint, pid, xact_us FROM ${this.table.claimFunctionSql}(${quoteLiteral(key)})`;
  }

  /** The savepoint a rejection rolls back to, taken right after the claim. */
  static savepoint(): string {
    return `SAVEPOINT ${SAVEPOINT}`;
  }

  /** The key's row, then the savepoint (PGlite alone: the lock is held in the process, see `PGliteDriver`). */
  beginWithoutLock(key: string): string {
    return `SELECT fingerprint FROM ${this.table.sql} WHERE key = ${quoteLiteral(key)};
${InboxSql.savepoint()}`;
  }

  /**
   * The inbox row, after rolling back to the savepoint for a rejection. A plain INSERT: should a second
   * attempt ever have got past the lock (it cannot in READ COMMITTED; see the README for stricter levels),
   * the primary key fails its commit and nothing it wrote is kept.
   */
  record(key: string, fingerprint: string, record: InboxRecord): string {
    return this.recordStatements(key, fingerprint, record).join(';\n');
  }

  /** `record` one statement at a time. */
  recordStatements(key: string, fingerprint: string, record: InboxRecord): string[] {
    const insert = this.insert(key, fingerprint, record);
    return record.outcome === 'rejected' ? [`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`, insert] : [insert];
  }

  /**
   * The inbox row in a transaction of its own (a rejection, after its delivery rolled back): kept as it is
   * if the key has a row already (a later delivery recorded first).
   */
  recordApart(key: string, fingerprint: string, record: InboxRecord): string {
    return `${this.insert(key, fingerprint, record)} ON CONFLICT (key) DO NOTHING`;
  }

  /** The INSERT of one inbox row, its values written in as literals. */
  insert(key: string, fingerprint: string, record: InboxRecord): string {
    const values = [
      quoteLiteral(key),
      quoteLiteral(fingerprint),
      quoteLiteral(record.paymentId),
      quoteNullable(record.deliveryId),
      quoteLiteral(record.source),
      quoteLiteral(record.outcome),
      quoteNullable(record.reason),
    ].join(', ');
    return `INSERT INTO ${this.table.sql} (key, fingerprint, payment_id, delivery_id, source, outcome, reason) VALUES (${values})`;
  }

  /** Deletes up to `batch` rows older than `$1` milliseconds; run until it deletes fewer. */
  pruneBatch(batch: number): string {
    const t = this.table.sql;
    return `DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE created_at < now() - $1::bigint * interval '1 millisecond' LIMIT ${batch})`;
  }

  /**
   * `pruneBatch` with the age written in (clients without bound parameters in their raw query), answering
   * one row: `deleted`, how many rows went.
   */
  pruneBatchCounted(batch: number, olderThanMs: number): string {
    const t = this.table.sql;
    const age = Math.floor(olderThanMs);
    return `WITH gone AS (DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE created_at < now() - ${age}::bigint * interval '1 millisecond' LIMIT ${batch}) RETURNING 1) SELECT count(*)::int AS deleted FROM gone`;
  }
}
