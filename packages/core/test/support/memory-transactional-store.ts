import type { InboxRecord, TransactionalStore, TransactionClaim, TransactionSession } from '../../src/index.js';

/** What a handler writes through `ctx.tx` in these tests: rows staged until the transaction commits. */
export interface TestTx {
  write(row: string): void;
}

/**
 * A transactional store in memory, with the semantics of `PostgresStore`: a key taken by an open transaction
 * answers in-progress at once, staged writes land only on commit, a rejected commit keeps only the inbox
 * row, and a rolled-back transaction refuses every later write (as a closed connection would). The
 * pipeline's transactional path is tested against it here, and against PostgreSQL in @service-pay/postgres.
 */
export class MemoryTransactionalStore implements TransactionalStore<TestTx> {
  readonly kind = 'transactional';
  readonly committed: string[] = [];
  readonly inbox = new Map<string, { fingerprint: string; record: InboxRecord }>();
  readonly #held = new Set<string>();
  failCommit: Error | undefined;
  beginDelayMs = 0;
  rolledBack = 0;

  async begin(key: string, fingerprint: string): Promise<TransactionClaim<TestTx>> {
    if (this.beginDelayMs > 0) await new Promise((r) => setTimeout(r, this.beginDelayMs));
    if (this.#held.has(key)) return { state: 'in-progress', retryAfterMs: 1_000 };
    const done = this.inbox.get(key);
    if (done !== undefined) return { state: 'completed', fingerprint: done.fingerprint };
    this.#held.add(key);
    return { state: 'claimed', session: this.#session(key, fingerprint) };
  }

  #session(key: string, fingerprint: string): TransactionSession<TestTx> {
    const staged: string[] = [];
    let open = true;
    const end = () => {
      open = false;
      this.#held.delete(key);
    };
    return {
      tx: {
        write: (row) => {
          if (!open) throw new Error('the transaction is over (connection closed)');
          staged.push(row);
        },
      },
      commit: async (record) => {
        if (!open) throw new Error('the transaction is over');
        if (this.failCommit) {
          end();
          throw this.failCommit;
        }
        if (record.outcome === 'credited') this.committed.push(...staged);
        this.inbox.set(key, { fingerprint, record });
        end();
      },
      rollback: async () => {
        if (open) this.rolledBack++;
        end();
      },
    };
  }
}
