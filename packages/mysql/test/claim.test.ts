import type { ClaimResult, Statement } from '@service-pay/sql';
import { mysqlDialect } from '@service-pay/sql/mysql';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPool, uniqueName } from './support/database.js';

// The claim statement on the server, for both of its forms: the reading claim on the lock slots (MySQL 8,
// lacking INSERT ... RETURNING), and the writing claim on MariaDB, which takes the key by inserting its row.
// Each form must tell a free key, one another transaction holds, a recorded one (with the recorded
// fingerprint, whichever fingerprint the new delivery has); the reading one, slots never made. The two
// forms must also keep each other out, because stores of either may share a table while it is upgraded.

let pool: Pool;
const inbox = uniqueName('claim');
const table = mysqlDialect.table(inbox, 'MySqlStore');
const draft = { paymentId: 'p_claim', deliveryId: 'd_1', source: 'webhook' as const };

beforeAll(async () => {
  pool = await openPool();
  for (const { sql } of mysqlDialect.migrate(table).statements) await pool.query(sql);
});

afterAll(async () => {
  await pool.query(`drop table if exists ${table.sql}, ${table.keysSql}`);
  await pool.end();
});

/** A transaction on a connection of its own, ended by the caller. */
async function begun(): Promise<PoolConnection> {
  const connection = await pool.getConnection();
  await connection.query('START TRANSACTION');
  return connection;
}

async function claimOn(
  connection: PoolConnection,
  key: string,
  fingerprint: string,
  on: typeof table = table,
): Promise<ClaimResult> {
  const statement: Statement = mysqlDialect.claim(on, key, { fingerprint, draft });
  try {
    const [rows] = await connection.query(statement.sql, [...statement.values] as never);
    return mysqlDialect.readClaim(rows as Array<Record<string, unknown>>, on, 'MySqlStore');
  } catch (error) {
    if (mysqlDialect.isLockBusy(error)) return { state: 'held' };
    throw error;
  }
}

async function end(connection: PoolConnection, how: 'COMMIT' | 'ROLLBACK'): Promise<void> {
  await connection.query(how);
  connection.release();
}

const recorded = async (key: string) =>
  ((await pool.query(`select fingerprint, reason from ${table.sql} where \`key\` = ?`, [key]))[0] as unknown[]) ?? [];

describe.each([
  ['reading claim (every server)', false],
  ['writing claim (MariaDB)', true],
])('%s', (_, writes) => {
  // The store learns the form from its first claim; here each block sets it.
  beforeAll(() => {
    table.server.insertReturning = writes;
  });

  it('takes a free key, names its connection, and writes the row only in the writing form', async () => {
    const key = uniqueName('free');
    const a = await begun();
    const claim = await claimOn(a, key, 'fp1');
    const [[{ id }]] = (await a.query('select connection_id() as id')) as unknown as [[{ id: number }]];
    expect(claim).toEqual({ state: 'free', session: Number(id), written: writes });
    await end(a, 'ROLLBACK');
    expect(await recorded(key)).toEqual([]);
  });

  it('answers busy at once while another transaction holds the key', async () => {
    const key = uniqueName('held');
    const a = await begun();
    expect((await claimOn(a, key, 'fp1')).state).toBe('free');
    const b = await begun();
    expect(await claimOn(b, key, 'fp1')).toEqual({ state: 'held' });
    await end(b, 'ROLLBACK');
    await end(a, 'ROLLBACK');
  });

  it('sees the commit of the previous holder: completed, with the recorded fingerprint, and changes nothing', async () => {
    const key = uniqueName('done');
    const a = await begun();
    const first = await claimOn(a, key, 'fp1');
    if (first.state === 'free' && !first.written) {
      const row = mysqlDialect.record(table, key, 'fp1', { ...draft, outcome: 'credited' });
      await a.query(row.sql, [...row.values] as never);
    }
    await end(a, 'COMMIT');
    for (const fingerprint of ['fp1', 'fp2']) {
      const b = await begun();
      // Its answer need not wait for the ROLLBACK: a claim meeting its lock meanwhile reads the recorded row.
      expect(await claimOn(b, key, fingerprint)).toEqual({
        state: 'completed',
        fingerprint: 'fp1',
        answerBeforeRollback: true,
      });
      await end(b, 'ROLLBACK');
    }
    expect(await recorded(key)).toEqual([{ fingerprint: 'fp1', reason: null }]);
  });

  it('says the slots were never made when the keys table is empty (the reading form; the writing form needs none)', async () => {
    const other = mysqlDialect.table(uniqueName('noslots'), 'MySqlStore');
    other.server.insertReturning = writes;
    for (const { sql } of mysqlDialect.migrate(other).statements) await pool.query(sql);
    await pool.query(`delete from ${other.keysSql}`);
    const a = await begun();
    try {
      const statement = mysqlDialect.claim(other, 'k', { fingerprint: 'fp', draft });
      const [rows] = await a.query(statement.sql, [...statement.values] as never);
      const read = () => mysqlDialect.readClaim(rows as Array<Record<string, unknown>>, other, 'KyselyStore');
      if (writes) expect(read().state).toBe('free');
      else expect(read).toThrow(/KyselyStore: the lock slots table .*_keys has no rows/);
    } finally {
      await end(a, 'ROLLBACK');
      await pool.query(`drop table if exists ${other.sql}, ${other.keysSql}`);
    }
  });
});

it.each([
  ['writing', 'reading'],
  ['reading', 'writing'],
])(
  'a %s claim and a %s one on one key (a table shared while stores upgrade): the primary key lets one commit',
  async (first, second) => {
    const key = uniqueName('mixed');
    const claimWith = async (form: string) => {
      const connection = await begun();
      table.server.insertReturning = form === 'writing';
      return { connection, claim: await claimOn(connection, key, 'fp') };
    };
    const a = await claimWith(first);
    const b = await claimWith(second);
    // The reading claim takes a slot the writing one never locks, and does not see its uncommitted row.
    expect([a.claim.state, b.claim.state]).toEqual(['free', 'free']);
    const [writing, reading] = first === 'writing' ? [a, b] : [b, a];
    await end(writing.connection, 'COMMIT');
    const row = mysqlDialect.record(table, key, 'fp', { ...draft, outcome: 'credited' });
    await expect(reading.connection.query(row.sql, [...row.values] as never)).rejects.toMatchObject({ errno: 1062 });
    await end(reading.connection, 'ROLLBACK');
    expect(await recorded(key)).toHaveLength(1);
  },
);

it("learns the writing form from the server's version, asked once", async () => {
  const learning = mysqlDialect.table(inbox, 'MySqlStore');
  const probe = mysqlDialect.probe;
  if (probe === undefined) throw new Error('the MySQL dialect asks the server what it is');
  expect(probe.learned(learning)).toBe(false);
  expect(mysqlDialect.claim(learning, 'k', { fingerprint: 'fp', draft }).sql).toMatch(/^SELECT/);
  const [rows] = await pool.query(probe.statement(learning).sql);
  probe.learn(rows as Array<Record<string, unknown>>, learning);
  expect(probe.learned(learning)).toBe(true);
  const [[{ version }]] = (await pool.query('select version() as version')) as unknown as [[{ version: string }]];
  const mariadb = /mariadb/i.test(version);
  expect(mysqlDialect.claim(learning, 'k', { fingerprint: 'fp', draft }).sql).toMatch(
    mariadb ? /INSERT INTO/ : /^SELECT/,
  );
  // Without the row to write (a caller that passes no draft), the reading claim is the only form.
  expect(mysqlDialect.claim(learning, 'k').sql).toMatch(/^SELECT/);
});

it('knows which errors rolled the whole transaction back: a deadlock, no room for locks, and a lock wait timeout only where the server says so', async () => {
  const learning = mysqlDialect.table(inbox, 'MySqlStore');
  const probe = mysqlDialect.probe;
  const aborts = mysqlDialect.abortsTransaction;
  if (probe === undefined || aborts === undefined) throw new Error('the MySQL dialect learns what ends a transaction');
  const [rows] = await pool.query(probe.statement(learning).sql);
  probe.learn(rows as Array<Record<string, unknown>>, learning);
  // The shared server runs with the default: a lock wait timeout rolls back its statement alone.
  expect(learning.server.rollbackOnTimeout).toBe(false);
  const mysql2 = (errno: number) => Object.assign(new Error('server error'), { errno });
  // Drizzle wraps the server's error; Prisma's adapter gives the number as text.
  const drizzle = (errno: number) => new Error('Failed query', { cause: mysql2(errno) });
  const prisma = (code: string) => ({ meta: { driverAdapterError: { cause: { originalCode: code } } } });
  for (const error of [mysql2(1213), drizzle(1213), prisma('1213'), mysql2(1206)]) {
    expect(aborts(error, learning)).toBe(true);
  }
  for (const error of [mysql2(1205), mysql2(1062), drizzle(1205), new Error('no code'), undefined]) {
    expect(aborts(error, learning)).toBe(false);
  }
  probe.learn([{ version: '10.11.6-MariaDB', rollback_on_timeout: 1 }], learning);
  expect(learning.server.rollbackOnTimeout).toBe(true);
  expect(aborts(mysql2(1205), learning)).toBe(true);
  expect(aborts(prisma('1205'), learning)).toBe(true);
});
