import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { freePort, testDeadline, testServers, waitFor } from '@service-pay/test-kit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// What a user meets first: each published package's metadata, its tarball's files, and its README, which
// opens with the install command and a quick start of at most 10 lines that compiles as written (and, for
// the servers, runs and credits a signed delivery).
const root = fileURLToPath(new URL('../../', import.meta.url));
const rootEngines = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest).engines?.node;
const run = promisify(execFile);

interface Manifest {
  name: string;
  private?: boolean;
  license?: string;
  repository?: { type: string; url: string; directory: string };
  homepage?: string;
  keywords?: string[];
  engines?: { node?: string };
  sideEffects?: boolean;
  files?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const packages = readdirSync(join(root, 'packages'))
  .filter((dir) => existsSync(join(root, 'packages', dir, 'package.json')))
  .map((dir) => ({
    dir,
    path: join(root, 'packages', dir),
    manifest: JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as Manifest,
  }))
  .filter((p) => p.manifest.private !== true);

const ADAPTERS = ['express', 'fastify', 'next', 'nestjs', 'hono'];

/** The README's fenced code blocks, in order. */
function codeBlocks(readme: string): { lang: string; code: string; offset: number }[] {
  return [...readme.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1] ?? '',
    code: m[2] ?? '',
    offset: m.index ?? 0,
  }));
}

function quickStart(dir: string): string {
  const block = codeBlocks(readFileSync(join(root, 'packages', dir, 'README.md'), 'utf8')).find((b) => b.lang === 'ts');
  if (block === undefined) throw new Error(`packages/${dir}/README.md has no ts code block`);
  return block.code;
}

it('finds the published packages', () => {
  expect(packages.map((p) => p.dir).sort()).toEqual(
    [
      'client',
      'core',
      'dynamodb',
      'express',
      'fastify',
      'hono',
      'lambda',
      'mysql',
      'nestjs',
      'next',
      'opentelemetry',
      'postgres',
      'redis',
      'simulator',
      'sqlite',
    ].sort(),
  );
});

describe.each(packages)('packages/$dir', ({ dir, path, manifest }) => {
  it('has the metadata a registry page and a bundler read', () => {
    expect(manifest.license).toBe('MIT');
    expect(manifest.repository?.directory).toBe(`packages/${dir}`);
    expect(manifest.repository?.url).toMatch(/^git\+https:\/\/.+\.git$/);
    expect(manifest.homepage).toMatch(new RegExp(`/packages/${dir}#readme$`));
    expect(manifest.keywords?.length).toBeGreaterThan(0);
    // The Node.js lines CI runs (scripts/node-lines.mjs) are the root's `engines`: every package admits the same.
    expect(manifest.engines?.node).toBe(rootEngines);
    expect(typeof manifest.sideEffects).toBe('boolean');
    expect(manifest.files).toContain('LICENSE');
  });

  it('depends on our other packages by a workspace range, not an exact pin', () => {
    const ours = { ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.devDependencies };
    for (const [name, range] of Object.entries(ours)) {
      if (name.startsWith('@service-pay/')) expect(`${name}@${range}`).toBe(`${name}@workspace:^`);
    }
  });

  it("ships the root's MIT LICENSE", () => {
    expect(readFileSync(join(path, 'LICENSE'), 'utf8')).toBe(readFileSync(join(root, 'LICENSE'), 'utf8'));
  });

  it('opens its README with the install command, then a quick start of at most 10 lines', () => {
    const readme = readFileSync(join(path, 'README.md'), 'utf8');
    const [first, second] = codeBlocks(readme);
    expect(first?.lang).toBe('sh');
    expect(first?.code).toMatch(new RegExp(`^npm install (--save-dev )?${manifest.name}( |\\n)`));
    const firstHeading = readme.indexOf('\n## ', readme.indexOf('\n## Quick start') + 1);
    expect(first?.offset).toBeLessThan(firstHeading === -1 ? readme.length : firstHeading);
    expect(second?.lang).toBe('ts');
    expect(second?.code.trimEnd().split('\n').length).toBeLessThanOrEqual(10);
  });
});

describe('README quick starts and adapter exports, compiled as a user would', () => {
  const written: string[] = [];
  beforeAll(() => {
    for (const { dir, path, manifest } of packages) {
      // Inside the package, so its own name and its dev dependencies resolve as they would in an app.
      mkdirSync(join(path, '.quick-start'), { recursive: true });
      writeFileSync(join(path, '.quick-start/quick-start.ts'), quickStart(dir));
      written.push(`../packages/${dir}/.quick-start/quick-start.ts`);
      if (ADAPTERS.includes(dir)) {
        // One import serves: the core types a handler needs come from the adapter itself.
        writeFileSync(
          join(path, '.quick-start/exports.ts'),
          `import { PaymentRejectedError, WebhookError } from '${manifest.name}';
import type { HandlerOptions, PaidPayment, PaymentPaidContext, PaymentPaidEvent, WebhookErrorCode, WebhookLogger } from '${manifest.name}';

export const options: HandlerOptions = { secret: 'whsec_x', onPaymentPaid: (_e: PaymentPaidEvent, _c: PaymentPaidContext) => {} };
export const paid: PaidPayment | undefined = undefined;
export const logger: WebhookLogger = { warn: () => {}, error: () => {} };
export const code: WebhookErrorCode = new WebhookError('BODY_TOO_LARGE', 'x').code;
export const rejected = new PaymentRejectedError('x');
`,
        );
        written.push(`../packages/${dir}/.quick-start/exports.ts`);
      }
    }
    writeFileSync(
      join(root, 'test/.quick-start.tsconfig.json'),
      JSON.stringify({
        extends: '../tsconfig.base.json',
        // Nest's decorators, as every Nest app compiles them; the other quick starts are indifferent.
        compilerOptions: { experimentalDecorators: true, types: ['node'] },
        files: written,
      }),
    );
  });
  afterAll(() => {
    for (const { path } of packages) rmSync(join(path, '.quick-start'), { recursive: true, force: true });
    rmSync(join(root, 'test/.quick-start.tsconfig.json'), { force: true });
  });

  it('type-checks every quick start and every adapter export list', async () => {
    const tsc = join(root, 'node_modules/.bin/tsc');
    const result = await run(tsc, ['-p', join(root, 'test/.quick-start.tsconfig.json')], { cwd: root }).then(
      () => '',
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
    expect(result).toBe('');
    expect(written.length).toBe(packages.length + ADAPTERS.length);
  }, 120_000);

  // Regression: the quick start made a client with no 'error' listener and used it before 'ready'.
  describe('the redis quick start, run with tsx', () => {
    const start = (redisUrl: string) => {
      const dir = join(root, 'packages/redis/.quick-start');
      writeFileSync(
        join(dir, 'run.ts'),
        "const { handle } = await import('./quick-start.ts');\nconsole.log('quick start ready:', typeof handle);\nprocess.exit(0);\n",
      );
      return run(join(root, 'test/node_modules/.bin/tsx'), [join(dir, 'run.ts')], {
        cwd: join(root, 'packages/redis'),
        env: { ...process.env, REDIS_URL: redisUrl, SERVICE_WEBHOOK_SECRET: 'whsec_quick_start_0123456789' },
        timeout: 30_000,
      }).then(
        ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
        (error: { code?: number; stdout?: string; stderr?: string }) => ({
          code: error.code ?? -1,
          output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
        }),
      );
    };

    it('waits for ready, then builds the handler', async () => {
      const { code, output } = await start(testServers().redisUrl);
      expect(output).toContain('quick start ready: function');
      expect(code).toBe(0);
    }, 60_000);

    it('fails the start-up on a Redis that is not there, with no unhandled error event', async () => {
      const { code, output } = await start(`redis://127.0.0.1:${await freePort()}`);
      expect(code).not.toBe(0);
      expect(output).toContain('ECONNREFUSED');
      expect(output).not.toContain('Unhandled error event');
      expect(output).not.toContain('quick start ready');
    }, 60_000);
  });

  describe.each([
    { dir: 'express', runtime: 'tsx' },
    { dir: 'fastify', runtime: 'tsx' },
    { dir: 'hono', runtime: 'bun' },
  ])('the $dir quick start, run with $runtime', ({ dir, runtime }) => {
    let child: ChildProcess | undefined;
    // The quick start credits into the reader's own `credits` table: a schema of this run's, so the shared
    // test database's other tables are out of its way (its inbox table lands there too).
    const schema = `readme_${dir}_${process.pid}_${Date.now()}`;
    const admin = new pg.Pool({ connectionString: testServers().postgresUrl, max: 1 });
    const databaseUrl = new URL(testServers().postgresUrl);
    databaseUrl.searchParams.set('options', `-c search_path=${schema}`);
    beforeAll(async () => {
      await admin.query(`create schema ${schema}`);
      await admin.query(`create table ${schema}.credits (payment_id text, order_no text, amount numeric)`);
    });
    afterAll(async () => {
      if (child?.pid !== undefined && child.exitCode === null) {
        const exited = new Promise((resolve) => child?.once('exit', resolve));
        process.kill(-child.pid, 'SIGTERM');
        await exited;
      }
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    });

    it('serves the webhook and credits a signed delivery', async ({ task }) => {
      const deadline = testDeadline(task);
      const secret = 'whsec_quick_start_0123456789';
      const port = await freePort();
      let output = '';
      child = spawn(
        join(root, 'test/node_modules/.bin', runtime),
        [join(root, 'packages', dir, '.quick-start/quick-start.ts')],
        {
          cwd: join(root, 'packages', dir),
          env: {
            ...process.env,
            PORT: String(port),
            SERVICE_WEBHOOK_SECRET: secret,
            DATABASE_URL: String(databaseUrl),
          },
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        },
      );
      child.stdout?.on('data', (d) => {
        output += d;
      });
      child.stderr?.on('data', (d) => {
        output += d;
      });
      const event = samplePaymentPaidEvent();
      const { body, headers } = signWebhook({ event, secret });
      const started = child;
      // Until it listens (a refused connection is "not yet"); an exit on the way fails at once.
      const res = await waitFor(
        'the quick start to answer',
        async () => {
          if (started.exitCode !== null) return { exited: true } as const;
          return fetch(`http://127.0.0.1:${port}/webhooks/service`, { method: 'POST', headers, body });
        },
        { deadline },
        100,
      );
      if ('exited' in res) throw new Error(`the quick start exited:\n${output}`);
      expect([res.status, await res.text()]).toEqual([200, '{"received":true}']);
      // The 200 comes after the commit: the credit is there, once, and a redelivery adds none.
      const again = await fetch(`http://127.0.0.1:${port}/webhooks/service`, { method: 'POST', headers, body });
      expect([again.status, await again.text()]).toEqual([200, '{"received":true,"duplicate":true}']);
      const { rows } = await admin.query(`select order_no, amount::text from ${schema}.credits where payment_id = $1`, [
        event.paymentId,
      ]);
      expect(rows).toEqual([{ order_no: event.orderNo, amount: event.amount }]);
    }, 60_000);
  });
});

// The root README's support table says what CI tests: every `name x.y.z` in its last column must be a
// version this workspace installs (and so runs its tests against).
it("matches the root README's support table to the versions the tests install", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('## Support'), readme.indexOf('\n## ', readme.indexOf('## Support') + 1));
  const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| framework'));
  expect(rows.length).toBeGreaterThanOrEqual(10);
  const installed = readdirSync(join(root, 'node_modules/.pnpm'));
  const claims = rows.flatMap((row) => [...(row.split('|').at(-2) ?? '').matchAll(/(@?[\w./-]+) (\d+\.\d+\.\d+)/g)]);
  expect(claims.length).toBeGreaterThanOrEqual(12);
  for (const [, name, version] of claims) {
    const stored = `${name?.replace('/', '+')}@${version}`;
    expect(
      installed.some((dir) => dir === stored || dir.startsWith(`${stored}_`)),
      `${name} ${version}`,
    ).toBe(true);
  }
});
