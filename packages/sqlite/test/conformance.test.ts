import { type TransactionalWrites, transactionalStoreConformance } from '@service-pay/core/testing';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { open, scratchFolder } from './support/database.js';

describe('SqliteStore on better-sqlite3: transactional conformance', () => {
  const folder = scratchFolder();
  let db: Database.Database;
  let app: Database.Database;

  beforeAll(async () => {
    db = open(folder.file('shop.db'));
    app = open(folder.file('shop.db'));
    await new SqliteStore({ database: db }).migrate();
    app.exec('create table marks (marker text not null)');
  });
  afterAll(() => {
    db.close();
    app.close();
    folder.remove();
  });

  // No slowQuery: better-sqlite3 runs statements synchronously on the app's thread, so a long one blocks the
  // whole process (the deadline timer included) and nothing could interrupt it. The rollback case still
  // runs, with the handler holding the transaction between statements, as a handler awaiting an API does.
  const writes: TransactionalWrites<Database.Database> = {
    write: async (tx, marker) => {
      tx.prepare('insert into marks (marker) values (?)').run(marker);
    },
    count: async (marker) =>
      (app.prepare('select count(*) as n from marks where marker = ?').get(marker) as { n: number }).n,
  };
  // SQLite has one writer: a second key waits for the first delivery's commit (answered in-progress here,
  // tested below) instead of the suite's "keys are independent".
  for (const c of transactionalStoreConformance(() => new SqliteStore({ database: db }), writes)) {
    if (c.name === 'keys are independent') it.skip(`${c.name} (SQLite: one writer at a time; see below)`, c.run);
    else it(c.name, c.run);
  }

  it('a second key answers in-progress at once while a delivery writes, and is claimed once it ends', async () => {
    const store = new SqliteStore({ database: db });
    const first = await store.begin('independent:a', 'fp');
    expect(first.state).toBe('claimed');
    expect(await store.begin('independent:b', 'fp')).toEqual({ state: 'in-progress', retryAfterMs: 1_000 });
    if (first.state === 'claimed') await first.session.rollback(new Error('done'));
    const second = await store.begin('independent:b', 'fp');
    expect(second.state).toBe('claimed');
    if (second.state === 'claimed') await second.session.rollback(new Error('done'));
  });

  it('a delivery on another connection (another process) answers in-progress at once, without blocking', async () => {
    const store = new SqliteStore({ database: db });
    const other = new SqliteStore({ database: app });
    const first = await store.begin('other-connection', 'fp');
    expect(first.state).toBe('claimed');
    app.pragma('busy_timeout = 60000');
    // With the connection's own busy timeout this would block the thread for a minute (statements are
    // synchronous) and the test would time out; the store asks without waiting, then restores it.
    expect((await other.begin('other-connection', 'fp')).state).toBe('in-progress');
    expect(Number(app.pragma('busy_timeout', { simple: true }))).toBe(60_000);
    app.pragma('busy_timeout = 5000');
    if (first.state === 'claimed') await first.session.rollback(new Error('done'));
  });
});
