import type { ClaimResult, Statement } from '@service-pay/sql';
import { mysqlDialect } from '@service-pay/sql/mysql';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPool, uniqueName } from './support/database.js';

// The claim statement on the server, for both of its forms: the reading claim every server takes (and
// MySQL 8 keeps, lacking INSERT ... RETURNING), and the writing claim a store moves to once its first claim
// showed MariaDB. Each form must tell a free key, one another transaction holds, a recorded one (with the
// recorded fingerprint, whichever fingerprint the new delivery has) and slots never made.

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
      expect(await claimOn(b, key, fingerprint)).toEqual({ state: 'completed', fingerprint: 'fp1' });
      await end(b, 'ROLLBACK');
    }
    expect(await recorded(key)).toEqual([{ fingerprint: 'fp1', reason: null }]);
  });

  it('says the slots were never made when the keys table is empty', async () => {
    const other = mysqlDialect.table(uniqueName('noslots'), 'MySqlStore');
    other.server.insertReturning = writes;
    for (const { sql } of mysqlDialect.migrate(other).statements) await pool.query(sql);
    await pool.query(`delete from ${other.keysSql}`);
    const a = await begun();
    try {
      const statement = mysqlDialect.claim(other, 'k', { fingerprint: 'fp', draft });
      const [rows] = await a.query(statement.sql, [...statement.values] as never);
      expect(() => mysqlDialect.readClaim(rows as Array<Record<string, unknown>>, other, 'KyselyStore')).toThrow(
        /KyselyStore: the lock slots table .*_keys has no rows/,
      );
    } finally {
      await end(a, 'ROLLBACK');
      await pool.query(`drop table if exists ${other.sql}, ${other.keysSql}`);
    }
  });
});

it("learns the writing form from the first claim's answer on MariaDB", async () => {
  const learning = mysqlDialect.table(inbox, 'MySqlStore');
  expect(learning.server.insertReturning).toBeUndefined();
  expect(mysqlDialect.claim(learning, 'k', { fingerprint: 'fp', draft }).sql).toMatch(/^SELECT/);
  const a = await begun();
  expect((await claimOn(a, uniqueName('learn'), 'fp', learning)).state).toBe('free');
  await end(a, 'ROLLBACK');
  const [[{ version }]] = (await pool.query('select version() as version')) as unknown as [[{ version: string }]];
  const mariadb = /mariadb/i.test(version);
  expect(learning.server.insertReturning).toBe(mariadb);
  expect(mysqlDialect.claim(learning, 'k', { fingerprint: 'fp', draft }).sql).toMatch(mariadb ? /^INSERT/ : /^SELECT/);
  // Without the row to write (a caller that passes no draft), the reading claim is the only form.
  expect(mysqlDialect.claim(learning, 'k').sql).toMatch(/^SELECT/);
});
