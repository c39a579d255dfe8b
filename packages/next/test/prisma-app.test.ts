import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import { freePort, killOnExit, testServers, untilAnswers } from '@service-pay/test-kit';
import { generatePrismaClient } from '@service-pay/test-kit/prisma';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { linkPackageInto } from './support/link-package.js';

// A newcomer's Next.js App Router app on Prisma 7 (test/prisma-app): its three files are the README's
// blocks (the README test checks they are equal), built once with `next build` (no database, no secret: the build machine has
// neither) and started with `next start` on a database of its own that has the app's credits table and
// no inbox table. The route's store runs no DDL (`autoMigrate: false`), so the first delivery is credited
// only if instrumentation.ts's register() made the table when the server started. The simulator pays
// over real HTTP, with a duplicate.
const appDir = fileURLToPath(new URL('./prisma-app/', import.meta.url));
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const nextBin = createRequire(import.meta.url).resolve('next/dist/bin/next');
const ADMIN_URL = testServers().postgresUrl;
const database = `t_next_prisma_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const merchant = generateMerchant();
let admin: pg.Pool;
let pool: pg.Pool | undefined;
let sim: Simulator | undefined;
let server: ChildProcess | undefined;
let baseUrl = '';
let output = '';

function run(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [nextBin, ...args], {
    cwd: appDir,
    // As deployed: production, not the `test` vitest sets.
    env: { ...process.env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.once('exit', killOnExit(child));
  child.stdout?.on('data', (d) => {
    output += d;
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  return child;
}

const inboxExists = async () =>
  (await (pool as pg.Pool).query(`select to_regclass('service_pay_inbox') as t`)).rows[0].t !== null;

beforeAll(async () => {
  linkPackageInto(new URL('./prisma-app/', import.meta.url));
  generatePrismaClient(`${appDir}prisma/schema.prisma`, packageDir);

  admin = new pg.Pool({ connectionString: ADMIN_URL, max: 1 });
  await admin.query(`create database ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  pool = new pg.Pool({ connectionString: url.href, max: 2 });
  // The app's own table, as its own migration would make it; no unique key on payment_id.
  await pool.query(
    'create table credits (id serial primary key, payment_id text not null, order_no text not null, amount text not null)',
  );

  const started = Date.now();
  const build = run(['build'], { DATABASE_URL: undefined, SERVICE_WEBHOOK_SECRET: undefined });
  const [code] = (await once(build, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`next build failed (${code}):\n${output}`);
  console.log(`next build (prisma-app): ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = run(['start', '-p', String(port), '-H', '127.0.0.1'], {
    DATABASE_URL: url.href,
    SERVICE_WEBHOOK_SECRET: merchant.webhookSecret,
  });
  // An App Router route exports POST only: Next.js answers a GET 405 once the server is up.
  await untilAnswers(`${baseUrl}/api/webhooks/service`, {
    process: server,
    what: 'next start',
    output: () => output,
    bound: { timeoutMs: 60_000 },
  });
  sim = await startSimulator({
    merchants: [merchant],
    retry: { maxAttempts: 3, baseDelayMs: 200, factor: 2, timeoutMs: 10_000 },
  });
}, 300_000);

afterAll(async () => {
  await sim?.stop();
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = once(server, 'exit');
    server.kill('SIGTERM');
    // `next start` waits for open connections on SIGTERM; don't let one stuck request hold the run.
    const timer = setTimeout(() => server?.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
  // pool.end() resolves once its clients are told to end, before their connections have closed: the forced
  // DROP below can end one first, and its server's error then arrives as the pool's 'error' event, which
  // with no listener is an uncaught exception (seen once in CI).
  pool?.on('error', () => {});
  await pool?.end();
  await admin?.query(`drop database if exists ${database} with (force)`);
  await admin?.end();
});

it('next start made the inbox table (instrumentation.ts), and the first payment is credited once over a duplicate', async () => {
  // Before any delivery: register() ran when the server started.
  expect(await inboxExists()).toBe(true);
  const simulator = sim as Simulator;
  const payment = simulator.createPayment({ notifyUrl: `${baseUrl}/api/webhooks/service` });
  await simulator.pay(payment.paymentId, { duplicates: 1 });
  await simulator.waitForIdle();
  const answers = simulator.deliveries({ paymentId: payment.paymentId }).flatMap((d) => d.attempts);
  expect(answers.map((a) => [a.status, a.responseBody])).toEqual([
    [200, '{"received":true}'],
    [200, '{"received":true,"duplicate":true}'],
  ]);
  const credits = await (pool as pg.Pool).query('select payment_id, amount from credits');
  expect(credits.rows).toEqual([{ payment_id: payment.paymentId, amount: payment.amount }]);
  // The README's setup gives the store the adapter's pool: nothing it cannot guard, so no start-up warning.
  expect(output).not.toContain('SERVICE_PAY_UNGUARDED');
}, 30_000);
