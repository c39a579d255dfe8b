import { createHmac, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

/**
 * Loopback load for the adapter benchmarks: autocannon in its own worker thread (so the server under test
 * keeps a core to itself on a 2-core machine), every request a freshly signed delivery of a new payment.
 * Shared by the Express and the Fastify benchmark.
 */

const require = createRequire(import.meta.url);
const SETUP_REQUEST = fileURLToPath(new URL('./signed-request.cjs', import.meta.url));
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
  /** Seconds per measured run. Default 5. */
  durationSec?: number;
  /** Measured runs per route, interleaved ABBA so drift hits both alike. Default 2. */
  rounds?: number;
  connections?: number;
}

/** Requests/s of one route under loopback load; throws if any answer was not 2xx. */
export async function requestsPerSecond(url: string, durationSec: number, connections: number): Promise<number> {
  const result = await autocannon({
    url,
    connections,
    duration: durationSec,
    workers: 1,
    // A file path, not a function: functions cannot cross into autocannon's worker thread.
    requests: [{ method: 'POST', setupRequest: SETUP_REQUEST as unknown as autocannon.Request['setupRequest'] }],
  } as autocannon.Options);
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load`);
  }
  return result.requests.average;
}

/**
 * Measures `adapter` and `baseline` (full URLs) in interleaved rounds after a 1 s warm-up of each, prints
 * requests/s and their ratio, and returns the ratio checked against `atLeast`.
 */
export async function compareRoutes(
  title: string,
  routes: { adapter: string; baseline: string },
  atLeast: number,
  options: LoadOptions = {},
): Promise<AdapterBenchCheck> {
  const durationSec = options.durationSec ?? 5;
  const rounds = options.rounds ?? 2;
  const connections = options.connections ?? 20;
  await requestsPerSecond(routes.adapter, 1, connections);
  await requestsPerSecond(routes.baseline, 1, connections);
  const samples = { adapter: [] as number[], baseline: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (['adapter', 'baseline'] as const) : (['baseline', 'adapter'] as const);
    for (const name of order) samples[name].push(await requestsPerSecond(routes[name], durationSec, connections));
  }
  const adapter = median(samples.adapter);
  const baseline = median(samples.baseline);
  const ratio = adapter / baseline;
  const met = ratio >= atLeast;
  console.log(`\n## ${title} (loopback, autocannon, ${connections} connections, ${rounds}x${durationSec} s each)`);
  console.log(
    `  adapter route                        ${Math.round(adapter).toLocaleString('en-US').padStart(10)} req/s`,
  );
  console.log(
    `  hand-rolled verify route (baseline)  ${Math.round(baseline).toLocaleString('en-US').padStart(10)} req/s`,
  );
  console.log(`  target: adapter / baseline = ${ratio.toFixed(2)}x (>= ${atLeast}x) ${met ? 'MET' : 'MISSED'}`);
  return { of: `${title}: adapter`, over: `${title}: hand-rolled verify`, atLeast, ratio, met };
}

/**
 * The baseline's work: what a careful hand-written route does with the raw bytes. Throws on a bad delivery.
 *
 * @example
 * ```ts
 * const event = handRolledVerify(req.body, req.headers['x-service-signature']);
 * ```
 */
export function handRolledVerify(body: Buffer, header: string | string[] | undefined): unknown {
  if (typeof header !== 'string') throw new Error('missing signature');
  const comma = header.indexOf(',');
  const t = header.slice(2, comma);
  const received = Buffer.from(header.slice(comma + 4), 'hex');
  const expected = createHmac('sha256', BENCH_SECRET).update(`${t}.`).update(body).digest();
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) throw new Error('bad signature');
  if (Math.abs(Date.now() / 1000 - Number(t)) > 300) throw new Error('stale');
  return JSON.parse(body.toString('utf8'));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
