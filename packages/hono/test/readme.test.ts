import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { freePort, testServers } from '@service-pay/test-kit';
import pg from 'pg';
import ts from 'typescript';
import { afterAll, expect, it } from 'vitest';

// The README's Node quick start, run as written: it installs @hono/node-server and listens (a bare
// `export default app` on Node starts nothing and the process exits).
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const children: ChildProcess[] = [];
// The quick start credits into the reader's own `credits` table: a schema of this run's, so the shared test
// database's other tables are out of its way (the store's inbox table lands there too).
const schema = `readme_hono_${process.pid}_${Date.now()}`;
const admin = new pg.Pool({ connectionString: testServers().postgresUrl, max: 1 });
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await admin.query(`drop schema if exists ${schema} cascade`);
  await admin.end();
});

it('the quick start installs what it imports, listens on PORT, and credits a signed delivery once', async () => {
  await admin.query(`create schema ${schema}`);
  await admin.query(`create table ${schema}.credits (payment_id text, order_no text, amount numeric)`);
  const databaseUrl = new URL(testServers().postgresUrl);
  databaseUrl.searchParams.set('options', `-c search_path=${schema}`);
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const install = /```sh\n(.*)\n```/.exec(readme)?.[1] ?? '';
  const source = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  // Every package the sample imports is in its install line.
  for (const [, name] of source.matchAll(/from '([^']+)'/g)) expect(install.split(' ')).toContain(name);

  const code = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const port = await freePort();
  const secret = 'whsec_readme_hono';
  // Run from the package folder, so `@service-pay/hono` resolves to this package's build.
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    cwd: packageDir,
    env: { ...process.env, PORT: String(port), SERVICE_WEBHOOK_SECRET: secret, DATABASE_URL: String(databaseUrl) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c));
  child.stderr?.on('data', (c: Buffer) => (output += c));

  const event = samplePaymentPaidEvent();
  const { body, headers } = signWebhook({ event, secret });
  const deliver = () =>
    fetch(`http://127.0.0.1:${port}/webhooks/service`, { method: 'POST', headers, body }).then(
      (res) => res.status,
      () => 0,
    );
  await expect.poll(deliver, { timeout: 15_000, interval: 100 }).toBe(200);
  expect(await deliver()).toBe(200); // a redelivery: a duplicate, not a second credit
  const { rows } = await admin.query(`select order_no, amount::text from ${schema}.credits where payment_id = $1`, [
    event.paymentId,
  ]);
  expect(rows, output).toEqual([{ order_no: event.orderNo, amount: event.amount }]);
  expect(child.exitCode).toBeNull(); // still listening
}, 30_000);
