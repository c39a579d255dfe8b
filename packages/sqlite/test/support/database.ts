import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TransactionalStore, TransactionSession } from '@service-pay/core';
import Database from 'better-sqlite3';

/** A folder of its own for one test file's database files, removed by `remove()`. */
export function scratchFolder(): { file: (name: string) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'service-pay-sqlite-'));
  return { file: (name) => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A connection as an app opens one: WAL, so readers do not wait for the delivery that writes. */
export function open(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  return db;
}

/**
 * The store for one conformance case, with a clean-up that rolls back every session the case left open
 * (rollback after an end is a no-op, so this checks that too).
 */
export function closingSessions<Tx>(store: TransactionalStore<Tx>): {
  store: TransactionalStore<Tx>;
  cleanup: () => Promise<void>;
} {
  const sessions: TransactionSession<Tx>[] = [];
  return {
    store: {
      kind: 'transactional',
      begin: async (key, fingerprint) => {
        const claim = await store.begin(key, fingerprint);
        if (claim.state === 'claimed') sessions.push(claim.session);
        return claim;
      },
    },
    cleanup: async () => {
      await Promise.all(sessions.map((session) => session.rollback(new Error('conformance case over'))));
    },
  };
}
