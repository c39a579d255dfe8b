import type { PaymentPaidEvent } from '@service-pay/core';
import { samplePaymentPaidEvent, sendSigned, storeHandler } from '@service-pay/core/testing';
import { type SqlClient, SqlStore } from '@service-pay/sql';
import { mysqlDialect } from '@service-pay/sql/mysql';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mysql2Client } from '../src/clients/mysql2/mysql2.js';
import { openPool, uniqueName } from './support/database.js';

/**
 * A store that learned its server is MariaDB (the claim writes the inbox row with `INSERT ... RETURNING`)
 * keeps running when a failover puts MySQL 8, which lacks that statement, behind the same pool: the store
 * learns the server again and claims the way MySQL takes, in the same delivery. This machine has no MySQL
 * 8, so the switch is played by the client under the store, on the real MariaDB: once switched, it answers
 * the version as MySQL 8 does and refuses `INSERT ... RETURNING` as MySQL 8 does (a syntax error, 1064);
 * every other statement, the reading claim on the lock slots included, runs on the server.
 */
const SECRET = 'whsec_mysql_failover_tests_0123456789';
const quiet = { warn: () => {}, error: () => {} };
let pool: Pool;
const inbox = uniqueName('failover');
const credits = uniqueName('failover_credits');
let mysql8 = false;
const sent: string[] = [];

function mysql8After(client: SqlClient<PoolConnection>): SqlClient<PoolConnection> {
  return {
    ...client,
    query: async (tx, statement) => {
      sent.push(statement.sql);
      if (mysql8 && statement.sql.startsWith('SELECT VERSION()')) {
        return { rows: [{ version: '8.0.36', rollback_on_timeout: 0 }], affected: 1 };
      }
      if (mysql8 && / RETURNING /.test(statement.sql)) {
        throw Object.assign(new Error("You have an error in your SQL syntax near 'RETURNING"), { errno: 1064 });
      }
      return client.query(tx, statement);
    },
  };
}

class FailoverStore extends SqlStore<PoolConnection> {
  constructor() {
    super({
      store: 'MySqlStore',
      client: mysql8After(mysql2Client(pool, 'MySqlStore')),
      dialect: mysqlDialect,
      options: { tableName: inbox },
      scope: {},
    });
  }
}

/** The credits written for each of `events`, in order. */
async function creditCounts(events: PaymentPaidEvent[]): Promise<number[]> {
  const [rows] = await pool.query(`select payment_id, count(*) as n from ${credits} group by payment_id`);
  const counts = new Map((rows as Array<{ payment_id: string; n: number }>).map((r) => [r.payment_id, Number(r.n)]));
  return events.map((event) => counts.get(event.paymentId) ?? 0);
}

beforeAll(async () => {
  pool = await openPool();
  await pool.query(`create table ${credits} (id bigint auto_increment primary key, payment_id varchar(255) not null)`);
});
afterAll(async () => {
  await pool.query(`drop table if exists ${credits}, ${inbox}, ${inbox}_keys`);
  await pool.end();
});

it('a failover from MariaDB to MySQL 8 under a running store: learned again in the delivery that meets it, credited once', async () => {
  const store = new FailoverStore();
  await store.migrate();
  const handle = storeHandler<PoolConnection>({ store, secret: SECRET, logger: quiet }, async (paid, tx) => {
    await tx.query(`insert into ${credits} (payment_id) values (?)`, [paid.paymentId]);
  });
  const before = samplePaymentPaidEvent();
  expect((await sendSigned(handle, before, SECRET)).status).toBe(200);
  expect(sent.filter((sql) => / RETURNING /.test(sql))).toHaveLength(1);

  mysql8 = true;
  sent.length = 0;
  const after = samplePaymentPaidEvent();
  const answer = await sendSigned(handle, after, SECRET);
  expect(answer.status, answer.body).toBe(200);
  // Refused once, the server asked again, then the reading claim on the lock slots.
  expect(sent.filter((sql) => / RETURNING /.test(sql))).toHaveLength(1);
  expect(sent.filter((sql) => sql.startsWith('SELECT VERSION()'))).toHaveLength(1);
  expect(sent.some((sql) => /FOR UPDATE NOWAIT/.test(sql))).toBe(true);
  // Either side of the failover, a payment is credited once and its retry is a duplicate.
  for (const event of [before, after]) expect((await sendSigned(handle, event, SECRET)).body).toMatch(/duplicate/);
  expect(await creditCounts([before, after])).toEqual([1, 1]);
});

it('learns the writing claim only from MariaDB 10.5 on, whichever way the version is spelled', () => {
  const probe = mysqlDialect.probe;
  if (probe === undefined) throw new Error('the MySQL dialect asks the server what it is');
  const cases: Array<[string, boolean]> = [
    ['10.11.6-MariaDB-0+deb12u1', true],
    ['5.5.5-10.11.6-MariaDB', true],
    ['11.4.2-MariaDB', true],
    ['10.5.0-MariaDB', true],
    ['10.4.32-MariaDB', false],
    ['8.0.36', false],
    ['8.4.0-commercial', false],
    ['', false],
  ];
  for (const [version, writes] of cases) {
    const table = mysqlDialect.table('t_versions', 'MySqlStore');
    probe.learn([{ version, rollback_on_timeout: 0 }], table);
    expect(table.server.insertReturning, version).toBe(writes);
  }
});

it('forgets what it learned only for a syntax error of the writing claim', () => {
  const { probe } = mysqlDialect;
  if (probe?.unlearn === undefined) throw new Error('the MySQL dialect learns its server again after a failover');
  const table = mysqlDialect.table('t_unlearn', 'MySqlStore');
  const syntax = Object.assign(new Error('syntax'), { errno: 1064 });
  probe.learn([{ version: '8.0.36' }], table);
  // The reading claim already is MySQL's: nothing to forget.
  expect(probe.unlearn(syntax, table)).toBe(false);
  probe.learn([{ version: '10.11.6-MariaDB' }], table);
  expect(probe.unlearn(Object.assign(new Error('deadlock'), { errno: 1213 }), table)).toBe(false);
  expect(probe.learned(table)).toBe(true);
  expect(probe.unlearn(syntax, table)).toBe(true);
  expect(probe.learned(table)).toBe(false);
});
