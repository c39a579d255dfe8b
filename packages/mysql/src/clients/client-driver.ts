import {
  guardTransaction,
  holdTransaction,
  type InboxRecord,
  type TransactionClaim,
  type TransactionSession,
} from '@service-pay/core';
import { inDeliveryOf } from '@service-pay/core/node';
import type { InboxSql, Statement } from '../inbox-sql.js';
import { endedError, endsTransaction, nestedTransactionError } from '../transaction-guard.js';

/** A result row as the clients hand them back. */
export type Row = Record<string, unknown>;

/**
 * What a store on an ORM or query builder needs of it: its own interactive transaction, and one bound
 * statement at a time, in that transaction or outside. One small adapter per client (kysely.ts,
 * drizzle.ts); everything else is shared here.
 */
export interface ClientAdapter<Tx> {
  /** The store's name, for messages (`KyselyStore`). */
  readonly store: string;
  /** Opens the client's own transaction around `work` (`db.transaction().execute(work)`, ...). */
  transaction(work: (tx: Tx) => Promise<void>): PromiseLike<unknown>;
  /** The rows of one statement (or its result header, for writes), run in `tx`. */
  query(tx: Tx, statement: Statement): Promise<Row[]>;
  /** The rows of one statement, run outside any delivery (autocommit). */
  queryOutside(statement: Statement): Promise<Row[]>;
  /** How many rows a write outside any delivery changed. */
  affectedOutside(statement: Statement): Promise<number>;
  /** Names of `tx`'s methods that take SQL text first (checked for BEGIN/COMMIT/ROLLBACK). */
  readonly rawTextMethods: readonly string[];
}

/** Retry-After for a key another transaction holds: it does not say how long it will take. */
const IN_PROGRESS_RETRY_MS = 1_000;
/** Rows deleted per statement by `prune`. */
const PRUNE_BATCH = 5_000;
/** How long a rollback may queue behind a running statement before that statement is killed. */
const ROLLBACK_GRACE_MS = 200;
/** How long a killed statement may take to end before its whole connection is killed. */
const KILL_QUERY_GRACE_MS = 1_000;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

/**
 * The driver of every ORM store on MySQL and MariaDB. Each attempt runs inside the client's own
 * transaction, held open (core's `holdTransaction`) until the pipeline commits or rolls back, so `ctx.tx`
 * is the client's transaction object and the shop's credit, written with its own ORM, commits with the
 * inbox row.
 *
 * The key is a row lock, not `GET_LOCK`: the ORM owns its connections and gives them back to its pool
 * when its transaction ends, and a session-scoped lock would go with the connection to its next user. A
 * row lock ends with the transaction, whatever happens. The rows are a fixed set of lock slots made by
 * `migrate()` (see `LOCK_SLOTS`), so taking one never waits. Round trips: a peek outside any transaction
 * (a recorded key is answered from it: one round trip for a duplicate), the client's BEGIN, the claim
 * (lock the key's slot without waiting, and read), the savepoint; then the inbox INSERT and the client's
 * COMMIT. The inbox row's primary key is the last guard: two transactions can never both insert it.
 */
export class MySqlClientDriver<Tx> {
  constructor(
    private readonly client: ClientAdapter<Tx>,
    private readonly inbox: InboxSql,
    /** Names this store in the handler's scope (see refuseOwnTransactions in @service-pay/core). */
    private readonly owner: object,
  ) {}

  async begin(key: string, fingerprint: string): Promise<TransactionClaim<Tx>> {
    let recorded: unknown;
    try {
      recorded = (await this.client.queryOutside(this.inbox.peek(key)))[0]?.fingerprint;
    } catch (error) {
      throw explainError(error, this.inbox.table.name, this.client.store);
    }
    // Recorded before: a committed row never changes, so no transaction is needed to say so.
    if (recorded !== null && recorded !== undefined) return { state: 'completed', fingerprint: String(recorded) };
    const held = await holdTransaction<Tx>((work) => this.client.transaction(work));
    let claim: Row | undefined;
    try {
      claim = (await this.client.query(held.tx, this.inbox.claim(key)))[0];
      if (claim !== undefined && isFree(claim)) await this.client.query(held.tx, rawStatement(this.inbox.savepoint()));
    } catch (error) {
      await held.rollback().catch(() => undefined);
      // Another transaction holds the key: answered at once, without waiting for it.
      if (isLockBusy(error)) return { state: 'in-progress', retryAfterMs: IN_PROGRESS_RETRY_MS };
      throw explainError(error, this.inbox.table.name, this.client.store);
    }
    if (claim !== undefined && isFree(claim)) {
      const connectionId = Number(claim.id);
      const session = new ClientSession(this.client, held, this.inbox, key, fingerprint, this.owner, (how) =>
        this.#kill(connectionId, how),
      );
      return { state: 'claimed', session };
    }
    // Nothing to do in this transaction; a failed rollback leaves nothing behind either (the server rolls
    // back what a dropped connection held).
    await held.rollback().catch(() => undefined);
    if (claim === undefined) {
      throw new Error(
        `${this.client.store}: the lock slots of ${this.inbox.table.name}_keys are missing; run await store.migrate() once at start-up.`,
      );
    }
    return { state: 'completed', fingerprint: String(claim.fingerprint) };
  }

  async migrate(): Promise<void> {
    await this.client.queryOutside(rawStatement(this.inbox.migrate()));
    for (const statement of this.inbox.migrateSlots()) await this.client.queryOutside(rawStatement(statement));
  }

  async prune(olderThanMs: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const count = await this.client.affectedOutside(this.inbox.pruneBatch(PRUNE_BATCH, olderThanMs));
      deleted += count;
      if (count < PRUNE_BATCH) return deleted;
    }
  }

  /**
   * Ends what the transaction's connection is running (`query`), or the connection itself (`connection`),
   * from another connection of the client's pool, so the client's queued ROLLBACK runs or the server rolls
   * back. Called only while the client's transaction has not settled: until then the ORM cannot have given
   * that connection to anyone else.
   */
  async #kill(connectionId: number, how: 'query' | 'connection'): Promise<void> {
    if (!Number.isSafeInteger(connectionId)) return;
    const sql = how === 'query' ? 'KILL QUERY ?' : 'KILL ?';
    await Promise.race([
      this.client.queryOutside({ sql, values: [connectionId] }).catch(() => undefined),
      pause(KILL_QUERY_GRACE_MS),
    ]);
  }
}

/** The key was taken by this transaction and has no inbox row: the delivery is this one's to run. */
function isFree(claim: Row): boolean {
  return claim.fingerprint === null || claim.fingerprint === undefined;
}

/** A statement without values. */
function rawStatement(sql: string): Statement {
  return { sql, values: [] };
}

/**
 * `FOR UPDATE NOWAIT` on a row another transaction holds: MySQL 8 answers ER_LOCK_NOWAIT (3572), MariaDB
 * ER_LOCK_WAIT_TIMEOUT (1205) at once.
 */
function isLockBusy(error: unknown): boolean {
  return serverCodes(error).some((code) => code === 3572 || code === 1205);
}

/** A missing table is a setup mistake: say the fix instead of "Table doesn't exist". */
function explainError(error: unknown, table: string, store: string): unknown {
  const prismaMissingTable = (error as { code?: unknown } | null)?.code === 'P2021';
  if (prismaMissingTable || serverCodes(error).includes(1146)) {
    return new Error(
      `${store}: the inbox table ${table} (or its ${table}_keys) does not exist; run await store.migrate() once at start-up.`,
      { cause: error },
    );
  }
  return error;
}

/**
 * The server's error numbers in an error as each client wraps it: mysql2's `errno` on the error, Drizzle's
 * on its `cause`, Prisma's in `meta.driverAdapterError.cause.code` (in a transaction) or only in its message
 * ("Raw query failed. Code: `1146`", outside one).
 */
function serverCodes(error: unknown): number[] {
  const codes: number[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number) => {
    if (value === null || typeof value !== 'object' || seen.has(value) || depth > 4) return;
    seen.add(value);
    const e = value as { errno?: unknown; code?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };
    for (const candidate of [e.errno, e.code]) if (typeof candidate === 'number') codes.push(candidate);
    const inMessage = /Code: `(\d+)`/.exec(String((value as { message?: unknown }).message ?? ''));
    if (inMessage !== null) codes.push(Number(inMessage[1]));
    visit(e.cause, depth + 1);
    visit(e.meta?.driverAdapterError, depth + 1);
  };
  visit(error, 0);
  return codes;
}

type Held<Tx> = Awaited<ReturnType<typeof holdTransaction<Tx>>>;

/** One held client transaction: the handler's guarded `ctx.tx`, then the inbox row and COMMIT, or ROLLBACK. */
class ClientSession<Tx> implements TransactionSession<Tx> {
  readonly tx: Tx;
  #ended = false;

  constructor(
    private readonly client: ClientAdapter<Tx>,
    private readonly held: Held<Tx>,
    private readonly inbox: InboxSql,
    private readonly key: string,
    private readonly fingerprint: string,
    private readonly owner: object,
    private readonly kill: (how: 'query' | 'connection') => Promise<void>,
  ) {
    this.tx = guardTransaction(held.tx, {
      ended: () => this.#ended,
      rawTextMethods: client.rawTextMethods,
      endsTransaction,
      endedError,
      nestedError: nestedTransactionError,
    });
  }

  run<T>(handler: () => Promise<T>): Promise<T> {
    return inDeliveryOf(this.owner, handler);
  }

  async commit(record: InboxRecord): Promise<void> {
    if (this.#ended) throw endedError();
    this.#ended = true;
    try {
      for (const statement of this.inbox.record(this.key, this.fingerprint, record)) {
        await this.client.query(this.held.tx, statement);
      }
    } catch (error) {
      await this.held.rollback().catch(() => undefined);
      throw error;
    }
    // The callback returns: the client sends COMMIT, and rejects if the server refused it.
    await this.held.commit();
  }

  async rollback(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    let settled = false;
    const rolledBack = this.held.rollback().then(
      () => (settled = true),
      () => (settled = true),
    );
    // The client queues its ROLLBACK behind a statement of the handler still running (a deadline hit
    // mid-statement): if it has not ended quickly, kill that statement, and if even that does not end it,
    // the connection. Either way the key is free at once and nothing the handler sent commits.
    const within = (ms: number) => Promise.race([rolledBack, pause(ms).then(() => false)]);
    if (await within(ROLLBACK_GRACE_MS)) return;
    if (!settled) await this.kill('query');
    if (await within(KILL_QUERY_GRACE_MS)) return;
    if (!settled) await this.kill('connection');
    await rolledBack;
  }
}
