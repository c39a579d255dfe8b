import { describe, expect, it } from 'vitest';
import { mysqlDialect } from '../src/dialects/mysql.js';
import { sqliteDialect } from '../src/dialects/sqlite.js';
import { AutoMigration, MissingTableError, resultOf, rollBackInterrupting, tableNameParts } from '../src/index.js';

describe('rollBackInterrupting, the one escalation', () => {
  it('interrupts nothing when the rollback ends by itself', async () => {
    const calls: string[] = [];
    await rollBackInterrupting(
      async () => undefined,
      async (how) => void calls.push(how),
    );
    expect(calls).toEqual([]);
  });

  it('interrupts the statement, and ends the session only if that did not end the rollback', async () => {
    expect(await interruptionsUntil('session')).toEqual(['statement', 'session']);
  });

  it('stops at the statement when interrupting it lets the rollback end', async () => {
    expect(await interruptionsUntil('statement')).toEqual(['statement']);
  });

  it('tells a late interruption that the rollback is over (the connection may be lent again)', async () => {
    let settle = () => {};
    const seen: boolean[] = [];
    let late: Promise<void> | undefined;
    await rollBackInterrupting(
      () => new Promise<void>((resolve) => (settle = resolve)),
      async (how, wanted) => {
        seen.push(wanted());
        if (how !== 'statement') return;
        // Waits past the rollback's end, as one queued behind a full pool does.
        let lent = () => {};
        late = new Promise<void>((resolve) => (lent = resolve)).then(() => void seen.push(wanted()));
        settle();
        setTimeout(lent, 0);
        return late;
      },
    );
    await late;
    expect(seen).toEqual([true, false]);
  });
});

describe("MySQL's interruption", () => {
  const plan = (how: 'statement' | 'session') => {
    const made = mysqlDialect.interrupt(42, how);
    if (made === undefined || !('look' in made)) throw new Error('expected a look first');
    return made;
  };
  const running = { ID: 42, COMMAND: 'Query', QUERY_ID: 9001 };

  it('looks at the connection first, on the interrupting one', () => {
    expect(plan('statement').look).toEqual({
      sql: 'SELECT * FROM information_schema.PROCESSLIST WHERE ID = ?',
      values: [42],
    });
  });

  it("stops the very statement it saw on MariaDB, the connection's on MySQL", () => {
    expect(plan('statement').stop([running])).toEqual({ sql: 'KILL QUERY ID 9001', values: [] });
    expect(plan('statement').stop([{ ...running, QUERY_ID: 9001n }])).toEqual({
      sql: 'KILL QUERY ID 9001',
      values: [],
    });
    expect(plan('statement').stop([{ id: 42, command: 'Query', query_id: '9001' }])).toEqual({
      sql: 'KILL QUERY ID 9001',
      values: [],
    });
    const { QUERY_ID: _, ...mysql } = running;
    expect(plan('statement').stop([mysql])).toEqual({ sql: 'KILL QUERY ?', values: [42] });
  });

  it('stops nothing on a connection gone or idle, and ends a session that is there', () => {
    expect(plan('statement').stop([])).toBeUndefined();
    expect(plan('statement').stop([{ ...running, COMMAND: 'Sleep' }])).toBeUndefined();
    expect(plan('session').stop([])).toBeUndefined();
    expect(plan('session').stop([{ ...running, COMMAND: 'Sleep' }])).toEqual({ sql: 'KILL ?', values: [42] });
  });

  it('names no connection it was not given as a whole number', () => {
    expect(mysqlDialect.interrupt('42; KILL 1', 'statement')).toBeUndefined();
    expect(mysqlDialect.interrupt(1.5, 'session')).toBeUndefined();
  });
});

/** The interruptions sent to a rollback that ends only once `ending` was interrupted. */
async function interruptionsUntil(ending: 'statement' | 'session'): Promise<string[]> {
  const calls: string[] = [];
  let settle = () => {};
  const rollback = () => new Promise<void>((resolve) => (settle = resolve));
  await rollBackInterrupting(rollback, async (how) => {
    calls.push(how);
    if (how === ending) settle();
  });
  return calls;
}

describe('tableNameParts', () => {
  it('names the store it was given to', () => {
    expect(() => tableNameParts('bad-name', 'KyselyStore', { qualifier: 'schema', maxLength: 63 })).toThrow(
      /^KyselyStore: tableName must be "name" or "schema\.name"/,
    );
    expect(tableNameParts('billing.inbox', 'KyselyStore', { qualifier: 'schema', maxLength: 63 })).toEqual([
      'billing',
      'inbox',
    ]);
  });
});

describe('resultOf', () => {
  it('reads every client shape as rows and a count', () => {
    expect(resultOf([{ a: 1 }])).toEqual({ rows: [{ a: 1 }], affected: 1 });
    expect(resultOf({ rows: [], rowCount: 3 })).toEqual({ rows: [], affected: 3 });
    expect(resultOf({ rows: [], numAffectedRows: 2n })).toEqual({ rows: [], affected: 2 });
    expect(resultOf([{ affectedRows: 4 }, undefined])).toEqual({ rows: [], affected: 4 });
    expect(resultOf([[{ id: 1 }], [{ name: 'id' }]])).toEqual({ rows: [{ id: 1 }], affected: 1 });
  });
});

describe('AutoMigration', () => {
  it('migrates once for attempts that meet the missing table together, then tries again', async () => {
    let migrations = 0;
    let ready = false;
    const auto = new AutoMigration(true, async () => {
      migrations++;
      ready = true;
    });
    const attempt = async () => {
      if (!ready)
        throw new MissingTableError('S: the inbox table t does not exist; run await store.migrate() once at start-up.');
      return 'claimed';
    };
    expect(await Promise.all([auto.run(attempt), auto.run(attempt)])).toEqual(['claimed', 'claimed']);
    expect(migrations).toBe(1);
  });

  it('off: says how to turn it on, and migrates nothing', async () => {
    const auto = new AutoMigration(false, async () => {
      throw new Error('must not migrate');
    });
    await expect(
      auto.run(async () => {
        throw new MissingTableError('S: the inbox table t does not exist; run await store.migrate() once at start-up.');
      }),
    ).rejects.toThrow(/run await store\.migrate\(\) once at start-up, or leave autoMigrate on/);
  });
});

describe("the SQLite dialect's errors that end a transaction", () => {
  const table = sqliteDialect.table('service_pay_inbox', 'SqliteStore');
  const aborts = (error: unknown) => sqliteDialect.abortsTransaction?.(error, table);
  const sqlite = (code: string) => Object.assign(new Error('sqlite'), { code });

  it('a full disk, an I/O error, no memory, an interrupt, busy inside the transaction: ended, also wrapped', () => {
    for (const code of ['SQLITE_FULL', 'SQLITE_IOERR_WRITE', 'SQLITE_NOMEM', 'SQLITE_INTERRUPT', 'SQLITE_BUSY']) {
      expect(aborts(sqlite(code)), code).toBe(true);
      expect(aborts(new Error('Failed query', { cause: sqlite(code) })), code).toBe(true);
    }
  });

  it('a constraint, a syntax error or no code at all: the statement alone failed', () => {
    for (const error of [sqlite('SQLITE_CONSTRAINT_UNIQUE'), sqlite('SQLITE_ERROR'), new Error('x'), null, 'text']) {
      expect(aborts(error)).toBe(false);
    }
  });
});
