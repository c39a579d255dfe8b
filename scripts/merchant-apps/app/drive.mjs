// The payment service's side of the check, run inside the fresh app folder: for each merchant program, make
// its tables, start it (its own process, a real Express server on 127.0.0.1), send every case twice (the
// first attempt and the sender's retry, same event and delivery id), then count the credits in a table
// without a unique constraint and read the inbox row. Writes results.json for check.mjs to judge.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';

const suffix = process.env.MERCHANT_SUFFIX;
const secret = 'whsec_merchant_apps_0123456789abcdef';
const urls = {
  postgres: process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  mysql: process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
  sqlite: `${process.cwd()}/shop-${suffix}.db`,
};
const credits = `merchant_credits_${suffix}`;
const only = process.env.MERCHANT_ONLY?.split(',');

// One merchant program per client (several setups of one program where the READMEs give more than one).
const APPS = [
  ['node-postgres', 'driver.ts', 'postgres', 'PostgresStore'],
  ['postgres.js (guardSql: README)', 'postgres-js.ts', 'postgres', 'PostgresJsStore'],
  ['postgres.js (plain instance)', 'postgres-js.ts', 'postgres', 'PostgresJsStore', { SQL_SETUP: 'plain' }],
  ['Drizzle (node-postgres)', 'drizzle-pg.ts', 'postgres', 'DrizzleStore'],
  ['Kysely (pg, pool given)', 'kysely.ts', 'postgres', 'KyselyStore'],
  ['Knex (pg)', 'knex.ts', 'postgres', 'KnexStore'],
  ['TypeORM (postgres)', 'typeorm.ts', 'postgres', 'TypeOrmStore'],
  ['Prisma (adapter-pg on a Pool: README)', 'prisma.ts', 'postgres', 'PrismaStore', { PRISMA_SETUP: 'pool' }],
  ['Prisma (adapter-pg from a URL)', 'prisma.ts', 'postgres', 'PrismaStore', { PRISMA_SETUP: 'url' }],
  ['mysql2', 'driver.ts', 'mysql', 'MySqlStore'],
  ['Kysely (mysql, README snippet)', 'kysely.ts', 'mysql', 'KyselyStore', { KYSELY_SETUP: 'readme' }],
  ['Kysely (mysql, pool given)', 'kysely.ts', 'mysql', 'KyselyStore', { KYSELY_SETUP: 'pool' }],
  ['Drizzle (mysql2)', 'drizzle-mysql.ts', 'mysql', 'DrizzleStore'],
  ['Knex (mysql2)', 'knex.ts', 'mysql', 'KnexStore'],
  ['TypeORM (mariadb)', 'typeorm.ts', 'mysql', 'TypeOrmStore'],
  ['Prisma (mariadb pool: README)', 'prisma.ts', 'mysql', 'PrismaStore', { PRISMA_SETUP: 'pool' }],
  ['Prisma (mariadb from a URL)', 'prisma.ts', 'mysql', 'PrismaStore', { PRISMA_SETUP: 'url' }],
  ['better-sqlite3', 'better-sqlite3.ts', 'sqlite', 'SqliteStore'],
  ['Kysely (better-sqlite3)', 'kysely.ts', 'sqlite', 'KyselyStore'],
]
  .map(([client, file, db, store, env]) => ({ client, file, db, store, env }))
  .filter((app) => only === undefined || only.some((name) => app.client.includes(name)));

/** One connection per database for the driver's own reads and DDL, with the same three calls each. */
async function openDatabases() {
  const pgClient = new pg.Client({ connectionString: urls.postgres });
  await pgClient.connect();
  const my = await mysql.createConnection(urls.mysql);
  const lite = new Database(urls.sqlite);
  lite.pragma('journal_mode = WAL');
  return {
    postgres: {
      exec: (sql) => pgClient.query(sql),
      rows: async (sql, ids) => (await pgClient.query(sql.replace('(?)', '(select unnest($1::text[]))'), [ids])).rows,
      drop: async () => {
        const like = `%\\_${suffix}%`;
        const fns = await pgClient.query(
          `select p.oid::regprocedure as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
           where n.nspname = current_schema() and p.proname like $1`,
          [like],
        );
        for (const { fn } of fns.rows) await pgClient.query(`drop function if exists ${fn} cascade`);
        const tables = await pgClient.query(
          'select tablename from pg_tables where schemaname = current_schema() and tablename like $1',
          [like],
        );
        for (const { tablename } of tables.rows) await pgClient.query(`drop table if exists "${tablename}" cascade`);
      },
      close: () => pgClient.end(),
    },
    mysql: {
      exec: (sql) => my.query(sql),
      rows: async (sql, ids) => (await my.query(sql, [ids]))[0],
      drop: async () => {
        const [tables] = await my.query(
          'select table_name as t from information_schema.tables where table_schema = database() and table_name like ?',
          [`%\\_${suffix}%`],
        );
        for (const { t } of tables) await my.query(`drop table if exists \`${t}\``);
      },
      close: () => my.end(),
    },
    sqlite: {
      exec: async (sql) => lite.exec(sql),
      rows: async (sql, ids) => lite.prepare(sql.replace('(?)', `(${ids.map(() => '?').join(', ')})`)).all(...ids),
      drop: async () => {},
      close: async () => lite.close(),
    },
  };
}

const CREDITS_DDL = {
  postgres: `create table ${credits} (id serial primary key, payment_id text not null, client text not null)`,
  mysql: `create table ${credits} (id int auto_increment primary key, payment_id varchar(255) not null, client varchar(64) not null)`,
  sqlite: `create table ${credits} (id integer primary key autoincrement, payment_id text not null, client text not null)`,
};

/** Starts one merchant program; resolves once it listens, with what it said so far and how to stop it. */
function startApp(app, inbox) {
  const child = spawn(process.execPath, ['--import', 'tsx', app.file], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      ...app.env,
      DB: app.db,
      DATABASE_URL: urls[app.db],
      CREDITS_TABLE: credits,
      INBOX_TABLE: inbox,
      SERVICE_WEBHOOK_SECRET: secret,
      CLIENT_LABEL: app.client.slice(0, 60),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const state = { logs: [], stderr: '', exited: undefined, cases: [], port: undefined };
  child.stderr.on('data', (chunk) => {
    state.stderr += chunk;
  });
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      state.exited = { code, signal };
      resolve();
    });
  });
  const listening = new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (line.startsWith('LOG ')) state.logs.push(JSON.parse(line.slice(4)));
      else if (line.startsWith('cases ')) state.cases = JSON.parse(line.slice(6));
      else if (line.startsWith('listening ')) {
        state.port = Number(line.slice(10));
        resolve();
      }
    });
    exited.then(() => reject(new Error(`exited before listening (${JSON.stringify(state.exited)})`)));
    setTimeout(() => reject(new Error('not listening after 90 s')), 90_000).unref();
  });
  const stop = async () => {
    if (state.exited === undefined) child.kill('SIGTERM');
    await exited;
  };
  return { state, listening, stop };
}

async function send(port, event, deliveryId) {
  const { body, headers } = signWebhook({ event, secret, deliveryId });
  try {
    const response = await fetch(`http://127.0.0.1:${port}/webhooks/service`, {
      method: 'POST',
      body,
      headers,
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    let answer;
    try {
      answer = JSON.parse(text);
    } catch {
      answer = { text };
    }
    return { status: response.status, error: answer.error, duplicate: answer.duplicate === true };
  } catch (error) {
    return { status: 0, error: `no answer: ${error.message}` };
  }
}

async function runApp(app, index, dbs) {
  const inbox = `mi${index}_${suffix}`;
  const result = { ...app, inbox, warnings: [], cases: [], crash: undefined, startMs: 0 };
  const started = Date.now();
  const running = startApp(app, inbox);
  try {
    await running.listening;
  } catch (error) {
    result.crash = `${error.message}\n${running.state.stderr.slice(-2000)}`;
    await running.stop();
    return result;
  }
  result.startMs = Date.now() - started;
  // The first delivery meets an inbox table nobody made (the program never calls migrate()).
  const names = ['empty database, no migrate()', ...running.state.cases];
  const sent = [];
  for (const name of names) {
    const event = samplePaymentPaidEvent({ orderNo: `${name}|${Math.random().toString(36).slice(2, 10)}` });
    const deliveryId = `dl_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
    const attempts = [];
    for (let i = 0; i < 2; i++) attempts.push(await send(running.state.port, event, deliveryId));
    sent.push({ name, paymentId: event.paymentId, attempts });
  }
  // Counted after every case was sent, so a write a case left running has had the other cases' time to land.
  const ids = sent.map((c) => c.paymentId);
  const db = dbs[app.db];
  const counts = new Map(
    (
      await db.rows(`select payment_id, count(*) as n from ${credits} where payment_id in (?) group by payment_id`, ids)
    ).map((r) => [r.payment_id, Number(r.n)]),
  );
  let inboxRows = new Map();
  try {
    inboxRows = new Map(
      (await db.rows(`select payment_id, outcome from ${inbox} where payment_id in (?)`, ids)).map((r) => [
        r.payment_id,
        r.outcome,
      ]),
    );
  } catch (error) {
    result.inboxError = error.message;
  }
  if (running.state.exited !== undefined) {
    result.crash = `exited during the cases (${JSON.stringify(running.state.exited)})\n${running.state.stderr.slice(-2000)}`;
  }
  await running.stop();
  result.warnings = [...running.state.stderr.matchAll(/\[SERVICE_PAY_UNGUARDED\] Warning: ([^\n]*)/g)].map((m) => m[1]);
  result.stderrTail = running.state.stderr.slice(-1500);
  for (const c of sent) {
    const logs = running.state.logs.filter((l) => l.paymentId === c.paymentId && l.level !== 'debug');
    result.cases.push({
      ...c,
      credits: counts.get(c.paymentId) ?? 0,
      inbox: inboxRows.get(c.paymentId),
      logs: logs.map((l) => ({ code: l.code, errCode: l.errCode, message: l.errMessage ?? l.message })),
    });
  }
  return result;
}

const dbs = await openDatabases();
const results = [];
try {
  for (const db of new Set(APPS.map((app) => app.db))) await dbs[db].exec(CREDITS_DDL[db]);
  for (const [index, app] of APPS.entries()) {
    const started = Date.now();
    const result = await runApp(app, index, dbs);
    result.ms = Date.now() - started;
    results.push(result);
    console.log(`${app.client}: ${result.crash === undefined ? 'ran' : 'CRASHED'} in ${result.ms} ms`);
  }
} finally {
  for (const db of Object.values(dbs)) await db.drop();
  for (const db of Object.values(dbs)) await db.close();
}
writeFileSync('results.json', JSON.stringify(results, null, 2));
