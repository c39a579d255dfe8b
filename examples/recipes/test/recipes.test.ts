import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { freePort, untilAnswers } from '@service-pay/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Each recipe is a real app of its framework, built as the framework builds it and started as its own
// process on a free port; real signed deliveries go to it over HTTP. Every recipe: a delivery is credited
// (the app prints CREDITED <paymentId>), its duplicate is answered without a second credit, a tampered one
// gets 401; then the framework's raw-body trap answers 500 RAW_BODY_UNAVAILABLE (never a credit, never a
// 401 that would send you hunting for a wrong secret), and its fix credits.
const root = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
const SECRET = 'whsec_recipes_tests_0123456789abcdef';
const bin = (name: string) => `${root}node_modules/.bin/${name}`;

interface Recipe {
  name: string;
  /** Build step, once, before any variant starts (frameworks that compile their routes). */
  build?: { cwd: string; command: string; args: string[] };
  /** The command line of the app, given its port. */
  start: (port: number) => string[];
  /** Variants that show the raw-body trap and its fix; absent: the trap is shown inside `plain`'s app. */
  variants: Array<'trap' | 'fix'>;
}

const tsx = (file: string) => () => [process.execPath, '--import', 'tsx', file];
const recipes: Recipe[] = [
  { name: 'Koa 3 + @koa/router', start: tsx('koa/server.ts'), variants: ['trap', 'fix'] },
  { name: 'Elysia 1.4 on Node (@elysiajs/node)', start: tsx('elysia/server.ts'), variants: ['trap'] },
  { name: 'h3 1.15 (Nitro, Nuxt)', start: tsx('h3/server.ts'), variants: ['trap', 'fix'] },
  {
    name: 'Google Cloud Functions (functions-framework)',
    start: (port) => [
      process.execPath,
      'node_modules/@google-cloud/functions-framework/build/src/main.js',
      '--target=webhook',
      '--source=gcf/index.js',
      `--port=${port}`,
    ],
    variants: ['trap'],
  },
  {
    name: 'SvelteKit 2 (+server.ts, adapter-node)',
    build: { cwd: 'sveltekit', command: bin('vite'), args: ['build'] },
    start: () => [process.execPath, 'sveltekit/build/index.js'],
    variants: ['trap'],
  },
  {
    name: 'React Router 7 (framework mode, resource route action)',
    build: { cwd: 'react-router', command: bin('react-router'), args: ['build'] },
    start: () => [process.execPath, 'node_modules/@react-router/serve/bin.js', 'react-router/build/server/index.js'],
    variants: ['trap'],
  },
  {
    name: 'Astro 5 (endpoint, @astrojs/node)',
    build: { cwd: 'astro', command: bin('astro'), args: ['build'] },
    start: () => [process.execPath, 'astro/dist/server/entry.mjs'],
    variants: ['trap'],
  },
];

/** One running app: its URL and what it printed. */
class App {
  readonly output: string[] = [];
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(recipe: Recipe, variant: string): Promise<App> {
    const port = await freePort();
    const [command, ...args] = recipe.start(port);
    const child = spawn(command as string, args, {
      cwd: root,
      env: {
        ...process.env,
        SERVICE_WEBHOOK_SECRET: SECRET,
        RECIPE_VARIANT: variant,
        PORT: String(port),
        HOST: '127.0.0.1',
        NODE_ENV: 'production',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const app = new App(child, `http://127.0.0.1:${port}/webhooks/service`);
    child.stdout?.on('data', (chunk: Buffer) => app.output.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => app.output.push(chunk.toString()));
    try {
      await untilAnswers(`http://127.0.0.1:${port}/`, {
        process: child,
        what: `${recipe.name} (${variant})`,
        output: () => app.output.join(''),
        bound: { timeoutMs: 60_000 },
      });
      return app;
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }

  credits(paymentId: string): number {
    return this.output
      .join('')
      .split('\n')
      .filter((line) => line === `CREDITED ${paymentId}`).length;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

async function deliver(url: string, body: string, headers: Record<string, string>) {
  const response = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  return { status: response.status, json: JSON.parse(text) as Record<string, unknown> };
}

const apps: App[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.stop()));
});

describe.each(recipes)('$name', (recipe) => {
  beforeAll(async () => {
    if (recipe.build === undefined) return;
    await run(recipe.build.command, recipe.build.args, { cwd: `${root}${recipe.build.cwd}`, timeout: 240_000 });
  }, 300_000);

  it('credits a signed delivery once, answers its duplicate, refuses a tampered one', async () => {
    const app = await App.start(recipe, 'plain');
    apps.push(app);
    const event = samplePaymentPaidEvent();
    const { body, headers } = signWebhook({ event, secret: SECRET });
    expect(await deliver(app.url, body, headers)).toEqual({ status: 200, json: { received: true } });
    expect(await deliver(app.url, body, headers)).toEqual({ status: 200, json: { received: true, duplicate: true } });
    const tampered = await deliver(app.url, body.replace(event.amount, `${event.amount}1`), headers);
    expect(tampered.status).toBe(401);
    expect(tampered.json.error).toBe('SIGNATURE_MISMATCH');
    expect(app.credits(event.paymentId)).toBe(1);
  });

  it.each(recipe.variants)('raw-body %s', async (variant) => {
    const app = await App.start(recipe, variant);
    apps.push(app);
    const event = samplePaymentPaidEvent();
    const { body, headers } = signWebhook({ event, secret: SECRET });
    const answer = await deliver(app.url, body, headers);
    if (variant === 'trap') {
      expect(answer.status).toBe(500);
      expect(answer.json.error).toBe('RAW_BODY_UNAVAILABLE');
      expect(app.credits(event.paymentId)).toBe(0);
    } else {
      expect(answer).toEqual({ status: 200, json: { received: true } });
      expect(app.credits(event.paymentId)).toBe(1);
    }
    await app.stop();
  });
});
