import { fileURLToPath } from 'node:url';
import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import { AppProcess } from '@service-pay/test-kit';
import {
  crashFor,
  FAULT_RETRY,
  type FaultRowsDatabase,
  inboxByPayment,
  RESTART_RETRY,
  faultRows as sqlFaultRows,
} from '@service-pay/test-kit/fault-rows';
import { PostgresServer } from '@service-pay/test-kit/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import type { PostgresClient } from '../clients/index.js';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));

/** The fault rows' view of a PostgreSQL server of the test's own. */
function database(server: PostgresServer, db: pg.Pool): FaultRowsDatabase {
  return {
    plan: async (ids, fault) => {
      for (const id of ids) await db.query('insert into fault_plan values ($1, $2, 1)', [id, fault]);
    },
    credits: async (ids) => {
      const { rows } = await db.query<{ payment_id: string; n: number }>(
        `select payment_id, count(*)::int as n from credits where payment_id = any($1) and instance <> 'late' group by payment_id`,
        [ids],
      );
      const late = await db.query(`select 1 from credits where payment_id = any($1) and instance = 'late'`, [ids]);
      return { counts: new Map(rows.map((r) => [r.payment_id, r.n])), late: late.rowCount ?? 0 };
    },
    inbox: async (ids) => {
      const { rows } = await db.query<{ payment_id: string; outcome: string; delivery_id: string | null }>(
        'select payment_id, outcome, delivery_id from service_pay_inbox where payment_id = any($1)',
        [ids],
      );
      return inboxByPayment(rows);
    },
    visibleCredits: async (ids) =>
      (await db.query('select count(*)::int as n from credits where payment_id = any($1)', [ids])).rows[0].n,
    sleepingStatements: async () =>
      (await db.query(`select count(*)::int as n from pg_stat_activity where query = 'select pg_sleep(30)'`)).rows[0].n,
    crashAndRestart: () =>
      crashFor(
        () => server.stopImmediate(),
        () => server.startAgain(),
      ),
  };
}

/**
 * Faults with real processes: three Express apps (test/fixtures/app.ts) sharing one PostgreSQL that this
 * file starts itself, the simulator as the sender, and credits written through ctx.tx into a table WITHOUT a
 * unique constraint (the rows themselves: @service-pay/test-kit's faultRows). Run once per client of the
 * registry that has an app (faults.test.ts), the app's client chosen by `DRIVER` (the client's id).
 */
export function faultRows(client: PostgresClient): void {
  // Each client's server and apps live in its own block: they start after the block before has ended.
  describe(`${client.name} under faults, 3 app processes sharing one PostgreSQL`, () => {
    const driver = client.id;
    const merchant = generateMerchant({ name: 'postgres-faults' });
    let server: PostgresServer;
    let db: pg.Pool;
    let sim: Simulator;
    let restartSim: Simulator;
    let apps: AppProcess[] = [];

    const startApp = (instance: string, port = 0) =>
      AppProcess.start({
        cwd: packageDir,
        env: {
          DATABASE_URL: server.url,
          WEBHOOK_SECRET: merchant.webhookSecret,
          INSTANCE: instance,
          PORT: String(port),
          HANDLER_TIMEOUT_MS: '1000',
          DRIVER: driver,
        },
      });

    beforeAll(async () => {
      server = await PostgresServer.start();
      db = new pg.Pool({ connectionString: server.url, max: 4 });
      db.on('error', () => {}); // the database is stopped on purpose below
      await db.query(`
      create table credits (id bigserial primary key, payment_id text not null, instance text not null, at timestamptz not null default now());
      create table fault_plan (payment_id text primary key, fault text not null, times int not null);
      create table commit_bombs (payment_id text not null);
      create function commit_bomb() returns trigger language plpgsql as $$
        begin raise exception 'commit bomb for %', new.payment_id; end $$;
      create constraint trigger commit_bomb after insert on commit_bombs
        deferrable initially deferred for each row execute function commit_bomb();`);
      // The apps migrate nothing themselves here: one migrate, as a deploy step would.
      const { PostgresStore } = await import('../../src/index.js');
      await new PostgresStore({ pool: db }).migrate();
      sim = await startSimulator({ merchants: [merchant], retry: FAULT_RETRY, seed: 20261123 });
      restartSim = await startSimulator({ merchants: [merchant], retry: RESTART_RETRY, seed: 20261124 });
      apps = await Promise.all(['a', 'b', 'c'].map((name) => startApp(name)));
    }, 120_000);

    afterAll(async () => {
      await Promise.all(apps.map((app) => app.stop()));
      await sim?.stop();
      await restartSim?.stop();
      await db?.end().catch(() => {});
      await server?.stop();
    }, 60_000);

    sqlFaultRows({
      label: driver,
      databaseName: 'PostgreSQL',
      crash: 'stopped with -m immediate',
      database: () => database(server, db),
      sim: () => sim,
      restartSim: () => restartSim,
      apps: () => apps,
      startApp,
      commitFailure: true,
      appsMayDie: client.appsMayDie === true,
    });
  });
}
