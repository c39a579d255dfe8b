import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readBody, startServer, type TestServer } from '@service-pay/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyApiRequest } from '../src/index.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const servers: TestServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('README', () => {
  it('opens with the install command, then a quick start of at most 10 lines', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const blocks = [...readme.matchAll(/```(\w+)\n([\s\S]*?)```/g)];
    // The command, then (until the first publish) a comment on where the package comes from today.
    expect(blocks[0]?.[2]?.trim().replace(/\s+#.*$/, '')).toBe('npm install @service-pay/client');
    expect(blocks[1]?.[1]).toBe('ts');
    expect(blocks[1]?.[2]?.trim().split('\n').length).toBeLessThanOrEqual(10);
  });

  it('names the CLI by our package, never by a bare `npx service-pay` fetch', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    for (const line of readme.split('\n').filter((l) => /npx [^`]*service-pay/.test(l))) {
      expect(line).toMatch(/npx -p @service-pay\/simulator service-pay|installed|without it/);
    }
  });

  it('runs the quick start as written (built package, real HTTP, signatures verified)', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const code = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)][0]?.[1] ?? '';
    const seen: string[] = [];
    const server = await startServer(async (req, res) => {
      const rawBody = await readBody(req);
      const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, rawBody };
      await verifyApiRequest(request, { getApiSecret: (k) => (k === 'ak_readme' ? 'sk_readme' : undefined) });
      seen.push(`${request.method} ${request.path}`);
      const created = req.method === 'POST' ? JSON.parse(rawBody.toString('utf8')) : {};
      res
        .writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...created, paymentId: 'p_readme', status: 'PENDING' }));
    });
    servers.push(server);
    // Run from the package folder, so `@service-pay/client` resolves to this package's build.
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], {
      cwd: packageDir,
      env: {
        ...process.env,
        SERVICE_API_URL: server.url,
        SERVICE_API_KEY: 'ak_readme',
        SERVICE_API_SECRET: 'sk_readme',
      },
      timeout: 20_000,
    });
    expect(stdout.trim()).toBe('p_readme PENDING');
    expect(seen).toEqual(['POST /v1/payments', 'GET /v1/payments/p_readme']);
  });
});
