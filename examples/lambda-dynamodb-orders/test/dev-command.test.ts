import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderView } from '../src/shop.ts';

// `pnpm dev` as a developer runs it: one command in a process of its own starts DynamoDB Local and serves
// the function over HTTP as API Gateway does; a simulator pays an order through it, and `service-pay
// trigger` reaches it.
const exampleDir = fileURLToPath(new URL('..', import.meta.url));
const bin = fileURLToPath(new URL('../node_modules/@service-pay/simulator/bin/service-pay.js', import.meta.url));

let sim: Simulator;
let dev: ChildProcess;
let started: { listening: string; notifyUrl: string; dynamodb: string };
let output = '';
let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

beforeAll(async () => {
  const merchant = generateMerchant();
  sim = await startSimulator({ merchants: [merchant], retry: { baseDelayMs: 100 } });
  dev = spawn('pnpm', ['run', '--silent', 'dev'], {
    cwd: exampleDir,
    // Its own process group: Ctrl+C reaches pnpm, tsx and the function alike, as in a terminal.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: '0',
      SERVICE_API_URL: sim.url,
      SERVICE_API_KEY: merchant.apiKey,
      SERVICE_API_SECRET: merchant.apiSecret,
      SERVICE_WEBHOOK_SECRET: merchant.webhookSecret,
      DYNAMODB_ENDPOINT: '',
    },
  });
  exited = new Promise((resolve) => dev.once('exit', (code, signal) => resolve({ code, signal })));
  dev.stderr?.on('data', (c: Buffer) => (output += c));
  started = await new Promise((resolve, reject) => {
    let stdout = '';
    dev.stdout?.on('data', (c: Buffer) => {
      stdout += c;
      output += c;
      const line = stdout.split('\n').find((l) => l.startsWith('{"listening"'));
      if (line !== undefined) resolve(JSON.parse(line));
    });
    void exited.then(({ code }) => reject(new Error(`pnpm dev exited with ${code}:\n${output}`)));
  });
}, 120_000);

afterAll(async () => {
  // Whatever is left of the group (nothing, once the last test stopped it).
  if (dev?.pid !== undefined)
    try {
      process.kill(-dev.pid, 'SIGKILL');
    } catch {}
  await sim?.stop();
});

const order = async (id: string): Promise<OrderView> => (await fetch(`${started.listening}/orders/${id}`)).json();

describe('pnpm dev: DynamoDB Local and the function behind a local API Gateway, one command', () => {
  it('an order paid through the simulator is credited once; a redelivery is a duplicate', async () => {
    const placed = await fetch(`${started.listening}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '12.50', tokenSymbol: 'USDT' }),
    });
    expect(placed.status).toBe(201);
    const {
      order: { id },
      paymentId,
    } = (await placed.json()) as { order: { id: string }; paymentId: string };
    expect(sim.payment(paymentId)?.notifyUrl).toBe(started.notifyUrl);

    await sim.pay(paymentId);
    await sim.waitForIdle({ timeoutMs: 30_000 });
    expect(await order(id)).toMatchObject({ status: 'PAID', credits: 1 });
    sim.redeliver(paymentId);
    await sim.waitForIdle({ timeoutMs: 30_000 });
    const answers = sim.deliveries({ paymentId }).map((d) => d.attempts.at(-1)?.responseBody);
    expect(answers).toEqual(['{"received":true}', '{"received":true,"duplicate":true}']);
    expect(await order(id)).toMatchObject({ status: 'PAID', credits: 1 });
  });

  it('service-pay trigger reaches the webhook route (a test payment for no order: recorded as rejected)', async () => {
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [bin, 'trigger', 'payment.paid', '--simulator', sim.url, '--forward-to', started.notifyUrl, '--json'],
        { cwd: exampleDir, env: { ...process.env, SERVICE_PAY_SIMULATOR_TOKEN: sim.controlToken } },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c));
      child.stderr.on('data', (c: Buffer) => (stderr += c));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(r).toMatchObject({ code: 0 });
    const { deliveries } = JSON.parse(r.stdout);
    expect(deliveries[0].attempts[0]).toMatchObject({
      status: 200,
      responseBody: expect.stringMatching(/"received":true/),
    });
  });

  it('Ctrl+C stops the function and DynamoDB Local', async () => {
    process.kill(-(dev.pid as number), 'SIGINT');
    // pnpm itself ends by the signal, as in a terminal; the script under it stops cleanly.
    const { code, signal } = await exited;
    expect(code === 0 || signal === 'SIGINT').toBe(true);
    expect(output).not.toMatch(/Error/);
    await expect.poll(() => accepts(Number(new URL(started.listening).port)), { timeout: 10_000 }).toBe(false);
    const port = Number(new URL(started.dynamodb).port);
    await expect.poll(() => accepts(port), { timeout: 10_000 }).toBe(false);
  });
});

describe('pnpm dev without Java', () => {
  it('says what to install, or to point DYNAMODB_ENDPOINT at a running one (exit 1, not a bare ENOENT)', async () => {
    // A PATH with node and nothing else: no java.
    const dir = await mkdtemp(join(tmpdir(), 'no-java-'));
    await symlink(process.execPath, join(dir, 'node'));
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'src/dev.ts'], {
        cwd: exampleDir,
        env: {
          ...process.env,
          PATH: dir,
          PORT: '0',
          SERVICE_API_URL: sim.url,
          SERVICE_API_KEY: 'k',
          SERVICE_API_SECRET: 's',
          SERVICE_WEBHOOK_SECRET: 'w',
          DYNAMODB_ENDPOINT: '',
        },
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    await rm(dir, { recursive: true, force: true });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /DynamoDB Local did not start: .*\ncould not run java \(ENOENT\): DynamoDB Local needs Java 17 or newer on the PATH/,
    );
    expect(r.stderr).toMatch(/Or set DYNAMODB_ENDPOINT to a DynamoDB Local already running/);
  });
});

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}
