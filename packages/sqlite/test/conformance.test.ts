import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { open } from './support/database.js';
import { marksFile } from './support/marks.js';

/**
 * Core's transactional conformance runs on every client in clients.test.ts. These are what SQLite's one
 * writer gives instead of its "keys are independent": a second key waits for the first delivery's commit.
 */
describe('SqliteStore on better-sqlite3: transactional conformance', () => {
  const file = marksFile(open);

  it('a second key answers in-progress at once while a delivery writes, and is claimed once it ends', async () => {
    const store = new SqliteStore({ database: file.db });
    const first = await store.begin('independent:a', 'fp');
    expect(first.state).toBe('claimed');
    expect(await store.begin('independent:b', 'fp')).toEqual({ state: 'in-progress', retryAfterMs: 1_000 });
    if (first.state === 'claimed') await first.session.rollback(new Error('done'));
    const second = await store.begin('independent:b', 'fp');
    expect(second.state).toBe('claimed');
    if (second.state === 'claimed') await second.session.rollback(new Error('done'));
  });

  it('a delivery on another connection (another process) answers in-progress at once, without blocking', async () => {
    const store = new SqliteStore({ database: file.db });
    const other = new SqliteStore({ database: file.app });
    const first = await store.begin('other-connection', 'fp');
    expect(first.state).toBe('claimed');
    file.app.pragma('busy_timeout = 60000');
    // With the connection's own busy timeout this would block the thread for a minute (statements are
    // synchronous) and the test would time out; the store asks without waiting, then restores it.
    expect((await other.begin('other-connection', 'fp')).state).toBe('in-progress');
    expect(Number(file.app.pragma('busy_timeout', { simple: true }))).toBe(60_000);
    file.app.pragma('busy_timeout = 5000');
    if (first.state === 'claimed') await first.session.rollback(new Error('done'));
  });
});
