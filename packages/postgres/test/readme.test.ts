import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, openPool } from './support/database.js';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const schema = `readme_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

async function blocks(): Promise<RegExpMatchArray[]> {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  return [...readme.matchAll(/```(\w+)\n([\s\S]*?)```/g)];
}

describe('README', () => {
  let dir: string;
  beforeAll(async () => {
    // Inside the package, so '@service-pay/postgres' and 'pg' resolve as they would in an app.
    dir = await mkdtemp(join(packageDir, '.readme-'));
    const pool = await openPool();
    await pool.query(
      `create schema ${schema}; create table ${schema}.orders (order_no text primary key, paid boolean not null default false); insert into ${schema}.orders values ('readme-1', false)`,
    );
    await pool.end();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    const pool = await openPool();
    await pool.query(`drop schema if exists ${schema} cascade`);
    await pool.end();
  });

  it('opens with the install command, then a quick start of at most 10 lines', async () => {
    const [install, quickStart] = await blocks();
    expect(install?.[2]?.trim()).toBe('npm install @service-pay/postgres @service-pay/core pg');
    expect(quickStart?.[1]).toBe('ts');
    expect(quickStart?.[2]?.trim().split('\n').length).toBeLessThanOrEqual(10);
  });

  it('type-checks and runs the quick start as written: a signed delivery marks the order paid, once', async () => {
    const quickStart = (await blocks())[1]?.[2] ?? '';
    await writeFile(join(dir, 'quick-start.ts'), quickStart);
    await writeFile(
      join(dir, 'deliver.ts'),
      `import { signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { handle } from './quick-start.js';
const event = samplePaymentPaidEvent({ orderNo: 'readme-1' });
for (let i = 0; i < 2; i++) {
  const { body, headers } = signWebhook({ event, secret: process.env.SERVICE_WEBHOOK_SECRET! });
  const answer = await handle({ method: 'POST', headers, rawBody: body });
  console.log(answer.status, answer.body);
}
process.exit(0);
`,
    );
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: '../tsconfig.json', include: ['*.ts'], compilerOptions: { noEmit: true } }),
    );
    await run(process.execPath, [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', dir], {
      timeout: 60_000,
    }).catch((error: { stdout?: string }) => {
      throw new Error(`the quick start does not type-check:\n${error.stdout}`);
    });
    const url = `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(dir, 'deliver.ts')], {
      cwd: packageDir,
      env: { ...process.env, DATABASE_URL: url, SERVICE_WEBHOOK_SECRET: 'whsec_readme_0123456789' },
      timeout: 30_000,
    });
    expect(stdout.trim().split('\n')).toEqual(['200 {"received":true}', '200 {"received":true,"duplicate":true}']);
    const pool = await openPool();
    try {
      expect((await pool.query(`select paid from ${schema}.orders where order_no = 'readme-1'`)).rows).toEqual([
        { paid: true },
      ]);
      expect((await pool.query(`select outcome from ${schema}.service_pay_inbox`)).rows).toEqual([
        { outcome: 'credited' },
      ]);
    } finally {
      await pool.end();
    }
  });
});
