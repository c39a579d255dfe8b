import { describe, expect, it } from 'vitest';
import { PendingQueries, QueryNotAwaitedError, statementKind } from '../src/index.js';

describe('statementKind, the one classifier of the write guard', () => {
  it.each([
    'INSERT INTO credits (marker) VALUES ($1)',
    'insert into credits values (1)',
    '   \n\t UpDaTe orders SET paid = true',
    'delete from t',
    'MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = 1',
    'COPY t FROM STDIN',
    'replace into t values (1)',
    '-- a comment first\ninsert into t values (1)',
    '/* a block comment */ insert into t values (1)',
    '/* multi\n line */\n  DELETE FROM t',
    '(insert into t values (1))',
    'WITH moved AS (DELETE FROM a RETURNING *) INSERT INTO b SELECT * FROM moved',
    'with x as (update t set a = 1 returning id) select * from x',
    'SELECT * FROM orders WHERE id = 1 FOR UPDATE',
    'select * from orders for no key update',
    'select * from orders for share',
    'select * from orders for key share skip locked',
    'SELECT * FROM t LOCK IN SHARE MODE',
    'select 1; insert into t values (1)',
    // Not plainly a read: refused whatever it would do (default-deny).
    'call credit($1)',
    'do $$ begin insert into t values (1); end $$',
    'explain analyze insert into t values (1)',
    'EXPLAIN (ANALYZE) DELETE FROM t',
    'prepare p (text) as insert into t values ($1); execute p(1)',
    'execute p(1)',
    'set role admin',
    'vacuum t',
    'select 1 into t2',
    '/* /* */ */ insert into t values (1)',
    'select 5 # 3; insert into t values (1)',
    'select 1 as a$$; insert into t values (1); select 1 as b$$',
    "select '\\' as a; insert into t values (1); select 1 -- '",
    '/*! insert into t values (1) */',
    '/*M! insert into t values (1) */',
    'select 1 /*! , (select 1 from t for update) */',
    "select 'left open",
    '/* left open',
  ])('a write: %s', (text) => {
    expect(statementKind(text)).toBe('write');
  });

  it.each([
    'select * from credits',
    '  SELECT count(*) FROM t',
    "select 'insert into t values (1)' as text",
    'select "update", "delete" from t',
    'select `update` from t',
    '-- insert into t\nselect 1',
    '/* delete from t */ select 1',
    'with x as (select 1) select * from x',
    "select 'it''s; insert' from t",
    'select deleted_at, updated from t',
    'explain select 1',
    'show server_version',
    'values (1), (2)',
    'select credit($1)',
    'select 1;',
    '(select 1) union (select 2)',
    "select E'it\\'s' from t",
    '',
  ])('a read: %s', (text) => {
    expect(statementKind(text)).toBe('read');
  });

  it.each(['BEGIN', 'begin isolation level serializable', '  START TRANSACTION', 'select 1; begin'])(
    'opens a transaction: %s',
    (text) => {
      expect(statementKind(text)).toBe('transaction');
    },
  );

  it('takes what is not text (a prepared object without its text) as no plain read', () => {
    expect(statementKind(undefined)).toBe('write');
    expect(statementKind({ name: 'q1' })).toBe('write');
  });

  it('ends a transaction with COMMIT or ROLLBACK: nothing written by itself', () => {
    for (const text of ['COMMIT', 'rollback', 'end']) expect(statementKind(text)).toBe('end');
  });

  it('reads PostgreSQL dollar quotes as literals on PostgreSQL only', () => {
    expect(statementKind('select $$ delete from t $$', 'postgres')).toBe('read');
    expect(statementKind('select $tag$ update t $tag$', 'postgres')).toBe('read');
    expect(statementKind('select $$ delete from t $$')).toBe('write');
  });

  it('reads a text by the dialect given: # is a comment on MySQL, an operator on PostgreSQL', () => {
    expect(statementKind('select 5 # 3; insert into t values (1)', 'mysql')).toBe('read');
    expect(statementKind('select 5 # 3; insert into t values (1)', 'postgres')).toBe('write');
  });
});

/** A query object of a lazy client: it runs only when `then` is called, like Drizzle's or Knex's. */
class LazyQuery {
  ran = false;
  constructor(readonly sql: string) {}
  where(): this {
    return this;
  }
  returning(): LazyQuery {
    return new LazyQuery(`${this.sql} returning *`);
  }
  toSQL() {
    return { sql: this.sql };
  }
  // biome-ignore lint/suspicious/noThenProperty: a lazy query is a thenable, as the clients' are
  then<T>(resolve: (value: string) => T, reject?: (error: unknown) => unknown) {
    this.ran = true;
    return Promise.resolve(this.sql).then(resolve, reject);
  }
}

const lazyClient = () => ({
  insert: (table: string) => new LazyQuery(`insert into ${table} values (1)`),
  select: (table: string) => new LazyQuery(`select * from ${table}`),
  eager: (fail: boolean) => (fail ? Promise.reject(new Error('the eager query failed')) : Promise.resolve('ok')),
});

describe('PendingQueries: what the handler started through ctx.tx', () => {
  it('refuses a lazy write that was never awaited, naming the missing await and how it was built', async () => {
    const pending = new PendingQueries('TestStore');
    const tx = pending.wrap(lazyClient());
    tx.insert('credits');
    const failure = await pending.settle();
    expect(failure).toBeInstanceOf(QueryNotAwaitedError);
    expect((failure as QueryNotAwaitedError).code).toBe('QUERY_NOT_AWAITED');
    expect(failure?.message).toMatch(/ctx\.tx\.insert\(…\)/);
    expect(failure?.message).toMatch(/await/);
  });

  it('lets an awaited one, a chained one awaited at the end, and an un-awaited read go', async () => {
    const pending = new PendingQueries('TestStore');
    const tx = pending.wrap(lazyClient());
    await tx.insert('a');
    await tx.insert('b').where().returning();
    void tx.select('c');
    expect(await pending.settle()).toBeUndefined();
  });

  it('counts a query passed into another as used (a subquery)', async () => {
    const pending = new PendingQueries('TestStore');
    const tx = pending.wrap({ ...lazyClient(), use: (inner: LazyQuery) => inner.sql });
    const inner = tx.insert('a');
    expect(tx.use(inner)).toBe('insert into a values (1)');
    expect(await pending.settle()).toBeUndefined();
  });

  it('waits for an eager query before commit; one that failed unobserved fails the delivery', async () => {
    const pending = new PendingQueries('TestStore');
    const tx = pending.wrap(lazyClient());
    void tx.eager(true);
    const failure = await pending.settle();
    expect(failure?.message).toBe('the eager query failed');

    const observed = new PendingQueries('TestStore');
    const tx2 = observed.wrap(lazyClient());
    await tx2.eager(true).catch(() => 'handled by the handler');
    expect(await observed.settle()).toBeUndefined();
  });

  it('hands back an eager query that behaves as its promise, and never leaves an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      const pending = new PendingQueries('TestStore');
      const tx = pending.wrap(lazyClient());
      expect(await tx.eager(false)).toBe('ok');
      expect(await Promise.all([tx.eager(false), tx.eager(false)])).toEqual(['ok', 'ok']);
      expect(Object.prototype.toString.call(tx.eager(false))).toBe('[object Promise]');
      let finished = false;
      await expect(
        tx.eager(true).finally(() => {
          finished = true;
        }),
      ).rejects.toThrow('the eager query failed');
      expect(finished).toBe(true);
      expect(await tx.eager(true).then(undefined, () => 'caught by then')).toBe('caught by then');
      expect(await pending.settle()).toBeUndefined();

      // Never looked at: its failure is the delivery's, and Node is never told of a rejection nobody handled.
      const ignored = new PendingQueries('TestStore');
      void ignored.wrap(lazyClient()).eager(true);
      expect((await ignored.settle())?.message).toBe('the eager query failed');
      // Node reports an unhandled rejection once the microtasks of the turn have run: wait out a full turn.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });
});
