import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { PaymentPaidEvent } from '@service-pay/core';
import {
  ADAPTER_SCENARIO_SECRET,
  type AdapterUnderTest,
  adapterScenarios,
  createCreditRecorder,
  fetchSender,
} from '@service-pay/core/testing';
import { freePort, untilAnswers } from '@service-pay/test-kit';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { linkPackageInto } from './support/link-package.js';

// One real Next.js app (test/fixture-app), built once and started with `next start`, serves a Node-runtime
// route, an Edge-runtime route and a Pages API route; each runs the whole adapter scenario list.
const appDir = fileURLToPath(new URL('./fixture-app/', import.meta.url));
const nextBin = createRequire(import.meta.url).resolve('next/dist/bin/next');
const recorder = createCreditRecorder();
let recorderServer: Server;
let nextServer: ChildProcess | undefined;
let baseUrl = '';
let output = '';

/** The app credits through this server: the Edge runtime shares no memory with the test, the Node one none either. */
async function startRecorder(): Promise<string> {
  recorderServer = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      await recorder.onPaymentPaid(JSON.parse(Buffer.concat(chunks).toString('utf8')) as PaymentPaidEvent);
      res.writeHead(204).end();
    } catch {
      res.writeHead(500).end();
    }
  });
  recorderServer.listen(0, '127.0.0.1');
  await once(recorderServer, 'listening');
  return `http://127.0.0.1:${(recorderServer.address() as AddressInfo).port}/`;
}

function run(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [nextBin, ...args], {
    cwd: appDir,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => {
    output += d;
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  return child;
}

beforeAll(async () => {
  linkPackageInto(new URL('./fixture-app/', import.meta.url));
  const recorderUrl = await startRecorder();

  // Built without the secret, as CI images often are: the handlers check options on the first request.
  // (Unset, not empty: an empty secret is refused when the handler is made, build included.)
  const build = run(['build'], { SERVICE_WEBHOOK_SECRET: undefined });
  const [code] = (await once(build, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`next build failed (${code}):\n${output}`);

  const port = await freePort();
  nextServer = run(['start', '-p', String(port), '-H', '127.0.0.1'], {
    SERVICE_WEBHOOK_SECRET: ADAPTER_SCENARIO_SECRET,
    CREDIT_RECORDER_URL: recorderUrl,
  });
  baseUrl = `http://127.0.0.1:${port}`;
  await untilAnswers(`${baseUrl}/api/pages`, {
    process: nextServer,
    what: 'next start',
    output: () => output,
    bound: { timeoutMs: 60_000 },
  });
}, 300_000);

afterAll(async () => {
  if (nextServer && nextServer.exitCode === null) {
    const exited = once(nextServer, 'exit');
    nextServer.kill('SIGTERM');
    // `next start` waits for open connections on SIGTERM; don't let one stuck request hold the run.
    const timer = setTimeout(() => nextServer?.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
  await new Promise((resolve) => recorderServer?.close(resolve));
});

const APP_FIX = 'Hand the request over untouched: no request.json()';
const PAGES_FIX = 'export const config = { api: { bodyParser: false } }';
// An App Router route exports POST only, so Next.js itself answers a GET (405). Under `next start` the Edge
// runtime sends no answer before the request body has fully arrived, whatever the route does.
const routes = [
  {
    name: 'App Router, Node.js runtime (createRouteHandler)',
    path: '/api/node',
    getReachesAdapter: false,
    fix: APP_FIX,
  },
  {
    name: 'App Router, Edge runtime (createRouteHandler)',
    path: '/api/edge',
    getReachesAdapter: false,
    fix: APP_FIX,
    early: false,
  },
  {
    name: 'Pages Router API route (createPagesApiHandler)',
    path: '/api/pages',
    getReachesAdapter: true,
    fix: PAGES_FIX,
  },
  // Regression: a Pages route with `config.runtime = 'edge'` got a Request and no res, and answered a
  // misleading RAW_BODY_UNAVAILABLE followed by a TypeError. It is now served through the fetch handler.
  {
    name: 'Pages Router API route on the Edge runtime (createPagesApiHandler)',
    path: '/api/pages-edge',
    getReachesAdapter: true,
    fix: APP_FIX,
    early: false,
  },
];

for (const route of routes) {
  describe(route.name, () => {
    const target: AdapterUnderTest = {
      send: (request) => fetchSender(baseUrl, route.path, `${route.path}-parsed`)(request),
      credits: recorder.credits,
      getReachesAdapter: route.getReachesAdapter,
      parsedBodyFix: route.fix,
      answersBeforeBodyEnds: route.early ?? true,
    };
    for (const c of adapterScenarios(target)) it(c.name, c.run);
  });
}
