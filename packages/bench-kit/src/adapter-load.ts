import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { handRolledVerify as sharedHandRolledVerify } from './hand-rolled-verify.js';

/**
 * Loopback load for the adapter benchmarks: autocannon in a process of its own (so the server under test keeps
 * a core to itself on a 2-core machine, and its CPU time is its own), every request a freshly signed delivery
 * of a new payment. Shared by the Express and the Fastify benchmark.
 */

const require = createRequire(import.meta.url);
const LOAD_RUNNER = fileURLToPath(new URL('./load-runner.mjs', import.meta.url));
/** The secret `signed-request.cjs` signs with. */
export const BENCH_SECRET: string = (require('./signed-request.cjs') as { SECRET: string }).SECRET;

/** The same shape as the bench package's `TargetCheck`, so `run()` results can be gathered with its own. */
export interface AdapterBenchCheck {
  of: string;
  over: string;
  atLeast: number;
  ratio: number;
  met: boolean;
}

export interface LoadOptions {
  /** Seconds per measured run. Default 1.5. */
  durationSec?: number;
  /** Rounds; each measures every route once, back to back. Default 15. */
  rounds?: number;
  connections?: number;
}

export interface RouteLoad {
  requestsPerSec: number;
  /** This process's CPU time per request: steadier than requests/s on a shared machine. */
  cpuMicrosPerRequest: number;
}

/**
 * Loads one route (a full URL) from a forked autocannon process and measures requests/s and this process's
 * CPU per request; throws if any answer was not 2xx.
 */
export async function loadRoute(url: string, durationSec: number, connections: number): Promise<RouteLoad> {
  const child = fork(LOAD_RUNNER, [url, String(durationSec), String(connections)], { execArgv: [] });
  let cpuAtStart = process.cpuUsage();
  const done = new Promise<LoadResult>((resolve, reject) => {
    child.on('message', (message: { type: 'start' } | LoadResult) => {
      if (message.type === 'start') cpuAtStart = process.cpuUsage();
      else resolve(message);
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the load generator exited (${code}) before reporting`)));
  });
  const result = await done;
  const cpu = process.cpuUsage(cpuAtStart);
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load`);
  }
  return { requestsPerSec: result.average, cpuMicrosPerRequest: (cpu.user + cpu.system) / result.total };
}

interface LoadResult {
  type: 'done';
  total: number;
  average: number;
  non2xx: number;
  errors: number;
}

/** A freshly started app serving the compared routes (name -> full URL); `close` stops it. */
export interface BenchApp {
  urls: Record<string, string>;
  close: () => Promise<void>;
}

/** A ratio of requests/s to check: `of` / `over` (route names) must be at least `atLeast`. */
export interface RouteTarget {
  of: string;
  over: string;
  atLeast: number;
}

/**
 * Measures every route of the app in rounds after a 1 s warm-up of each, on a fresh app per run: the
 * adapter's default in-memory store then holds one run's deliveries, as in a merchant's app, rather than the
 * whole benchmark's. Within a round the routes run back to back (the order reversed every other round), and
 * a target's ratio is taken per round, then the median over rounds: on a shared machine whose speed drifts
 * from one minute to the next, a ratio of runs made seconds apart is far steadier than a ratio of medians
 * gathered over the whole benchmark. Prints requests/s and CPU per request per route (medians), and each
 * target's median ratio with its range.
 */
export async function compareRoutes(
  title: string,
  start: () => Promise<BenchApp>,
  targets: RouteTarget[],
  options: LoadOptions = {},
): Promise<AdapterBenchCheck[]> {
  const durationSec = options.durationSec ?? 1.5;
  const rounds = options.rounds ?? 15;
  const connections = options.connections ?? 20;
  const measure = async (name: string, seconds: number) => {
    const app = await start();
    try {
      return await loadRoute(app.urls[name] as string, seconds, connections);
    } finally {
      await app.close();
    }
  };
  const probe = await start();
  const names = Object.keys(probe.urls);
  await probe.close();
  for (const name of names) await measure(name, 1);
  const runs: Array<Map<string, RouteLoad>> = [];
  for (let r = 0; r < rounds; r++) {
    const round = new Map<string, RouteLoad>();
    for (const name of r % 2 === 0 ? names : [...names].reverse()) round.set(name, await measure(name, durationSec));
    runs.push(round);
  }
  const of = (name: string, pick: (load: RouteLoad) => number) =>
    runs.map((round) => pick(round.get(name) as RouteLoad));
  console.log(
    `\n## ${title} (loopback, autocannon in its own process, ${connections} connections, ${rounds} rounds of ${durationSec} s per route)`,
  );
  for (const name of names) {
    const rps = median(of(name, (load) => load.requestsPerSec));
    const cpu = median(of(name, (load) => load.cpuMicrosPerRequest));
    console.log(
      `  ${name.padEnd(44)} ${Math.round(rps).toLocaleString('en-US').padStart(10)} req/s ${cpu.toFixed(1).padStart(8)} us CPU/req`,
    );
  }
  return targets.map((t) => {
    const perRound = runs.map((round) => {
      const a = round.get(t.of) as RouteLoad;
      const b = round.get(t.over) as RouteLoad;
      return { rps: a.requestsPerSec / b.requestsPerSec, cpu: b.cpuMicrosPerRequest / a.cpuMicrosPerRequest };
    });
    const ratios = perRound.map((p) => p.rps);
    const ratio = median(ratios);
    const met = ratio >= t.atLeast;
    console.log(
      `  target: ${t.of} / ${t.over} = ${ratio.toFixed(2)}x req/s (rounds ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}), ${median(perRound.map((p) => p.cpu)).toFixed(2)}x CPU/req (>= ${t.atLeast}x) ${met ? 'MET' : 'MISSED'}`,
    );
    return { of: `${title}: ${t.of}`, over: `${title}: ${t.over}`, atLeast: t.atLeast, ratio, met };
  });
}

/**
 * The baseline's work (./hand-rolled-verify.ts, the one copy), with the secret
 * `signed-request.cjs` signs with. Throws on a bad delivery.
 *
 * @example
 * ```ts
 * const event = handRolledVerify(req.body, req.headers['x-service-signature']);
 * ```
 */
export function handRolledVerify(
  body: Buffer,
  header: string | string[] | undefined,
  secret: string = BENCH_SECRET,
): unknown {
  return sharedHandRolledVerify(body, header, secret);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
