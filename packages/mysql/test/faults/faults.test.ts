import { fileURLToPath } from 'node:url';
import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import { AppProcess } from '@service-pay/test-kit';
import {
  crashFor,
  FAULT_RETRY,
  type FaultRowsDatabase,
  faultRows,
  inboxByPayment,
  RESTART_RETRY,
} from '@service-pay/test-kit/fault-rows';
import { MariaDbServer } from '@service-pay/test-kit/mariadb';
import { Kysely, MysqlDialect } from 'kysely';
import mysqlCallbacks from 'mysql2';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe } from 'vitest';
import { MySqlStore } from '../../src/index.js';
import { KyselyStore } from '../../src/kysely.js';
import { MYSQL_CLIENTS } from '../clients/index.js';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Faults with real processes on MariaDB, the same rows as @service-pay/postgres's (@service-pay/test-kit's
 * faultRows): three Express apps sharing a MariaDB that this file starts itself, the simulator as the sender
 * with the spec's retries on a faster clock, and credits written through ctx.tx into a table WITHOUT a unique
 * constraint. (Row d, a COMMIT failing at a deferred constraint, has no MariaDB counterpart: InnoDB checks
 * constraints per statement.)
 */
const merchant = generateMerchant({ name: 'mysql-faults' });
let server: MariaDbServer;
let db: mysql.Pool;
let sim: Simulator;
let restartSim: Simulator;
let apps: AppProcess[] = [];

/** Which client of the registry the apps run (its id; test/fixtures/app.ts). */
let driver = 'mysql2';

const startApp = (instance: string, port = 0) =>
  AppProcess.start({
    cwd: packageDir,
    env: {
      DRIVER: driver,
      DATABASE_URL: server.url,
      WEBHOOK_SECRET: merchant.webhookSecret,
      INSTANCE: instance,
      PORT: String(port),
      HANDLER_TIMEOUT_MS: '1000',
    },
  });

const count = async (sql: string, params: unknown[] = []) =>
  Number(((await db.query(sql, params))[0] as Array<{ n: number }>)[0]?.n);

/** The fault rows' view of the MariaDB server of this file. */
const database = (): FaultRowsDatabase => ({
  plan: async (ids, fault) => {
    for (const id of ids) await db.query('insert into fault_plan values (?, ?)', [id, fault]);
  },
  credits: async (ids) => {
    const [rows] = await db.query(
      "select payment_id, count(*) as n from credits where payment_id in (?) and instance <> 'late' group by payment_id",
      [ids],
    );
    const counted = rows as Array<{ payment_id: string; n: number }>;
    const late = await count("select count(*) as n from credits where payment_id in (?) and instance = 'late'", [ids]);
    return { counts: new Map(counted.map((r) => [r.payment_id, Number(r.n)])), late };
  },
  inbox: async (ids) => {
    const [rows] = await db.query(
      'select payment_id, outcome, delivery_id from service_pay_inbox where payment_id in (?)',
      [ids],
    );
    return inboxByPayment(rows as Array<{ payment_id: string; outcome: string; delivery_id: string | null }>);
  },
  visibleCredits: (ids) => count('select count(*) as n from credits where payment_id in (?)', [ids]),
  sleepingStatements: () =>
    count("select count(*) as n from information_schema.processlist where info = 'select sleep(30)'"),
  crashAndRestart: () =>
    crashFor(
      () => server.kill(),
      () => server.startAgain(),
    ),
});

beforeAll(async () => {
  server = await MariaDbServer.start();
  db = mysql.createPool({ uri: server.url, connectionLimit: 4 });
  await db.query(
    'create table credits (id bigint auto_increment primary key, payment_id varchar(255) not null, instance varchar(64) not null)',
  );
  await db.query('create table fault_plan (payment_id varchar(255) primary key, fault varchar(32) not null)');
  await new MySqlStore({ pool: db }).migrate();
  await new KyselyStore({
    db: new Kysely<never>({ dialect: new MysqlDialect({ pool: mysqlCallbacks.createPool(server.url) }) }),
  }).migrate();
  sim = await startSimulator({ merchants: [merchant], retry: FAULT_RETRY, seed: 20261125 });
  restartSim = await startSimulator({ merchants: [merchant], retry: RESTART_RETRY, seed: 20261126 });
}, 120_000);

afterAll(async () => {
  await sim?.stop();
  await restartSim?.stop();
  await db?.end().catch(() => {});
  await server?.stop();
}, 60_000);

// The same rows for each client of the registry (clients/index.ts) that has an app: MySqlStore on mysql2 and
// the ORM stores, each taking the key as a row lock in its own transaction.
describe.each(MYSQL_CLIENTS.filter((c) => c.app !== undefined).map((c) => c.id))(
  '%s under faults, 3 app processes sharing one MariaDB',
  (name) => {
    const client = MYSQL_CLIENTS.find((c) => c.id === name);
    beforeAll(async () => {
      driver = name;
      apps = await Promise.all(['a', 'b', 'c'].map((instance) => startApp(instance)));
    }, 120_000);
    afterAll(async () => {
      await Promise.all(apps.map((app) => app.stop()));
    }, 60_000);

    faultRows({
      label: name,
      databaseName: 'MariaDB',
      crash: 'killed (-9)',
      database,
      sim: () => sim,
      restartSim: () => restartSim,
      apps: () => apps,
      startApp,
      commitFailure: false,
      appsMayDie: client?.appsMayDie === true,
    });
  },
);
