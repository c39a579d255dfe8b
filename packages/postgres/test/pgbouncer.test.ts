import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebhookHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { DATABASE_URL, openPool, uniqueName } from './support/database.js';

/**
 * The app's read during a delivery runs in a read-only transaction of its own; behind PgBouncer in
 * transaction pooling mode one transaction is one server connection, so the next transaction there (another
 * client's write) must never inherit that mode. A PgBouncer of this test's own, in front of the shared
 * PostgreSQL, with two server connections: the delivery's transaction holds one, the read takes the other.
 */
const PGBOUNCER = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
})();
const SECRET = 'whsec_pgbouncer_read_only_0123456789';

/** A TCP port nobody listens on now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once PgBouncer answers a query on `url`, or rejects when it exits or `within` ms have passed. */
async function answering(url: string, child: ChildProcess, within: number): Promise<void> {
  const deadline = Date.now() + within;
  let last: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (error) {
      last = error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await client.end().catch(() => {});
    }
  }
  throw new Error(`pgbouncer did not answer within ${within} ms: ${String(last)}`);
}

describe.skipIf(PGBOUNCER === undefined)(
  'behind PgBouncer (transaction pooling): the read-only mode of a read never outlives it (skipped when the pgbouncer binary is not installed)',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'service-pay-pgbouncer-'));
    const marks = uniqueName('bouncer_marks');
    const inbox = uniqueName('bouncer_inbox');
    let child: ChildProcess;
    let bounced: string;
    let direct: pg.Pool;

    beforeAll(async () => {
      const server = new URL(DATABASE_URL);
      const port = await freePort();
      const database = server.pathname.slice(1);
      writeFileSync(
        join(dir, 'pgbouncer.ini'),
        [
          '[databases]',
          `${database} = host=${server.hostname} port=${server.port || 5432} dbname=${database} user=${decodeURIComponent(server.username || 'postgres')}`,
          '[pgbouncer]',
          'listen_addr = 127.0.0.1',
          `listen_port = ${port}`,
          'unix_socket_dir =',
          'auth_type = any',
          'pool_mode = transaction',
          'default_pool_size = 2',
          'max_client_conn = 50',
          `logfile = ${join(dir, 'pgbouncer.log')}`,
          `pidfile = ${join(dir, 'pgbouncer.pid')}`,
          'ignore_startup_parameters = extra_float_digits,options',
          // PgBouncer refuses to run as root; started as root it drops to this user, which writes its log here.
          ...(process.getuid?.() === 0 ? ['user = nobody'] : []),
        ].join('\n'),
      );
      chmodSync(dir, 0o777);
      child = spawn(PGBOUNCER as string, [join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
      child.once('error', () => {}); // an exit code, checked while waiting for it to answer, says what went wrong
      bounced = `postgres://${server.username || 'postgres'}@127.0.0.1:${port}/${database}`;
      await answering(bounced, child, 10_000);
      direct = await openPool({ max: 2 });
      await direct.query(`create table ${marks} (id serial primary key, marker text not null)`);
    });

    afterAll(async () => {
      await direct?.query(`drop table if exists ${marks}, ${inbox}`);
      await direct?.query(`drop function if exists ${inbox}_claim(text)`).catch(() => {});
      await direct?.end();
      if (child !== undefined && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    });

    it("the app's read in a delivery runs read-only; another client's write right after succeeds", async () => {
      const app = new pg.Pool({ connectionString: bounced, max: 4 });
      app.on('error', () => {});
      const other = new pg.Pool({ connectionString: bounced, max: 4 });
      other.on('error', () => {});
      try {
        const store = new PostgresStore({ pool: app, tableName: inbox });
        await store.migrate();
        const event = samplePaymentPaidEvent();
        let seen: unknown;
        const handle = createWebhookHandler({
          secret: SECRET,
          store,
          onPaymentPaid: async (paid, ctx) => {
            seen = (await app.query("select current_setting('transaction_read_only') as ro")).rows[0].ro;
            await (ctx.tx as pg.PoolClient).query(`insert into ${marks} (marker) values ($1)`, [paid.paymentId]);
          },
        });
        const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: 'dl_pgbouncer_read_only' });
        expect((await handle({ method: 'POST', headers, rawBody: body })).status).toBe(200);
        expect(seen).toBe('on');

        // Two transactions open at once take both of PgBouncer's server connections, the read's among them.
        const [a, b] = await Promise.all([other.connect(), other.connect()]);
        try {
          await Promise.all([a.query('begin'), b.query('begin')]);
          for (const [n, client] of [a, b].entries()) {
            expect((await client.query('show transaction_read_only')).rows[0].transaction_read_only).toBe('off');
            await client.query(`insert into ${marks} (marker) values ($1)`, [`after:${n}:${event.paymentId}`]);
          }
          await Promise.all([a.query('commit'), b.query('commit')]);
        } finally {
          a.release();
          b.release();
        }
        const counted = await direct.query(`select marker from ${marks} where marker like $1 order by marker`, [
          `%${event.paymentId}`,
        ]);
        expect(counted.rows.map((row) => row.marker)).toEqual([
          `after:0:${event.paymentId}`,
          `after:1:${event.paymentId}`,
          event.paymentId,
        ]);
      } finally {
        await app.end();
        await other.end();
      }
    });
  },
);
