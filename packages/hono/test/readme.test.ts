import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { freePort } from '@service-pay/test-kit';
import ts from 'typescript';
import { afterAll, expect, it } from 'vitest';

// The README's Node quick start, run as written: it installs @hono/node-server and listens (a bare
// `export default app` on Node starts nothing and the process exits).
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

it('the quick start installs what it imports, listens on PORT, and credits a signed delivery', async () => {
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
    env: { ...process.env, PORT: String(port), SERVICE_WEBHOOK_SECRET: secret },
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
  await expect.poll(() => output).toContain(`credit order ${event.orderNo} ${event.amount}`);
  expect(child.exitCode).toBeNull(); // still listening
}, 30_000);
