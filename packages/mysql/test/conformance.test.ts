import type { PoolConnection as CallbackConnection } from 'mysql2';
import type { Pool } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MySqlStore } from '../src/index.js';
import { openPool, uniqueName } from './support/database.js';

// Core's transactional conformance runs on every client of the registry (orm-stores.test.ts); here, what is
// particular to mysql2's MySqlStore.
describe('MySqlStore on MariaDB (mysql2)', () => {
  let pool: Pool;
  const inbox = uniqueName('conf_inbox');

  beforeAll(async () => {
    pool = await openPool();
    await new MySqlStore({ pool, tableName: inbox }).migrate();
  });
  afterAll(async () => {
    await pool.query(`drop table if exists ${inbox}, ${inbox}_keys`);
    await pool.end();
  });

  it('never gives a connection holding a key back to the pool, whichever way a delivery ended', async () => {
    // Two connections: the deliveries below take turns on them, and the deadline's KILL needs the other.
    const single = await openPool({ connectionLimit: 2 });
    try {
      const store = new MySqlStore({ pool: single, tableName: inbox });
      const keys = ['commit', 'reject', 'rollback', 'deadline'].map((k) => `lock:${k}:${uniqueName('k')}`);
      const [committed, rejected, rolledBack, deadline] = keys as [string, string, string, string];
      const claim = async (key: string) => {
        const c = await store.begin(key, 'fp');
        if (c.state !== 'claimed') throw new Error(`expected a claim, got ${c.state}`);
        return c.session;
      };
      await (await claim(committed)).commit({
        outcome: 'credited',
        paymentId: 'p',
        deliveryId: undefined,
        source: 'webhook',
      });
      expect((await store.begin(committed, 'fp')).state).toBe('completed');
      await (await claim(rejected)).commit({
        outcome: 'rejected',
        paymentId: 'p',
        deliveryId: undefined,
        source: 'webhook',
        reason: 'no',
      });
      await (await claim(rolledBack)).rollback(new Error('throw'));
      const late = await claim(deadline);
      const slow = late.tx.query('select sleep(5)').catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await late.rollback(new Error('deadline'));
      await slow;
      // Asked from another pool: no key is held by anyone any more (held would answer in-progress).
      const other = new MySqlStore({ pool, tableName: inbox });
      const states = [];
      for (const key of keys) {
        const again = await other.begin(key, 'fp');
        states.push(again.state);
        if (again.state === 'claimed') await again.session.rollback(new Error('checked'));
      }
      expect(states).toEqual(['completed', 'completed', 'claimed', 'claimed']);
    } finally {
      await single.end();
    }
  });

  it('ctx.tx refuses COMMIT/ROLLBACK/DDL, its own transaction calls, and any use once the delivery has ended', async () => {
    const store = new MySqlStore({ pool, tableName: inbox });
    const claim = await store.begin(`guard:${uniqueName('k')}`, 'fp');
    if (claim.state !== 'claimed') throw new Error(`expected a claim, got ${claim.state}`);
    const { tx } = claim.session;
    for (const text of [
      'COMMIT',
      'rollback',
      'BEGIN',
      'start transaction',
      'create table x (a int)',
      'set autocommit=1',
    ]) {
      expect(() => tx.query(text)).toThrow(/ctx\.tx is already the delivery transaction/);
    }
    expect(() => tx.commit()).toThrow(/ctx\.tx is already the delivery transaction/);
    expect(() => tx.release()).toThrow(/ctx\.tx is already the delivery transaction/);
    await tx.query('savepoint sp_inner'); // savepoints are fine
    await tx.query('rollback to savepoint sp_inner');
    // The same session's callback face (`tx.connection`) and the promise face it makes: the same rules.
    // Typed by mysql2 as the promise face; at run time it is the callback connection under it.
    const callbacks = tx.connection as unknown as CallbackConnection;
    expect(() => callbacks.query('COMMIT', () => {})).toThrow(/ctx\.tx is already the delivery transaction/);
    expect(() => callbacks.commit(() => {})).toThrow(/ctx\.tx is already the delivery transaction/);
    expect(() => callbacks.promise().query('rollback')).toThrow(/ctx\.tx is already the delivery transaction/);
    const [[row]] = (await callbacks.promise().query('select 1 as one')) as unknown as [[{ one: number }]];
    expect(row.one).toBe(1);
    await claim.session.rollback(new Error('done'));
    expect(() => tx.query('select 1')).toThrow(/this delivery transaction has ended/);
    expect(() => callbacks.query('insert into nowhere values (1)', () => {})).toThrow(
      /this delivery transaction has ended/,
    );
    expect(() => (tx.connection as unknown as CallbackConnection).promise()).toThrow(
      /this delivery transaction has ended/,
    );
  });

  it('prunes old rows, refuses a bad age, and explains a missing table', async () => {
    const store = new MySqlStore({ pool, tableName: inbox });
    const claim = await store.begin(`prune:${uniqueName('k')}`, 'fp');
    if (claim.state !== 'claimed') throw new Error('expected a claim');
    await claim.session.commit({ outcome: 'credited', paymentId: 'p_1', deliveryId: 'dl_1', source: 'webhook' });
    expect(await store.prune({ olderThanMs: 60_000 })).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await store.prune({ olderThanMs: 1 })).toBeGreaterThanOrEqual(1);
    await expect(store.prune({ olderThanMs: -1 })).rejects.toThrow(/olderThanMs must be a number/);
    const missing = new MySqlStore({ pool, tableName: uniqueName('missing'), autoMigrate: false });
    await expect(missing.begin('k', 'fp')).rejects.toThrow(/does not exist; run await store\.migrate\(\)/);
  });

  it('refuses what is not a mysql2 pool, and bad table names', () => {
    expect(() => new MySqlStore({ pool: {} as never })).toThrow(/options\.pool must be a mysql2 promise pool/);
    expect(() => new MySqlStore(undefined as never)).toThrow(/options\.pool must be a mysql2 promise pool/);
    expect(() => new MySqlStore({ pool, tableName: 'a-b' })).toThrow(/tableName must be/);
  });
});
