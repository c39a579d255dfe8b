import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServiceClient } from '@service-pay/client';
import { createWebhookHandler } from '@service-pay/core';
import { toWebhookRequest } from '@service-pay/core/node';
import { readBody, startServer } from '@service-pay/test-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDevSecrets } from '../src/cli/dev-secrets.js';
import { startReceiver } from './support/receiver.js';

// `listen`, `trigger` and `deliveries` as users run them: the bin in child processes, in a project
// folder of their own (the dev keys file lives in the working directory), against a real receiver.

const bin = fileURLToPath(new URL('../bin/service-pay.js', import.meta.url));
if (!existsSync(fileURLToPath(new URL('../dist/cli.js', import.meta.url))))
  throw new Error("dist/cli.js is missing: run 'pnpm build' before the simulator tests.");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

/** A loopback URL where nothing listens (fetch refuses some well-known ports such as 9 outright). */
async function nothingListening(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

async function projectDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'service-pay-project-'));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function run(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The `--json` start line, as far as these tests read it. */
interface Started {
  event: string;
  url: string;
  forwardTo: string | null;
  controlToken: string;
  secretsFile: string;
  merchants: { apiKey: string; apiSecret: string; webhookSecret: string }[];
}

/** Starts `service-pay listen ... --json` and resolves with its start line. */
function listen(
  args: string[],
  cwd: string,
): Promise<{ child: ChildProcess; started: Started; output: () => string; exit: Promise<Run> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'listen', '--port', '0', '--json', ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const exit = new Promise<Run>((done) => child.on('close', (code) => done({ code, stdout, stderr })));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`listen did not start: ${stdout}${stderr}`));
    }, 15_000);
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c;
      const first = stdout.split('\n')[0] as string;
      if (stdout.includes('\n')) {
        clearTimeout(timer);
        resolve({ child, started: JSON.parse(first), output: () => stdout, exit });
      }
    });
    child.stderr?.on('data', (c: Buffer) => (stderr += c));
    child.on('close', () => {
      clearTimeout(timer);
      reject(new Error(`listen exited early: ${stdout}${stderr}`));
    });
  });
}

describe('service-pay listen', { timeout: 30_000 }, () => {
  it('keeps stable dev keys in .service-pay/dev-secrets.json, forwards webhooks, answers trigger and deliveries', async () => {
    const dir = await projectDir();
    const secretsFile = join(dir, '.service-pay', 'dev-secrets.json');

    // First run: no file yet. The app needs the webhook secret, so it starts after the keys exist.
    const first = await listen(['--forward-to', 'http://127.0.0.1:9/not-yet'], dir);
    expect(first.started).toMatchObject({ event: 'started', secretsFile, secretsCreated: true });
    const saved = JSON.parse(await readFile(secretsFile, 'utf8'));
    expect(first.started.merchants[0]).toMatchObject({ apiKey: saved.apiKey, webhookSecret: saved.webhookSecret });
    expect((await stat(secretsFile)).mode & 0o777).toBe(0o600);
    first.child.kill('SIGINT');
    expect((await first.exit).code).toBe(0);

    const app = await startReceiver({ secret: saved.webhookSecret });
    cleanup.push(() => app.close());
    const sim = await listen(['--forward-to', app.url, '--retry-base-ms', '10', '--max-attempts', '3'], dir);
    cleanup.push(async () => sim.child.kill('SIGKILL'));
    // Second run: the same keys.
    expect(sim.started).toMatchObject({ secretsCreated: false, forwardTo: app.url, dashboard: `${sim.started.url}/` });
    expect(sim.started.merchants[0]?.webhookSecret).toBe(saved.webhookSecret);
    const env = { SERVICE_PAY_SIMULATOR_URL: sim.started.url };

    // A payment made through the merchant API with some other notifyUrl is forwarded all the same.
    const client = createServiceClient({ baseUrl: sim.started.url, apiKey: saved.apiKey, apiSecret: saved.apiSecret });
    const payment = await client.createPayment({
      orderNo: 'from-the-app',
      tokenSymbol: 'USDT',
      amount: '3.00',
      expireSec: 600,
      notifyUrl: 'https://shop.example/webhooks/service',
    });
    await fetch(`${sim.started.url}/_simulator/payments/${payment.paymentId}/pay`, {
      method: 'POST',
      headers: { 'x-simulator-token': sim.started.controlToken },
    });
    await expect.poll(() => app.handled.map((e) => e.orderNo)).toEqual(['from-the-app']);
    await expect.poll(() => sim.output()).toMatch(/"event":"attempt".*"status":200/);

    const triggered = await run(
      ['trigger', 'payment.paid', '--amount', '12.50', '--order', 'cli-1', '--duplicates', '1'],
      dir,
      env,
    );
    expect(triggered.code).toBe(0);
    expect(triggered.stderr).toMatch(/order cli-1 12\.50 USDT PAID, 2 deliveries/);
    expect(triggered.stdout).toMatch(
      /dl_[0-9a-f]+ original attempt 1: 200 \{"received":true\} \(\d+ ms\) -> succeeded/,
    );
    expect(triggered.stdout).toMatch(/duplicate attempt 1: 200 \{"received":true,"duplicate":true\}/);
    expect(app.handled.map((e) => e.orderNo)).toEqual(['from-the-app', 'cli-1']);

    const json = await run(['trigger', 'payment.paid', '--json', '--fail-all'], dir, env);
    expect(json.code).toBe(1); // the endpoint was "down" for every attempt
    const result = JSON.parse(json.stdout);
    expect(result.payment).toMatchObject({ status: 'PAID', amount: '10.00' });
    expect(result.deliveries[0]).toMatchObject({ state: 'failed' });
    expect(result.deliveries[0].attempts.every((a: { outcome: string }) => a.outcome === 'endpoint-down')).toBe(true);

    const list = await run(['deliveries', '--json'], dir, env);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).map((d: { orderNo: string; state: string }) => [d.orderNo, d.state])).toEqual([
      ['from-the-app', 'succeeded'],
      ['cli-1', 'succeeded'],
      ['cli-1', 'succeeded'],
      [result.payment.orderNo, 'failed'],
    ]);
    const table = await run(['deliveries', '--limit', '1', '--state', 'failed'], dir, env);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^created\s+delivery\s+payment\s+kind\s+state\s+attempts\s+last answer$/,
    );
    expect(table.stdout).toMatch(/original\s+failed\s+3\s+endpoint down/);

    // trigger found the token in the state file listen left here; from another folder it has none.
    const stateFile = join(dir, '.service-pay', 'simulator.json');
    expect(JSON.parse(await readFile(stateFile, 'utf8'))).toMatchObject({
      url: sim.started.url,
      controlToken: sim.started.controlToken,
    });
    expect((await stat(stateFile)).mode & 0o777).toBe(0o600);
    const elsewhere = await run(['trigger', 'payment.paid'], await projectDir(), env);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/No control token.*or set SERVICE_PAY_SIMULATOR_TOKEN/);
    const withEnv = await run(['deliveries', '--limit', '1'], await projectDir(), {
      ...env,
      SERVICE_PAY_SIMULATOR_TOKEN: sim.started.controlToken,
    });
    expect(withEnv.code).toBe(0);

    sim.child.kill('SIGTERM');
    expect((await sim.exit).code).toBe(0);
    expect(existsSync(stateFile)).toBe(false);
  });

  it('the human banner suggests npx service-pay (the bin of a local install is not on PATH)', async () => {
    const dir = await projectDir();
    const child = spawn(process.execPath, [bin, 'listen', '--port', '0', '--forward-to', 'http://127.0.0.1:9/x'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanup.push(async () => child.kill('SIGKILL'));
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    await expect.poll(() => out, { timeout: 15_000 }).toMatch(/from another terminal: .*\n/);
    expect(out).toContain('Trigger an event from another terminal: npx service-pay trigger payment.paid');
    expect(out).toContain('Send a payment again once the app is fixed: npx service-pay resend <paymentId>');
    // The keys once, as the variables simulate prints too.
    expect(out.match(/SERVICE_WEBHOOK_SECRET=whsec_\S+/g)).toHaveLength(1);
    expect(out).not.toMatch(/webhookSecret\s/);
    child.kill('SIGINT');
  });

  it('refuses a missing --forward-to, a broken secrets file and merchant flags (exit 2)', async () => {
    const dir = await projectDir();
    expect(await run(['listen'], dir)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--forward-to is required/),
    });
    expect(await run(['listen', '--forward-to', 'x', '--api-key', 'k'], dir)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/Unknown option '--api-key'/),
    });
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{"apiKey": 1}');
    expect(await run(['listen', '--forward-to', 'http://127.0.0.1:9/', '--secrets-file', broken], dir)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/needs apiKey, apiSecret and webhookSecret; delete it/),
    });
  });
});

describe('listen and trigger explain what they found', { timeout: 30_000 }, () => {
  /** A framework's 404 page for every request, as Express answers a path it has no route for. */
  async function htmlNotFound(): Promise<string> {
    const server = createServer((_req, res) =>
      res
        .writeHead(404, { 'content-type': 'text/html; charset=utf-8' })
        .end('<!DOCTYPE html>\n<html><body><pre>Cannot POST /wrong</pre></body></html>'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise((resolve) => server.close(resolve)));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/wrong`;
  }

  it('listen checks --forward-to at start: the route (401 to an unsigned POST), nothing there, no route at the path', async () => {
    const dir = await projectDir();
    const logged: [string, string, Record<string, unknown>][] = [];
    const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
      void logged.push([level, message, fields]);
    const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    const app = await startReceiver({ secret: 'whsec_any_secret_of_the_app_0123456789', logger });
    cleanup.push(() => app.close());
    const cases: [string, { status: number | null; ok: boolean }, RegExp][] = [
      [
        app.url,
        { status: 401, ok: true },
        /answers an unsigned POST with 401 MISSING_SIGNATURE: the webhook route is there/,
      ],
      [
        await nothingListening(),
        { status: null, ok: false },
        /^nothing answers at http:\S+ yet \(ECONNREFUSED\): start your app/,
      ],
      [await htmlNotFound(), { status: 404, ok: false }, /with 404 \(an HTML page\): no route at this path/],
    ];
    for (const [url, found, summary] of cases) {
      const sim = await listen(['--forward-to', url], dir);
      expect((sim.started as Started & { target: unknown }).target).toMatchObject({
        url,
        ...found,
        summary: expect.stringMatching(summary),
      });
      // Stopped once it is running: the state file is written after its Ctrl+C handler is in place.
      await expect.poll(() => existsSync(join(dir, '.service-pay', 'simulator.json'))).toBe(true);
      sim.child.kill('SIGINT');
      expect((await sim.exit).code).toBe(0);
      await expect.poll(() => existsSync(join(dir, '.service-pay', 'simulator.json'))).toBe(false);
    }
    // The check is one unsigned request, refused by the app; no payment was handled.
    expect(app.requests.map((r) => r.status)).toEqual([401]);
    expect(app.handled).toEqual([]);
    // ...which the app does not log as a refused delivery: one debug line, marked as the check.
    expect(app.requests[0]?.headers['x-service-pay-probe']).toBe('listen');
    expect(logged.map(([level, , fields]) => [level, fields.code, fields.probe])).toEqual([
      ['debug', 'MISSING_SIGNATURE', true],
    ]);
  });

  it('trigger says which simulator and target, shows a 401 at once with its fix, and leaves the retries to the simulator', async () => {
    const dir = await projectDir();
    // The app runs with a secret of its own, not the one listen printed.
    const app = await startReceiver({ secret: 'whsec_not_the_dev_secret_0123456789' });
    cleanup.push(() => app.close());
    // Retries far apart: any second attempt would come long after trigger has returned.
    const sim = await listen(['--forward-to', app.url, '--retry-base-ms', '60000'], dir);
    cleanup.push(async () => sim.child.kill('SIGKILL'));
    const r = await run(['trigger', 'payment.paid'], dir, { SERVICE_PAY_SIMULATOR_URL: sim.started.url });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `trigger: the simulator at ${sim.started.url} (pid ${sim.child.pid}, .service-pay/simulator.json), webhooks to ${app.url}`,
    );
    expect(r.stdout).toMatch(/original attempt 1: HTTP 401 SIGNATURE_MISMATCH: .*; retry in 60000 ms/);
    expect(r.stderr).toMatch(
      /fix: the app refused the signature \(SIGNATURE_MISMATCH\): its webhook secret differs from the one 'service-pay listen' printed/,
    );
    expect(r.stderr).toMatch(/keeps retrying on its schedule/);
    const signed = () => app.requests.filter((q) => q.headers['x-service-signature'] !== undefined);
    expect(signed()).toHaveLength(1); // trigger did not wait for (or make) a second attempt
    // The simulator still holds the delivery, waiting to retry.
    const list = await run(['deliveries', '--json'], dir, { SERVICE_PAY_SIMULATOR_URL: sim.started.url });
    expect(JSON.parse(list.stdout).map((d: { state: string }) => d.state)).toEqual(['waiting-retry']);
    sim.child.kill('SIGINT');
    await sim.exit;
  });

  it('a second listen on a taken port names the simulator that holds it and where it forwards', async () => {
    const dir = await projectDir();
    const first = await listen(['--forward-to', 'http://127.0.0.1:9/old-target'], dir);
    cleanup.push(async () => first.child.kill('SIGKILL'));
    const port = new URL(first.started.url).port;
    const second = await run(['listen', '--port', port, '--forward-to', 'http://127.0.0.1:9/new-target'], dir);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `Port ${port} is taken by another service-pay simulator at http://127.0.0.1:${port} (pid ${first.child.pid}), forwarding to http://127.0.0.1:9/old-target`,
    );
    first.child.kill('SIGINT');
    await first.exit;
  });
});

describe('service-pay trigger without a running simulator', () => {
  it('standalone with --forward-to: its own simulator, the dev keys, one event', async () => {
    const dir = await projectDir();
    const { secrets } = await import('../src/cli/dev-secrets.js').then((m) =>
      m.loadDevSecrets(join(dir, '.service-pay', 'dev-secrets.json')),
    );
    const app = await startReceiver({ secret: secrets.webhookSecret });
    cleanup.push(() => app.close());
    const r = await run(['trigger', 'payment.paid', '--forward-to', app.url, '--amount', '1.25'], dir, {
      SERVICE_PAY_SIMULATOR_URL: await nothingListening(),
    });
    expect(r).toMatchObject({
      code: 0,
      // Which simulator and where to, first: here none was running, so one of its own.
      stderr: expect.stringMatching(
        /^trigger: no simulator at http:\S+; a standalone one for this event, webhooks to http:\S+\nstandalone simulator: p_\S+ order test_\S+ 1\.25 USDT PAID/,
      ),
    });
    expect(app.handled.map((e) => e.amount)).toEqual(['1.25']);
  });

  it('--duplicates N --concurrent sends N+1 deliveries at once (as the root README counts); --concurrent alone, 2', async () => {
    const dir = await projectDir();
    const { secrets } = await import('../src/cli/dev-secrets.js').then((m) =>
      m.loadDevSecrets(join(dir, '.service-pay', 'dev-secrets.json')),
    );
    const app = await startReceiver({ secret: secrets.webhookSecret });
    cleanup.push(() => app.close());
    const env = { SERVICE_PAY_SIMULATOR_URL: await nothingListening() };
    const three = await run(
      ['trigger', 'payment.paid', '--forward-to', app.url, '--duplicates', '2', '--concurrent', '--json'],
      dir,
      env,
    );
    const kinds = (r: Run) => JSON.parse(r.stdout).deliveries.map((d: { kind: string }) => d.kind);
    expect(kinds(three)).toEqual(['original', 'concurrent-duplicate', 'concurrent-duplicate']);
    const two = await run(['trigger', 'payment.paid', '--forward-to', app.url, '--concurrent', '--json'], dir, env);
    expect(kinds(two)).toEqual(['original', 'concurrent-duplicate']);
    expect(app.handled).toHaveLength(2); // one credit per payment, whatever the number of deliveries
  });

  it("prints the receiver's error code next to a refusal: a wrong secret reads as SIGNATURE_MISMATCH", async () => {
    const dir = await projectDir();
    const app = await startReceiver({ secret: 'whsec_not_the_dev_secret' });
    cleanup.push(() => app.close());
    const r = await run(
      // Retries far apart: trigger returns before any second attempt, which the stopped simulator never makes.
      ['trigger', 'payment.paid', '--forward-to', app.url, '--max-attempts', '2', '--retry-base-ms', '60000'],
      dir,
      { SERVICE_PAY_SIMULATOR_URL: await nothingListening() },
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /original attempt 1: HTTP 401 SIGNATURE_MISMATCH: No signature in X-Service-Signature matches\. \(\d+ ms\); retry/,
    );
    expect(app.requests).toHaveLength(1);
    // A wrong secret is the app's set-up: no retry fixes it, so trigger stops at the first attempt, and its
    // standalone simulator with it.
    expect(r.stdout).not.toMatch(/attempt 2/);
    expect(r.stderr).toMatch(/fix: the app refused the signature \(SIGNATURE_MISMATCH\)/);
    expect(r.stderr).toMatch(
      /Stopped there: every retry would get the same answer\. Fix the app, then trigger again\./,
    );
  });

  it('exit 3 when no simulator answers and there is nowhere to send; --json errors are JSON', async () => {
    const dir = await projectDir();
    const nowhere = await nothingListening();
    const env = { SERVICE_PAY_SIMULATOR_URL: nowhere };
    const r = await run(['trigger', 'payment.paid'], dir, env);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(
      `no simulator answered at ${nowhere} (ECONNREFUSED); start one with 'npx service-pay listen`,
    );
    const d = await run(['deliveries', '--json'], dir, env);
    expect(d.code).toBe(3);
    expect(JSON.parse(d.stderr)).toMatchObject({ error: 'UNREACHABLE', exitCode: 3 });
    // An explicit --simulator is never replaced by a standalone one.
    expect(
      await run(
        ['trigger', 'payment.paid', '--simulator', 'http://127.0.0.1:9', '--forward-to', 'http://127.0.0.1:9/x'],
        dir,
      ),
    ).toMatchObject({ code: 3 });
  });

  it('usage errors exit 2', async () => {
    const dir = await projectDir();
    for (const [args, message] of [
      [['trigger'], /name the event to trigger: payment.paid/],
      [['trigger', 'payment.refunded'], /unknown event 'payment.refunded'; known: payment.paid/],
      [['trigger', 'payment.paid', '--forward-to', 'nope'], /--forward-to must be an http/],
      [['trigger', 'payment.paid', '--wait-ms', '-1'], /--wait-ms=-XYZ|must be/],
      [['deliveries', '--state', 'lost'], /--state must be one of/],
      [['deliveries', '--limit', 'x'], /--limit must be a whole number/],
    ] as const) {
      const r = await run([...args], dir);
      expect([args, r.code]).toEqual([args, 2]);
      expect(r.stderr).toMatch(message);
    }
  });
});

describe('service-pay send --json', () => {
  it('prints one JSON object with every delivery', async () => {
    const dir = await projectDir();
    const app = await startReceiver({ secret: 'whsec_send_json_tests' });
    cleanup.push(() => app.close());
    const r = await run(['send', '--url', app.url, '--duplicates', '1', '--json'], dir, {
      SERVICE_WEBHOOK_SECRET: 'whsec_send_json_tests',
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ ok: true, url: app.url });
    expect(out.deliveries.map((d: { status: number; responseBody: string }) => [d.status, d.responseBody])).toEqual([
      [200, '{"received":true}'],
      [200, '{"received":true,"duplicate":true}'],
    ]);
  });
});

describe('trigger explains every receiver error, resend sends a payment again', { timeout: 30_000 }, () => {
  it('a body parser in front of the route (500 RAW_BODY_UNAVAILABLE): the whole fix, and trigger stops at once', async () => {
    const dir = await projectDir();
    const { secrets } = await loadDevSecrets(join(dir, '.service-pay', 'dev-secrets.json'));
    const handle = createWebhookHandler({ secret: secrets.webhookSecret, onPaymentPaid: () => undefined });
    // The app reads the body before the webhook route, as express.json() mounted first does.
    const attempts: number[] = [];
    const app = await startServer(async (req, res) => {
      await readBody(req);
      const answer = await handle(toWebhookRequest(req, { fix: 'Mount serviceWebhook() before express.json().' }));
      if (req.headers['x-service-signature'] !== undefined) attempts.push(answer.status);
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
    cleanup.push(() => app.close());
    // Retries far apart: a second attempt would come long after trigger has returned.
    const sim = await listen(['--forward-to', app.url, '--retry-base-ms', '60000'], dir);
    cleanup.push(async () => sim.child.kill('SIGKILL'));
    const r = await run(['trigger', 'payment.paid'], dir, { SERVICE_PAY_SIMULATOR_URL: sim.started.url });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/original attempt 1: HTTP 500 RAW_BODY_UNAVAILABLE: .*; retry in 60000 ms/);
    // The fix line carries the app's message to its end, where the framework's fix is.
    expect(r.stderr).toMatch(
      /fix: the app cannot see the raw body \(RAW_BODY_UNAVAILABLE\): The signature is computed over the exact raw body, .*Mount serviceWebhook\(\) before express\.json\(\)\.\n/,
    );
    expect(r.stderr).toMatch(
      /Stopped there: every retry would get the same answer\..*'service-pay resend p_\w+' sends it again now/,
    );
    expect(attempts).toEqual([500]);
    sim.child.kill('SIGINT');
    await sim.exit;
  });

  it('a failing handler gets its fix line; after the fix, resend credits the payment once; unknown ids are coded', async () => {
    const dir = await projectDir();
    const { secrets } = await loadDevSecrets(join(dir, '.service-pay', 'dev-secrets.json'));
    let broken = true;
    const app = await startReceiver({
      secret: secrets.webhookSecret,
      work: async () => {
        if (broken) throw new Error('orders table missing');
      },
    });
    cleanup.push(() => app.close());
    const sim = await listen(['--forward-to', app.url, '--max-attempts', '1'], dir);
    cleanup.push(async () => sim.child.kill('SIGKILL'));
    const env = { SERVICE_PAY_SIMULATOR_URL: sim.started.url };

    const triggered = await run(['trigger', 'payment.paid', '--json'], dir, env);
    expect(triggered.code).toBe(1);
    const { payment, problems } = JSON.parse(triggered.stdout);
    expect(problems).toEqual([
      expect.stringMatching(
        /^onPaymentPaid threw \(HANDLER_FAILED: .*\); the app's log has the stack\. Fix the handler, restart the app, then 'service-pay resend <paymentId>'/,
      ),
    ]);
    expect(app.handled).toEqual([]);

    broken = false;
    const resent = await run(['resend', payment.paymentId], dir, env);
    expect(resent.code).toBe(0);
    expect(resent.stderr).toMatch(
      new RegExp(
        `^resend: ${payment.paymentId} again by the simulator at ${sim.started.url}, dl_\\w+ to ${app.url}\\n`,
      ),
    );
    expect(resent.stdout).toMatch(/dl_\w+ redelivery attempt 1: 200 \{"received":true\} \(\d+ ms\) -> succeeded/);
    expect(app.handled.map((e) => e.paymentId)).toEqual([payment.paymentId]);
    // Again: the app answers it as the duplicate it is, and credits nothing more.
    const again = await run(['resend', payment.paymentId, '--json'], dir, env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).deliveries[0].attempts[0].responseBody).toBe('{"received":true,"duplicate":true}');
    expect(app.handled).toHaveLength(1);

    const unknown = await run(['resend', 'p_nope'], dir, env);
    expect(unknown).toMatchObject({ code: 1 });
    expect(unknown.stderr).toMatch(
      /has no payment "p_nope": 'service-pay deliveries' lists its payments.*\(PAYMENT_NOT_FOUND\)/,
    );
    expect(await run(['resend'], dir, env)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/name the payment to resend/),
    });
    const nowhere = await run(['resend', payment.paymentId], dir, {
      SERVICE_PAY_SIMULATOR_URL: await nothingListening(),
    });
    expect(nowhere).toMatchObject({ code: 3, stderr: expect.stringMatching(/no simulator answered at/) });
    sim.child.kill('SIGINT');
    await sim.exit;
  });

  it('refuses the standalone-only options when a simulator runs, instead of ignoring them (exit 2)', async () => {
    const dir = await projectDir();
    const sim = await listen(['--forward-to', 'http://127.0.0.1:9/x'], dir);
    cleanup.push(async () => sim.child.kill('SIGKILL'));
    const env = { SERVICE_PAY_SIMULATOR_URL: sim.started.url };
    for (const flags of [
      ['--max-attempts', '2'],
      ['--retry-base-ms', '10'],
      ['--secrets-file', 'x.json', '--max-attempts', '1'],
    ]) {
      const r = await run(['trigger', 'payment.paid', ...flags], dir, env);
      expect([flags, r.code]).toEqual([flags, 2]);
      expect(r.stderr).toMatch(
        /only for a simulator trigger runs itself, and one already runs at http:\S+ \(up to 8 attempts\)/,
      );
    }
    // Nothing was created by the refused calls.
    const list = await run(['deliveries', '--json'], dir, env);
    expect(JSON.parse(list.stdout)).toEqual([]);
    sim.child.kill('SIGINT');
    await sim.exit;
  });
});
