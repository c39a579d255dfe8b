import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signWebhook } from '@service-pay/core';
import { ADAPTER_SCENARIO_SECRET as SECRET, samplePaymentPaidEvent } from '@service-pay/core/testing';
import { freePort, waitFor } from '@service-pay/test-kit';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The runtime matrix: the core's fetch handler and the Hono adapter, served by Bun, Deno and workerd (the
// Cloudflare Workers runtime), each a real process on 127.0.0.1 driven over HTTP. The binaries come from
// the npm registry as dev dependencies of this package; a missing one fails the run, it is never skipped.
// (Next.js's Edge runtime is run by packages/next's tests.)
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const testDir = here('../');

function binary(name: string): string {
  const path = join(testDir, 'node_modules/.bin', name);
  if (!existsSync(path)) throw new Error(`${name} is not installed in test/node_modules: run pnpm install.`);
  return path;
}

interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** Spawns a runtime in its own process group (the npm wrappers start the binary as a child). */
function start(command: string, args: string[], env: Record<string, string> = {}): Omit<Running, 'url'> {
  let output = '';
  const child = spawn(command, args, {
    cwd: testDir,
    env: { ...process.env, ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout?.on('data', (d) => {
    output += d;
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  child.on('error', (error) => {
    output += `\nspawn failed: ${error.message}`;
  });
  return { child, output: () => output };
}

/** The probe's first answer, within 30 s (a probe still running then is not waited for); fails at once if the runtime exits. */
async function until<T>(what: string, running: Omit<Running, 'url'>, probe: () => Promise<T | undefined>): Promise<T> {
  const exited = () => running.child.exitCode !== null || running.child.signalCode !== null;
  const found = await waitFor(
    `${what} to serve`,
    async () => {
      if (exited()) return { exited: true as const };
      const value = await probe();
      return value === undefined ? undefined : { value };
    },
    { timeoutMs: 30_000 },
    100,
  ).catch((error: Error) => {
    throw new Error(`${error.message}:\n${running.output()}`);
  });
  if ('exited' in found) throw new Error(`${what} exited before it served:\n${running.output()}`);
  return found.value as T;
}

/** A runtime that prints `listening <port>` once it serves. */
async function startPrinting(what: string, command: string, args: string[], env: Record<string, string>) {
  const running = start(command, args, env);
  const port = await until(what, running, async () => running.output().match(/listening (\d+)/)?.[1]);
  return { ...running, url: `http://127.0.0.1:${port}` };
}

/** workerd: a bundled module Worker, a generated config, a port chosen here. */
async function startWorkerd(entry: string, bindings: Record<string, string>): Promise<Running & { dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'service-pay-workerd-'));
  await build({
    entryPoints: [entry],
    outfile: join(dir, 'worker.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    external: ['cloudflare:workers'],
    logLevel: 'silent',
  });
  const texts = Object.entries(bindings)
    .map(([name, value]) => `(name = ${JSON.stringify(name)}, text = ${JSON.stringify(value)})`)
    .join(', ');
  writeFileSync(
    join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2026-11-01",
  bindings = [ ${texts} ],
);
`,
  );
  const port = await freePort();
  const running = start(binary('workerd'), [
    'serve',
    join(dir, 'config.capnp'),
    '--socket-addr',
    `http=127.0.0.1:${port}`,
  ]);
  const url = `http://127.0.0.1:${port}`;
  try {
    await until('workerd', running, async () => ((await fetch(url, { method: 'HEAD' })).status > 0 ? true : undefined));
  } catch (error) {
    await stop({ ...running, url });
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return { ...running, url, dir };
}

async function stop(running: Running | undefined): Promise<void> {
  const pid = running?.child.pid;
  if (pid === undefined || running?.child.exitCode !== null || running.child.signalCode !== null) return;
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  process.kill(-pid, 'SIGTERM');
  const timer = setTimeout(() => process.kill(-pid, 'SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

function signedDelivery() {
  const event = samplePaymentPaidEvent();
  return { event, ...signWebhook({ event, secret: SECRET }) };
}

async function post(url: string, headers: Record<string, string>, body: string) {
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** What must hold on every runtime, for one route. */
function routeChecks(target: () => Running, route: '/core' | '/hono') {
  const credits = async (paymentId: string) =>
    Number(await (await fetch(`${target().url}/credits/${paymentId}`)).text());

  it(`${route}: a signed delivery is credited once, its duplicate answered duplicate`, async () => {
    const { event, body, headers } = signedDelivery();
    expect(await post(`${target().url}${route}`, headers, body)).toEqual({ status: 200, body: { received: true } });
    expect(await credits(event.paymentId)).toBe(1);
    expect(await post(`${target().url}${route}`, headers, body)).toEqual({
      status: 200,
      body: { received: true, duplicate: true },
    });
    expect(await credits(event.paymentId)).toBe(1);
  });

  it(`${route}: a tampered delivery is refused 401 and not credited`, async () => {
    const { event, body, headers } = signedDelivery();
    const res = await post(`${target().url}${route}`, headers, body.replace('"12.50"', '"99.50"'));
    expect([res.status, res.body.error]).toEqual([401, 'SIGNATURE_MISMATCH']);
    expect(await credits(event.paymentId)).toBe(0);
  });
}

const runtimes = [
  {
    name: 'Bun',
    agent: /^Bun\//,
    start: () =>
      startPrinting('bun', binary('bun'), ['run', 'runtimes/fixtures/bun.ts'], { SERVICE_WEBHOOK_SECRET: SECRET }),
  },
  {
    name: 'Deno',
    agent: /^Deno\//,
    start: () =>
      startPrinting(
        'deno',
        binary('deno'),
        ['run', '--allow-net=127.0.0.1', '--allow-env', '--allow-read', 'runtimes/fixtures/deno.ts'],
        { SERVICE_WEBHOOK_SECRET: SECRET },
      ),
  },
  {
    name: 'workerd (Cloudflare Workers)',
    agent: /^Cloudflare-Workers$/,
    start: () => startWorkerd(here('./fixtures/worker.ts'), { SERVICE_WEBHOOK_SECRET: SECRET }),
  },
];

for (const runtime of runtimes) {
  describe(runtime.name, () => {
    let running: Running | undefined;
    beforeAll(async () => {
      running = await runtime.start();
    });
    afterAll(async () => {
      await stop(running);
      if (running && 'dir' in running) rmSync(running.dir as string, { recursive: true, force: true });
    });
    const target = () => running as Running;

    it('is the runtime it claims to be', async () => {
      expect(await (await fetch(`${target().url}/runtime`)).text()).toMatch(runtime.agent);
    });
    routeChecks(target, '/core');
    routeChecks(target, '/hono');
  });
}

describe("createFetchHandler's JSDoc example, as written, on workerd", () => {
  let running: (Running & { dir: string }) | undefined;
  beforeAll(async () => {
    const source = readFileSync(here('../../packages/core/src/http/fetch-handler.ts'), 'utf8');
    const block = source.match(/@example\n \* ```ts\n([\s\S]*?) \* ```/)?.[1];
    if (block === undefined) throw new Error('no @example block found in packages/core/src/http/fetch-handler.ts');
    const example = block.replace(/^ \*( |$)/gm, '');
    const dir = mkdtempSync(join(testDir, 'runtimes/.example-'));
    try {
      // Written inside the workspace so '@service-pay/core' resolves as it would in a merchant's Worker.
      writeFileSync(join(dir, 'worker.ts'), example);
      running = await startWorkerd(join(dir, 'worker.ts'), { SERVICE_WEBHOOK_SECRET: SECRET });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  afterAll(async () => {
    await stop(running);
    if (running) rmSync(running.dir, { recursive: true, force: true });
  });

  it('credits a signed delivery, refuses a bad one 401 and answers its duplicate as such', async () => {
    const url = (running as Running).url;
    const { event, body, headers } = signedDelivery();
    expect(await post(url, headers, body)).toEqual({ status: 200, body: { received: true } });
    expect(await post(url, headers, body)).toEqual({ status: 200, body: { received: true, duplicate: true } });
    const bad = await post(url, { ...headers, 'x-service-signature': `t=1,v1=${'0'.repeat(64)}` }, body);
    expect(bad.status).toBe(401);
    // The example's onPaymentPaid logs the credit: once, for the one delivery that was not a duplicate.
    const credited = (running as Running).output().split(`credit order ${event.orderNo}`).length - 1;
    expect(credited).toBe(1);
  });
});
