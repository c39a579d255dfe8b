import { fileURLToPath } from 'node:url';
import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import { Kysely, MysqlDialect } from 'kysely';
import mysqlCallbacks from 'mysql2';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The app-process helper of @service-pay/postgres's fault rows: the same processes, HOLDING protocol and
// restarts, here with this package's app (test/fixtures/app.ts).
import { AppProcess } from '../../../postgres/test/support/app-process.js';
import { MySqlStore } from '../../src/index.js';
import { KyselyStore } from '../../src/kysely.js';
import { MariaDbServer } from '../support/mariadb-server.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/app.ts', import.meta.url));

/**
 * Faults with real processes on MariaDB, as @service-pay/postgres runs them on PostgreSQL: three Express apps
 * with MySqlStore sharing a MariaDB that this file starts itself, the simulator as the sender with the spec's
 * retries on a faster clock, and credits written through ctx.tx into a table WITHOUT a unique constraint.
 * Each scenario prints one JSON line of figures and must end with 0 double and 0 lost. (PostgreSQL's row d,
 * a COMMIT failing at a deferred constraint, has no MariaDB counterpart: InnoDB checks constraints per
 * statement.)
 */
const merchant = generateMerchant({ name: 'mysql-faults' });
let server: MariaDbServer;
let db: mysql.Pool;
let sim: Simulator;
let apps: AppProcess[] = [];

/** Which store the apps run: MySqlStore on mysql2, or an ORM store (test/fixtures/app.ts). */
let driver = 'mysql2';

function appEnv(instance: string, port = 0): Record<string, string> {
  return {
    DRIVER: driver,
    DATABASE_URL: server.url,
    WEBHOOK_SECRET: merchant.webhookSecret,
    INSTANCE: instance,
    PORT: String(port),
    HANDLER_TIMEOUT_MS: '1000',
  };
}

const startApp = (instance: string, port = 0) => AppProcess.start(appEnv(instance, port), FIXTURE);

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
  sim = await startSimulator({
    merchants: [merchant],
    retry: { maxAttempts: 8, baseDelayMs: 200, factor: 2, timeoutMs: 5_000 },
    seed: 20261125,
  });
}, 120_000);

afterAll(async () => {
  await sim?.stop();
  await db?.end().catch(() => {});
  await server?.stop();
}, 60_000);

async function pay(paymentIds: string[], deliveries: number, urls = apps.map((a) => a.url)): Promise<void> {
  await Promise.all(
    paymentIds.map((id, i) =>
      sim.pay(id, {
        duplicates: deliveries - 1,
        concurrent: true,
        deliverTo: urls.map((_, k) => urls[(i + k) % urls.length] as string),
        ...(deliveries === 1 ? { deliverTo: [urls[i % urls.length] as string] } : {}),
      }),
    ),
  );
}

function createPayments(count: number, label: string): string[] {
  return Array.from(
    { length: count },
    (_, i) => sim.createPayment({ orderNo: `${label}-${i}-${Date.now()}`, notifyUrl: apps[0]!.url }).paymentId,
  );
}

async function plan(paymentIds: string[], fault: string): Promise<void> {
  for (const id of paymentIds) await db.query('insert into fault_plan values (?, ?)', [id, fault]);
}

/** Counts credits per payment and the sender's attempts, prints one JSON line, and returns it. */
async function figures(scenario: string, paymentIds: string[]) {
  await sim.waitForIdle({ timeoutMs: 90_000 });
  const [rows] = await db.query(
    "select payment_id, count(*) as n from credits where payment_id in (?) and instance <> 'late' group by payment_id",
    [paymentIds],
  );
  const [late] = await db.query("select 1 from credits where payment_id in (?) and instance = 'late'", [paymentIds]);
  const counts = new Map((rows as Array<{ payment_id: string; n: number }>).map((r) => [r.payment_id, Number(r.n)]));
  const attempts = paymentIds.flatMap((id) => sim.deliveries({ paymentId: id }).flatMap((d) => d.attempts));
  const codes = attempts.map((a) => {
    try {
      return String((JSON.parse(a.responseBody) as { error?: unknown }).error ?? '');
    } catch {
      return '';
    }
  });
  const statuses: Record<string, number> = {};
  attempts.forEach((a, i) => {
    const key = [a.status ?? a.outcome, codes[i]].filter(Boolean).join(' ');
    statuses[key] = (statuses[key] ?? 0) + 1;
  });
  const result = {
    scenario,
    payments: paymentIds.length,
    double: paymentIds.filter((id) => (counts.get(id) ?? 0) > 1).length + (late as unknown[]).length,
    lost: paymentIds.filter((id) => (counts.get(id) ?? 0) === 0).length,
    attempts: attempts.length,
    statuses,
  };
  console.log(JSON.stringify(result));
  return { ...result, codes };
}

// The same rows for each store: MySqlStore on mysql2 and the ORM stores, each taking the key as a row lock
// in its own transaction.
describe.each(['mysql2', 'kysely', 'drizzle', 'prisma'])(
  '%s under faults, 3 app processes sharing one MariaDB',
  (name) => {
    beforeAll(async () => {
      driver = name;
      apps = await Promise.all(['a', 'b', 'c'].map((instance) => startApp(instance)));
    }, 120_000);
    afterAll(async () => {
      await Promise.all(apps.map((app) => app.stop()));
    }, 60_000);

    it('a. 5 simultaneous deliveries of every payment over 3 processes: 0 double, 0 lost', async () => {
      const ids = createPayments(40, 'simultaneous');
      await pay(ids, 5);
      const f = await figures(`${name} a. 5 simultaneous deliveries x 3 processes`, ids);
      expect({ double: f.double, lost: f.lost }).toEqual({ double: 0, lost: 0 });
      expect(f.statuses['409 DELIVERY_IN_PROGRESS'] ?? 0).toBeGreaterThan(0);
    });

    it('b. an app SIGKILLed while its handler holds the transaction with the credit written: 0 double, 0 lost', async () => {
      const victim = apps[2] as AppProcess;
      const held = createPayments(4, 'killed');
      const others = createPayments(12, 'beside-kill');
      await plan(held, 'hold');
      await pay(held, 1, [victim.url]);
      await pay(others, 2);
      await victim.holdingAtLeast(held.length);
      const [before] = await db.query('select count(*) as n from credits where payment_id in (?)', [held]);
      expect(Number((before as Array<{ n: number }>)[0]?.n)).toBe(0);
      await victim.kill();
      apps[2] = await startApp('c2', victim.port);
      const f = await figures(`${name} b. app SIGKILLed holding the transaction`, [...held, ...others]);
      expect({ double: f.double, lost: f.lost }).toEqual({ double: 0, lost: 0 });
    });

    it('c. the MariaDB server killed (-9) and restarted while handlers run: 0 double, 0 lost, no app restart', async () => {
      const slow = createPayments(6, 'slow-at-crash');
      const others = createPayments(24, 'beside-crash');
      await plan(slow, 'slow');
      await pay(slow, 2);
      await pay(others, 2);
      await Promise.race(apps.map((app) => app.holdingAtLeast(1)));
      await server.kill();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await server.startAgain();
      let restarts = 0;
      const supervisor = setInterval(() => {
        apps.forEach((app, i) => {
          if (app.alive || app.restarting) return;
          app.restarting = true;
          restarts++;
          void startApp(`c${i}-restarted`, app.port).then((started) => {
            apps[i] = started;
          });
        });
      }, 100);
      const f = await figures(`${name} c. MariaDB killed and restarted`, [...slow, ...others]);
      clearInterval(supervisor);
      console.log(JSON.stringify({ scenario: `${name} c.`, appRestarts: restarts }));
      expect({ double: f.double, lost: f.lost }).toEqual({ double: 0, lost: 0 });
      expect(restarts).toBe(0);
    });

    it('e. handlers past their deadline (in the app, and inside SLEEP): rolled back, credited once later', async () => {
      const hung = createPayments(4, 'hang');
      const hungInSql = createPayments(4, 'hang-in-sql');
      await plan(hung, 'hang');
      await plan(hungInSql, 'hang-in-sql');
      await pay([...hung, ...hungInSql], 1);
      const f = await figures(`${name} e. handler past its deadline`, [...hung, ...hungInSql]);
      expect({ double: f.double, lost: f.lost }).toEqual({ double: 0, lost: 0 });
      expect(f.codes.filter((c) => c === 'HANDLER_TIMEOUT')).toHaveLength(hung.length + hungInSql.length);
      // The stuck statements were ended with their sessions, not left running with the keys.
      const [sleeping] = await db.query(
        "select count(*) as n from information_schema.processlist where info = 'select sleep(30)'",
      );
      expect(Number((sleeping as Array<{ n: number }>)[0]?.n)).toBe(0);
    });
  },
);
