import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ShopConfig } from '@service-pay/example-shop-kit';
import { describeShop } from '@service-pay/example-shop-kit/testing';
import { freePort, untilAnswers } from '@service-pay/test-kit';

// The real app: one `next build`, then `next start` on a free port with the shop's configuration as its
// environment, as a merchant would deploy it.
const appDir = fileURLToPath(new URL('..', import.meta.url));
const nextBin = createRequire(import.meta.url).resolve('next/dist/bin/next');
const SHOP_ENV = ['SERVICE_API_URL', 'SERVICE_API_KEY', 'SERVICE_API_SECRET', 'SERVICE_WEBHOOK_SECRET', 'PUBLIC_URL'];

function run(args: string[], env: Record<string, string | undefined>, output: string[]): ChildProcess {
  const child = spawn(process.execPath, [nextBin, ...args], {
    cwd: appDir,
    // As deployed: production, not the `test` vitest sets.
    env: { ...process.env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so close() stops whatever it started too.
    detached: true,
  });
  child.stdout?.on('data', (d) => output.push(String(d)));
  child.stderr?.on('data', (d) => output.push(String(d)));
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), name);
    } catch {
      child.kill(name);
    }
  };
  signal('SIGTERM');
  // `next start` waits for open connections on SIGTERM; don't let one stuck request hold the run.
  const timer = setTimeout(() => signal('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

let built: Promise<void> | undefined;

/** One `next build` per run, without the shop's environment: nothing may read it at build time. */
function build(): Promise<void> {
  built ??= (async () => {
    const output: string[] = [];
    const started = Date.now();
    // Unset, not empty: an empty secret is refused as soon as a handler is made, build included.
    const child = run(['build'], Object.fromEntries(SHOP_ENV.map((k) => [k, undefined])), output);
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`next build failed (${code}):\n${output.join('')}`);
    console.log(`next build: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  })();
  return built;
}

async function startShop(config: ShopConfig) {
  await build();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const output: string[] = [];
  const server = run(
    ['start', '-p', String(port), '-H', '127.0.0.1'],
    {
      SERVICE_API_URL: config.serviceUrl,
      SERVICE_API_KEY: config.apiKey,
      SERVICE_API_SECRET: config.apiSecret,
      SERVICE_WEBHOOK_SECRET: config.webhookSecret,
      PUBLIC_URL: url,
    },
    output,
  );
  // Waits for the server and boots the shop (PGlite) before the first scenario. Through the page, on
  // purpose: the routes then use a shop booted by another bundle's copy of the shop kit, and must still
  // answer its errors with their codes.
  const answer = await untilAnswers(`${url}/`, {
    process: server,
    what: 'next start',
    output: () => output.join(''),
    bound: { timeoutMs: 90_000 },
    requestTimeoutMs: 60_000,
  });
  const page = await answer.text();
  if (!answer.ok || !page.includes('<h1>Orders</h1>') || page.includes('could not start')) {
    throw new Error(`GET / answered ${answer.status}:\n${page}\n${output.join('')}`);
  }
  return { url, close: () => stop(server) };
}

describeShop('next-orders', startShop);
