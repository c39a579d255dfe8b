import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServiceClient, verifyApiRequest } from '@service-pay/client';
import { verifyWebhook } from '@service-pay/core';
import { afterAll, describe, expect, it } from 'vitest';
import { generateMerchant, startSimulator } from '../src/index.js';
import { input } from './support/fixtures.js';
import { startReceiver } from './support/receiver.js';

// The CLI as users run it: the built bin in a child process (CI builds before it tests).
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
if (!existsSync(cli)) throw new Error(`${cli} is missing: run 'pnpm build' before the simulator tests.`);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI in a child process; the secrets' environment variables are the test's alone (none by default). */
function run(args: string[], secrets: Record<string, string> = {}): Promise<Run> {
  const { SERVICE_WEBHOOK_SECRET: _w, SERVICE_API_SECRET: _a, ...env } = process.env;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...env, ...secrets },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts `service-pay simulate` and resolves once it printed its URL; secrets' variables as in `run`. */
function startCli(
  args: string[],
  secrets: Record<string, string> = {},
): Promise<{ child: ChildProcess; url: string; output: () => string; exit: Promise<Run> }> {
  const { SERVICE_WEBHOOK_SECRET: _w, SERVICE_API_SECRET: _a, ...env } = process.env;
  return new Promise((resolve, reject) => {
    // In the temp dir: simulate leaves its URL and control token in ./.service-pay/simulator.json.
    const child = spawn(process.execPath, [cli, 'simulate', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: tmpdir(),
      env: { ...env, ...secrets },
    });
    let stdout = '';
    let stderr = '';
    const exit = new Promise<Run>((done) => child.on('close', (code) => done({ code, stdout, stderr })));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`simulate did not start: ${stdout}${stderr}`));
    }, 15_000);
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c;
      const m =
        /listening on (http:\/\/\S+)/.exec(stdout) ?? /listening on \S+ \(.*\), here (http:\/\/\S+)/.exec(stdout);
      if (m !== null) {
        clearTimeout(timer);
        resolve({ child, url: m[1] as string, output: () => stdout, exit });
      }
    });
    child.stderr?.on('data', (c: Buffer) => (stderr += c));
    child.on('close', () => {
      clearTimeout(timer);
      reject(new Error(`simulate exited early: ${stdout}${stderr}`));
    });
  });
}

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

describe.concurrent('service-pay CLI: help, version and usage errors', () => {
  it.each([
    [['--help'], 'Usage: service-pay <command>'],
    [['-h'], 'Usage: service-pay <command>'],
    [['help'], 'Usage: service-pay <command>'],
    [['help', 'send'], 'Usage: service-pay send'],
    [['simulate', '--help'], 'Usage: service-pay simulate'],
    [['send', '--help'], 'Usage: service-pay send'],
    [['send', '-h'], 'Usage: service-pay send'],
    [['sign', '--help'], 'Usage: service-pay sign'],
    [['sign', 'api', '--help'], 'Usage: service-pay sign api'],
  ])('%j prints help and exits 0', async (args, expected) => {
    const r = await run(args);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain(expected);
  });

  it('--version prints the package version', async () => {
    const { version } = (await import('../package.json', { with: { type: 'json' } })).default;
    expect(await run(['--version'])).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('no command prints help to stderr and exits 2', async () => {
    const r = await run([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Usage: service-pay <command>');
  });

  it.each([
    [['frob'], /unknown command 'frob'[\s\S]*Run 'service-pay --help'/],
    [['help', 'frob'], /unknown command 'frob'/],
    [['send', '--bogus'], /Unknown option '--bogus'[\s\S]*Run 'service-pay send --help'/],
    [['send', '--secret', 's'], /--url is required/],
    [
      ['send', '--url', 'http://127.0.0.1:9'],
      /webhook secret is required: set SERVICE_WEBHOOK_SECRET, or pass --secret-file/,
    ],
    [
      ['send', '--url', 'http://127.0.0.1:9', '--secret', 's', '--secret-file', 'f'],
      /--secret or --secret-file, not both/,
    ],
    [['send', '--url', 'http://127.0.0.1:9', '--secret-file', '/nonexistent/secret'], /cannot read --secret-file/],
    [['send', '--url', 'nope', '--secret', 's'], /--url must be an http/],
    [
      ['send', '--url', 'http://127.0.0.1:9', '--secret', 's', '--duplicates', 'two'],
      /--duplicates must be a whole number, got "two"/,
    ],
    [['send', '--url', 'http://127.0.0.1:9', '--secret', 's', '--amount', '1e5'], /--amount: /],
    [['send', '--url', 'http://127.0.0.1:9', '--secret', 's', '--body', '{}', '--amount', '1'], /cannot be combined/],
    [['send', '--url'], /argument missing/],
    [['sign'], /webhook secret is required: set SERVICE_WEBHOOK_SECRET/],
    [['sign', 'api', '--api-key', 'k', '--path', '/v1/payments'], /API secret is required: set SERVICE_API_SECRET/],
    [['sign', '--secret', 's', '--payment-id', 'x1'], /must start with "p_"/],
    [['sign', '--secret', 's', '--delivery-id', 'x'], /must start with "dl_"/],
    [['sign', 'api', '--api-key', 'k', '--api-secret', 's'], /--path is required/],
    [['sign', 'api', '--api-key', 'a b', '--api-secret', 's', '--path', '/v1/payments'], /apiKey must be/],
    [['simulate', '--port', 'abc'], /--port must be a whole number/],
    [['simulate', '--max-attempts', '9'], /maxAttempts must be a whole number from 1 to 8/],
    [['simulate', '--duplicate-rate', '2'], /probability/],
    [['simulate', '--config', '/nonexistent/sim.json'], /cannot read --config/],
    [['simulate', 'extra'], /Unexpected argument 'extra'/],
    [['send', '--url', 'http://127.0.0.1:9', '--secret', 's', '--clock-skew-sec', '-600'], /--clock-skew-sec=-XYZ/],
  ])('%j exits 2 with a clear message', async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
  });
});

describe('service-pay sign', () => {
  it('prints webhook headers that core verifyWebhook accepts', async () => {
    const r = await run([
      'sign',
      '--secret',
      'whsec_cli_sign_tests',
      '--timestamp',
      '1700000000',
      '--amount',
      '3.5',
      '--json',
    ]);
    expect(r.code).toBe(0);
    const { headers, body, curl } = JSON.parse(r.stdout);
    const verified = await verifyWebhook(
      { rawBody: body, headers },
      { secret: 'whsec_cli_sign_tests', now: () => 1_700_000_000_000 },
    );
    expect(verified.event).toMatchObject({ amount: '3.5', amountRaw: '3500000' });
    expect(curl).toContain(`-H 'X-Service-Signature: ${headers['X-Service-Signature']}'`);
    expect(curl).toContain('http://127.0.0.1:3000/webhooks/service');
  });

  it('prints a merchant API Authorization that verifyApiRequest accepts', async () => {
    const body = JSON.stringify(input());
    const r = await run([
      'sign',
      'api',
      '--api-key',
      'ak_1',
      '--api-secret',
      'sk_1',
      '--path',
      '/v1/payments',
      '--body',
      body,
      '--json',
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    await expect(
      verifyApiRequest(
        { method: 'POST', path: '/v1/payments', headers: out.headers, rawBody: out.body },
        { getApiSecret: () => 'sk_1' },
      ),
    ).resolves.toMatchObject({ apiKey: 'ak_1' });
    expect(out.curl).toMatch(/^curl -sS -X POST http:\/\/127\.0\.0\.1:4010\/v1\/payments/);
  });
});

describe('secrets on the command line', () => {
  it('come from the environment or a file without a warning; --secret still works, with one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'service-pay-secret-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'webhook-secret');
    await writeFile(file, 'whsec_from_a_file_0123\n'); // the newline an editor adds is dropped
    const sign = ['sign', '--timestamp', '1700000000', '--json'];
    const fromEnv = await run(sign, { SERVICE_WEBHOOK_SECRET: 'whsec_from_the_env_0123' });
    const fromFile = await run([...sign, '--secret-file', file]);
    const fromArgv = await run([...sign, '--secret', 'whsec_from_the_argv_0123']);
    for (const [r, secret] of [
      [fromEnv, 'whsec_from_the_env_0123'],
      [fromFile, 'whsec_from_a_file_0123'],
      [fromArgv, 'whsec_from_the_argv_0123'],
    ] as const) {
      expect(r.code).toBe(0);
      const { headers, body } = JSON.parse(r.stdout);
      await expect(
        verifyWebhook({ rawBody: body, headers }, { secret, now: () => 1_700_000_000_000 }),
      ).resolves.toBeDefined();
    }
    expect(fromEnv.stderr).toBe('');
    expect(fromFile.stderr).toBe('');
    expect(fromArgv.stderr).toMatch(/warning: --secret on the command line is visible to other users \(ps\)/);
    const api = await run(['sign', 'api', '--api-key', 'ak_1', '--path', '/v1/payments'], {
      SERVICE_API_SECRET: 'sk_from_the_env',
    });
    expect([api.code, api.stderr]).toEqual([0, '']);
  });

  it('regression: simulate takes them from the environment or files too, and warns only when on argv', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'service-pay-secret-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const apiFile = join(dir, 'api-secret');
    const webhookFile = join(dir, 'webhook-secret');
    await writeFile(apiFile, 'sk_from_a_file_0123\n');
    await writeFile(webhookFile, 'whsec_from_a_file_0123\n');
    const started = async (args: string[], env: Record<string, string> = {}) => {
      const sim = await startCli(['--port', '0', '--quiet', ...args], env);
      const banner = sim.output();
      sim.child.kill('SIGINT');
      const exit = await sim.exit;
      expect(exit.code).toBe(0);
      const secret = (name: string) => new RegExp(`${name}=(\\S+)`).exec(banner)?.[1];
      return {
        apiSecret: secret('SERVICE_API_SECRET'),
        webhookSecret: secret('SERVICE_WEBHOOK_SECRET'),
        stderr: exit.stderr,
      };
    };
    const fromEnv = await started([], {
      SERVICE_API_SECRET: 'sk_from_the_env_0123',
      SERVICE_WEBHOOK_SECRET: 'whsec_from_the_env_0123',
    });
    expect(fromEnv).toMatchObject({ apiSecret: 'sk_from_the_env_0123', webhookSecret: 'whsec_from_the_env_0123' });
    const fromFiles = await started(['--api-secret-file', apiFile, '--webhook-secret-file', webhookFile]);
    expect(fromFiles).toMatchObject({ apiSecret: 'sk_from_a_file_0123', webhookSecret: 'whsec_from_a_file_0123' });
    for (const r of [fromEnv, fromFiles]) expect(r.stderr).not.toMatch(/warning/);
    const fromArgv = await started(['--webhook-secret', 'whsec_on_the_argv_0123']);
    expect(fromArgv.webhookSecret).toBe('whsec_on_the_argv_0123');
    expect(fromArgv.stderr).toMatch(/warning: --webhook-secret on the command line is visible to other users \(ps\)/);
    // Nothing given: generated, as before.
    const generated = await started([]);
    expect(generated.webhookSecret).toMatch(/^whsec_test_[0-9a-f]{48}$/);
    expect(generated.stderr).not.toMatch(/warning/);
  });
});

describe('service-pay send', () => {
  it('sends signed duplicates one after another; the receiver credits once; exit 0', async () => {
    const receiver = await startReceiver({ secret: 'whsec_send_command_tests' });
    cleanup.push(() => receiver.close());
    const r = await run([
      'send',
      '--url',
      receiver.url,
      '--secret',
      'whsec_send_command_tests',
      '--duplicates',
      '2',
      '--payment-id',
      'p_cli1',
    ]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^#1\/3 dl_[0-9a-f]+ -> 200 \{"received":true\} \(\d+ ms\)$/);
    expect(lines[1]).toMatch(/-> 200 \{"received":true,"duplicate":true\}/);
    expect(r.stderr).toContain('paymentId p_cli1');
    expect(receiver.handled.map((e) => e.paymentId)).toEqual(['p_cli1']);
    expect(new Set(receiver.requests.map((q) => q.deliveryId)).size).toBe(3);
  });

  it('sends concurrent duplicates; a 409 from the receiver makes the exit code 1', async () => {
    const receiver = await startReceiver({
      secret: 'whsec_send_command_tests',
      work: () => new Promise((r) => setTimeout(r, 300)),
    });
    cleanup.push(() => receiver.close());
    const r = await run([
      'send',
      '--url',
      receiver.url,
      '--secret',
      'whsec_send_command_tests',
      '--duplicates',
      '2',
      '--concurrent',
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/-> 409 \{"error":"DELIVERY_IN_PROGRESS"/);
    expect(receiver.handled).toHaveLength(1);
  });

  it('a skewed clock is refused by the receiver: exit 1, the answer printed', async () => {
    const receiver = await startReceiver({ secret: 'whsec_send_command_tests' });
    cleanup.push(() => receiver.close());
    const r = await run([
      'send',
      '--url',
      receiver.url,
      '--secret',
      'whsec_send_command_tests',
      '--clock-skew-sec=-600',
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('-> 401 {"error":"TIMESTAMP_OUT_OF_TOLERANCE"');
  });

  it('an unreachable endpoint: exit 1 and "no answer"', async () => {
    const r = await run(['send', '--url', 'http://127.0.0.1:9/webhooks', '--secret', 's']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/-> no answer: .*ECONNREFUSED/);
  });
});

describe('service-pay simulate', () => {
  it('starts from flags, prints the keys, serves the API, delivers, logs attempts, stops on SIGTERM with 0', async () => {
    const merchant = generateMerchant();
    const receiver = await startReceiver({ secret: merchant.webhookSecret });
    cleanup.push(() => receiver.close());
    const sim = await startCli([
      '--port',
      '0',
      '--api-key',
      merchant.apiKey,
      '--api-secret',
      merchant.apiSecret,
      '--webhook-secret',
      merchant.webhookSecret,
      '--confirmations',
      '1',
      '--retry-base-ms',
      '10',
    ]);
    const banner = sim.output();
    // The same variable names as listen prints, ready for the app's .env.
    expect(banner).toContain(`merchant default (confirmations 1); for your app's .env:`);
    expect(banner).toContain(`  SERVICE_API_URL=${sim.url}\n  SERVICE_API_KEY=${merchant.apiKey}\n`);
    expect(banner).toContain(
      `  SERVICE_API_SECRET=${merchant.apiSecret}\n  SERVICE_WEBHOOK_SECRET=${merchant.webhookSecret}\n`,
    );
    expect(banner).toContain(`control API   ${sim.url}/_simulator (header x-simulator-token for changes)`);
    expect(banner).toContain('up to 8 attempts, backoff 10 ms x 2, timeout 5000 ms');

    const client = createServiceClient({ baseUrl: sim.url, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
    const payment = await client.createPayment(input({ notifyUrl: receiver.url }));
    // The banner gives the control token; a change without it is refused.
    const token = /control token (\S+)/.exec(banner)?.[1] ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const pay = (headers: Record<string, string>) =>
      fetch(`${sim.url}/_simulator/payments/${payment.paymentId}/pay`, { method: 'POST', headers });
    expect((await pay({})).status).toBe(401);
    const paid = await pay({ 'x-simulator-token': token });
    expect(paid.status).toBe(200);
    await fetch(`${sim.url}/_simulator/wait-idle`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(receiver.handled.map((e) => e.paymentId)).toEqual([payment.paymentId]);
    await expect
      .poll(() => sim.output())
      .toMatch(
        new RegExp(`dl_[0-9a-f]+ ${payment.paymentId} attempt 1: 200 \\{"received":true\\} \\(\\d+ ms\\) -> succeeded`),
      );

    sim.child.kill('SIGTERM');
    const exit = await sim.exit;
    expect(exit.code).toBe(0);
    expect(exit.stderr).toContain('SIGTERM: stopping the simulator');
  });

  it('--host 0.0.0.0: the banner names the real address, warns, and puts the token in the dashboard URL', async () => {
    // Before: every interface was bound with no warning, and the banner said 127.0.0.1.
    const sim = await startCli(['--host', '0.0.0.0', '--port', '0', '--quiet']);
    const banner = sim.output();
    const port = new URL(sim.url).port;
    expect(banner).toMatch(/^WARNING: the dashboard and control API are reachable from the network on 0\.0\.0\.0:/);
    expect(banner).toContain(`listening on 0.0.0.0:${port} (every interface), here http://127.0.0.1:${port}`);
    const token = /control token (\S+)/.exec(banner)?.[1] ?? '';
    expect(banner).toContain(`dashboard     http://127.0.0.1:${port}/#token=${token}`);
    expect((await fetch(`${sim.url}/_simulator`)).status).toBe(401);
    expect((await fetch(`${sim.url}/_simulator`, { headers: { 'x-simulator-token': token } })).status).toBe(200);
    sim.child.kill('SIGINT');
    expect((await sim.exit).code).toBe(0);
  });

  it('starts from a config file with two merchants and faults', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'service-pay-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const merchants = [generateMerchant({ name: 'shop-a' }), generateMerchant({ name: 'shop-b', confirmations: 5 })];
    const config = join(dir, 'sim.json');
    await writeFile(
      config,
      JSON.stringify({ port: 0, merchants, faults: { duplicateRate: 0.5 }, retry: { timeoutMs: 1000 } }),
    );
    const sim = await startCli(['--config', config, '--quiet', '--seed', '7']);
    expect(sim.output()).toContain('merchant shop-a');
    expect(sim.output()).toContain('merchant shop-b');
    expect(sim.output()).toContain('faults: duplicates 0.5');
    const info = await (await fetch(`${sim.url}/_simulator`)).json();
    expect(info).toMatchObject({
      seed: 7,
      retry: { timeoutMs: 1000 },
      merchants: [{ name: 'shop-a' }, { name: 'shop-b', confirmations: 5 }],
    });
    sim.child.kill('SIGINT');
    expect((await sim.exit).code).toBe(0);
  });

  it('refuses a config with unknown keys or merchants given twice (exit 2), and a taken port (exit 1)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'service-pay-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ prot: 4010 }));
    expect(await run(['simulate', '--config', bad])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown keys: prot/),
    });
    const notJson = join(dir, 'not.json');
    await writeFile(notJson, '{');
    expect(await run(['simulate', '--config', notJson])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/not valid JSON/),
    });
    const both = join(dir, 'both.json');
    await writeFile(both, JSON.stringify({ merchants: [generateMerchant()] }));
    expect(await run(['simulate', '--config', both, '--api-key', 'x'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/not both/),
    });

    const taken = await startSimulator({ merchants: [generateMerchant()] });
    cleanup.push(() => taken.stop());
    const r = await run(['simulate', '--port', String(taken.port)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is in use.*\(PORT_IN_USE\)/);
  });
});
