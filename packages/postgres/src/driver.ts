import type { TransactionClaim } from '@service-pay/core';

/**
 * What `PostgresStore` asks of a database flavour (node-postgres, PGlite). One file per flavour; the store
 * itself only checks options and picks one.
 */
export interface Driver<Tx> {
  begin(key: string, fingerprint: string): Promise<TransactionClaim<Tx>>;
  migrate(): Promise<void>;
  prune(olderThanMs: number): Promise<number>;
}

/** `prune`'s `olderThanMs`, checked: a number of milliseconds >= 0, or a RangeError naming the store. */
export function pruneAge(options: unknown, store: string): number {
  const olderThanMs = (options as { olderThanMs?: unknown } | null)?.olderThanMs;
  if (typeof olderThanMs !== 'number' || !Number.isFinite(olderThanMs) || olderThanMs < 0) {
    throw new RangeError(
      `${store}.prune: olderThanMs must be a number of milliseconds >= 0, got ${JSON.stringify(olderThanMs)}.`,
    );
  }
  return olderThanMs;
}

/** Retry-After for a key another transaction holds: it does not say how long it will take. */
export const IN_PROGRESS_RETRY_MS = 1_000;

/** Rows deleted per statement by `prune`, so a large trim never holds many row locks at once. */
export const PRUNE_BATCH = 5_000;

/** The error a query through `ctx.tx` gets once its transaction has ended (committed, rolled back). */
export function endedError(): Error {
  return new Error(
    'PostgresStore: this delivery transaction has ended (committed, rolled back or past its deadline); ' +
      'ctx.tx cannot be used after onPaymentPaid returned or timed out.',
  );
}

/** A missing inbox table is a setup mistake: say the fix instead of "relation does not exist". */
export function explainError(error: unknown, tableName: string): unknown {
  const code = sqlState(error);
  if (code === '42P01') {
    return new Error(
      `PostgresStore: the inbox table ${tableName} does not exist; run await store.migrate() once at start-up.`,
      { cause: error },
    );
  }
  if (code === '42883' && /_claim\b/.test(describe(error))) {
    return new Error(
      `PostgresStore: the claim function of the inbox table ${tableName} does not exist (the table was made by an ` +
        'older version); run await store.migrate() at start-up, which adds it.',
      { cause: error },
    );
  }
  return error;
}

/**
 * The SQLSTATE of a database error, wherever the client put it: node-postgres, postgres.js, Kysely, Knex
 * and TypeORM on the error itself, Drizzle on its `cause`, Prisma in `meta.code` or only in its message.
 */
function sqlState(error: unknown): unknown {
  const e = error as { code?: unknown; cause?: { code?: unknown }; meta?: { code?: unknown } } | null;
  if (e?.meta?.code !== undefined) return e.meta.code;
  // Prisma 7's own code (P2010, raw query failed) is on the error; the database's only in its message.
  const prisma = /Code: `([0-9A-Z]{5})`/.exec(String((error as { message?: unknown } | null)?.message ?? ''));
  if (prisma !== null) return prisma[1];
  return e?.code ?? e?.cause?.code;
}

/** An error's message and its cause's, for telling what a SQLSTATE is about. */
function describe(error: unknown): string {
  const e = error as { message?: unknown; cause?: { message?: unknown } } | null;
  return `${String(e?.message ?? '')} ${String(e?.cause?.message ?? '')}`;
}

/**
 * Statements that would end or restart the delivery's transaction from inside the handler (BEGIN, COMMIT,
 * ROLLBACK, END, ABORT, START TRANSACTION, PREPARE TRANSACTION; savepoints are fine). An ORM's own
 * `transaction()` on `ctx.tx` sends them: COMMIT would commit the credit without the inbox row.
 */
export function endsTransaction(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  const match = /^\s*([A-Za-z]+)(?:\s+([A-Za-z]+))?/.exec(text);
  if (match === null) return false;
  const first = (match[1] as string).toLowerCase();
  const second = match[2]?.toLowerCase();
  if (first === 'begin' || first === 'commit' || first === 'end' || first === 'abort') return true;
  if (first === 'rollback') return second !== 'to';
  if (first === 'start' || first === 'prepare') return second === 'transaction';
  return false;
}

/** The error a transaction-control statement sent through `ctx.tx` gets. */
export function nestedTransactionError(): Error {
  return new Error(
    'PostgresStore: ctx.tx is already the delivery transaction; do not BEGIN, COMMIT or ROLLBACK through it ' +
      "(nor call an ORM's transaction() on it). Use SAVEPOINT for nested work; the store commits.",
  );
}
