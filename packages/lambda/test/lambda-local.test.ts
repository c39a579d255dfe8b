import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, testServers, untilAnswers } from '@service-pay/test-kit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LambdaHttpEvent, LambdaHttpResult } from '../src/index.js';
import { albEvent, functionUrlEvent, httpApiEvent, restApiEvent, SECRET, signedDelivery } from './fixtures/events.js';

// End to end through lambda-local 2.2 (a Lambda runtime emulator from npm), in its own process: its watch
// mode takes `{ "event": ... }` over HTTP and runs the function in test/fixtures/handler.cjs, the built
// package with a real PostgresStore on the machine's PostgreSQL.
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const DATABASE_URL = testServers().postgresUrl;
const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const CREDITS = `t_lambda_credits_${suffix}`;
const INBOX = `t_lambda_inbox_${suffix}`;

let emulator: ChildProcess;
let port: number;
let pool: pg.Pool;

/** One invocation through the emulator: the function's result, as lambda-local gives it back. */
async function invoke(event: LambdaHttpEvent): Promise<LambdaHttpResult> {
  const response = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ event }),
    signal: AbortSignal.timeout(15_000),
  });
  // lambda-local answers with the result's status and headers, and the result's body JSON-encoded again.
  return {
    statusCode: response.status,
    headers: Object.fromEntries(response.headers),
    body: JSON.parse(await response.text()) as string,
    isBase64Encoded: false,
  };
}

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  await pool.query(`create table ${CREDITS} (payment_id text not null, amount text not null)`);
  // No migrate() here: the function makes the inbox table on its first invocation, as the README shows.
  port = await freePort();
  emulator = spawn(
    process.execPath,
    [
      'node_modules/lambda-local/build/cli.js',
      '-l',
      'test/fixtures/handler.cjs',
      '-h',
      'handler',
      '-t',
      '10',
      '--watch',
      String(port),
      '-E',
      JSON.stringify({ DATABASE_URL, CREDITS_TABLE: CREDITS, INBOX_TABLE: INBOX, SERVICE_WEBHOOK_SECRET: SECRET }),
    ],
    { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const output: string[] = [];
  emulator.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  emulator.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  await untilAnswers(`http://127.0.0.1:${port}/`, {
    process: emulator,
    what: 'lambda-local',
    output: () => output.join(''),
    bound: { timeoutMs: 25_000 },
    init: { method: 'OPTIONS' },
  });
});

afterAll(async () => {
  emulator?.kill('SIGKILL');
  await pool?.query(`drop table if exists ${CREDITS}`);
  await pool?.query(`drop table if exists ${INBOX}`);
  await pool?.end();
});

const credits = async (paymentId: string) =>
  Number((await pool.query(`select count(*) from ${CREDITS} where payment_id = $1`, [paymentId])).rows[0].count);

describe('through lambda-local, with PostgresStore', () => {
  it('the first delivery on an empty database is credited: the function makes the inbox table', async () => {
    // Nothing but the function makes the table (no migrate() in beforeAll); the emulator's readiness probe
    // may already have been its first invocation.
    const d = signedDelivery();
    const first = await invoke(restApiEvent(d));
    expect([first.statusCode, JSON.parse(first.body)]).toEqual([200, { received: true }]);
    expect(await credits(d.event.paymentId)).toBe(1);
    const after = await pool.query('select to_regclass($1) as t', [INBOX]);
    expect(after.rows[0].t).not.toBeNull();
  });

  it.each([
    ['REST API', restApiEvent],
    ['HTTP API', httpApiEvent],
    ['Function URL (base64)', functionUrlEvent],
    ['ALB', albEvent],
  ] as const)(
    '%s: credited once over a duplicate and 3 concurrent retries; a bad signature 401',
    async (_kind, make) => {
      const d = signedDelivery();
      const first = await invoke(make(d));
      expect(first.statusCode).toBe(200);
      expect(JSON.parse(first.body)).toEqual({ received: true });
      const again = await Promise.all([1, 2, 3].map(() => invoke(make(signedDelivery(d.event)))));
      for (const answer of again) expect(JSON.parse(answer.body)).toEqual({ received: true, duplicate: true });
      expect(await credits(d.event.paymentId)).toBe(1);
      const forged = await invoke(make({ ...d, body: d.body.replace(d.event.orderNo, `${d.event.orderNo}x`) }));
      expect(forged.statusCode).toBe(401);
      expect(await credits(d.event.paymentId)).toBe(1);
    },
  );
});
