import type { InboxDraft, InboxRecord } from '@service-pay/core';
import { inboxRowValues } from '../../inbox-row.js';
import { quoteLiteral, quoteNullable } from './sql-text.js';
import type { TableName } from './table-name.js';

/**
 * A timestamp in whole microseconds since 1970: how the claim functions answer their transaction's start
 * (`now()`) and how `interrupt` reads `pg_stat_activity.xact_start`, the same expression on both sides so
 * they compare equal. In double precision: cheaper than `extract`'s numeric, and exact to the microsecond
 * until 2106.
 *
 * @example
 * ```ts
 * microsecondsOf('xact_start'); // (date_part('epoch', xact_start) * 1000000)::bigint
 * ```
 */
export const microsecondsOf = (timestamp: string): string => `(date_part('epoch', ${timestamp}) * 1000000)::bigint`;

/**
 * Every statement the PostgreSQL dialect sends, for one inbox table, with the values written in as literals
 * (so any client's raw query runs them as they are).
 */
export class InboxSql {
  constructor(readonly table: TableName) {}

  /**
   * Creates the table and its indexes (created_at for prune, payment_id for lookups) and the claim functions
   * if missing, one statement at a time; run inside a transaction. The advisory lock makes concurrent
   * migrations (several processes starting at once) take turns: `CREATE TABLE IF NOT EXISTS` alone can fail
   * when two race.
   */
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
   * The claim as one function, so that it costs one statement on every client: the key's row, and only if
   * there is none, the lock, tried without waiting. A recorded row is final (only a prune removes it, and
   * then the key is new again), so a duplicate takes no lock: its transaction holds nothing another delivery
   * could meet, and the store answers without waiting for its ROLLBACK. The row is read again once the lock
   * is taken, in a snapshot of its own (a VOLATILE PL/pgSQL function takes one per statement in READ
   * COMMITTED): a row committed by the transaction that held the lock until a moment ago is seen. With the
   * backend's pid and the transaction's start (together they name this transaction in `pg_stat_activity`).
   * Same lock key as the take function: every store on the table agrees.
   */
  private claimFunction(): string {
    return `CREATE OR REPLACE FUNCTION ${this.table.claimFunctionSql}(claim_key text, OUT locked boolean, OUT fingerprint text, OUT pid integer, OUT xact_us text)
LANGUAGE plpgsql VOLATILE AS $service_pay$
BEGIN
  locked := false;
  SELECT inbox.fingerprint INTO fingerprint FROM ${this.table.sql} AS inbox WHERE inbox.key = claim_key;
  IF NOT FOUND THEN
    locked := ${this.tryLock()};
    IF locked THEN
      SELECT inbox.fingerprint INTO fingerprint FROM ${this.table.sql} AS inbox WHERE inbox.key = claim_key;
    END IF;
  END IF;
  pid := pg_backend_pid();
  xact_us := ${microsecondsOf('now()')}::text;
END
$service_pay$`;
  }

  /** The key's advisory lock for this table, tried without waiting (true when taken). */
  private tryLock(): string {
    return `pg_try_advisory_xact_lock(hashtextextended(${quoteLiteral(`${this.table.name}:`)} || claim_key, 0))`;
  }

  /**
   * The claim that also writes the inbox row, as one function answering one text (see `readTake`). The
   * key's lock tried without waiting and, taken, the row inserted (outcome `credited`, settled at commit: a
   * rejection rolls it back and records itself apart): a fresh delivery, the common case, costs the lock and
   * the insert and nothing else. An insert that meets a row (a duplicate, or a row committed by the lock's
   * previous holder) does nothing, and the row is read, in a snapshot of its own (a VOLATILE PL/pgSQL
   * function takes one per statement in READ COMMITTED). A lock held elsewhere is met by reading the row: a
   * recorded row is final (only a prune removes it), so whoever holds the lock, even a duplicate answered
   * before its ROLLBACK, the delivery is a duplicate; without a row, another delivery is under way. Nothing
   * waits: a key whose row is not yet committed is always held by the transaction writing it (or by a
   * rejection's insert of its own, a single statement).
   *
   * Why text, the lock first and the clock as a double: counted by valgrind on the server, a record of OUT
   * parameters cast to text cost 30k instructions a call, reading the row before the lock 32k and
   * `extract`'s numeric arithmetic 7k, together more than the hand-rolled `INSERT ... ON CONFLICT` a
   * merchant writes (about 470k for a whole fresh transaction); this form costs 20k less than that insert. A
   * duplicate pays the insert that does nothing (about as much as the hand-rolled one's).
   */
  private takeFunction(): string {
    return `CREATE OR REPLACE FUNCTION ${this.table.takeFunctionSql}(claim_key text, claim_fingerprint text, claim_payment_id text, claim_delivery_id text, claim_source text)
RETURNS text LANGUAGE plpgsql VOLATILE AS $service_pay$
DECLARE
  recorded text;
BEGIN
  IF ${this.tryLock()} THEN
    INSERT INTO ${this.table.sql} AS inbox (key, fingerprint, payment_id, delivery_id, source, outcome)
      VALUES (claim_key, claim_fingerprint, claim_payment_id, claim_delivery_id, claim_source, 'credited')
      ON CONFLICT (key) DO NOTHING;
    IF FOUND THEN
      RETURN 'w,' || pg_backend_pid() || ',' || ${microsecondsOf('now()')};
    END IF;
  END IF;
  SELECT inbox.fingerprint INTO recorded FROM ${this.table.sql} AS inbox WHERE inbox.key = claim_key;
  IF FOUND THEN
    RETURN 'r,' || recorded;
  END IF;
  RETURN 'h';
END
$service_pay$`;
  }

  /**
   * Calls the take function: one row, its one column `take` the function's answer: `w,<pid>,<xact_us>`
   * (the row written, the key this transaction's), `r,<fingerprint>` (recorded before) or `h` (another
   * transaction holds the key).
   */
  take(key: string, fingerprint: string, draft: InboxDraft): string {
    // One template, not an array joined: this runs on every delivery.
    return `SELECT ${this.table.takeFunctionSql}(${quoteLiteral(key)}, ${quoteLiteral(fingerprint)}, ${quoteLiteral(draft.paymentId)}, ${quoteNullable(draft.deliveryId)}, ${quoteLiteral(draft.source)}) AS take`;
  }

  /**
   * Calls the claim function for `key`: one row, its one column `claim` the function's row as text (locked,
   * fingerprint or null, pid, xact_us). Called in the select list, not selected from: a function in FROM is
   * a function scan that stores its row before the SELECT reads it, which cost the server more than the
   * call's own statements.
   */
  claim(key: string): string {
    return `SELECT ${this.table.claimFunctionSql}(${quoteLiteral(key)})::text AS claim`;
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
    const values = inboxRowValues(key, fingerprint, record).map(quoteNullable).join(', ');
    return `INSERT INTO ${this.table.sql} (key, fingerprint, payment_id, delivery_id, source, outcome, reason) VALUES (${values})`;
  }

  /**
   * Deletes up to `batch` rows older than `olderThanMs` (run until it deletes fewer), answering one row:
   * `deleted`, how many rows went.
   */
  pruneBatchCounted(batch: number, olderThanMs: number): string {
    const t = this.table.sql;
    const age = Math.floor(olderThanMs);
    return `WITH gone AS (DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE created_at < now() - ${age}::bigint * interval '1 millisecond' LIMIT ${batch}) RETURNING 1) SELECT count(*)::int AS deleted FROM gone`;
  }
}
