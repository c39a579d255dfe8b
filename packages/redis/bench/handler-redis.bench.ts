/**
 * The Redis path against the code a merchant would otherwise write, same Redis, same ioredis
 * client, same signed bytes, the same hand-rolled verification in front of each:
 *   ours:       createWebhookHandler + RedisDedupeStore (lease, fence, heartbeat, fingerprint, 409 on overlap);
 *   hand-rolled: handRolledVerify, then `SET key token NX PX lease`; on null `GET` tells a duplicate ('done')
 *               from one in progress (409); after the handler `SET key done PX retain`;
 *   hand-rolled, one trip: the same with the claim-or-read in one command, `SET key token PX lease NX GET`
 *               (Redis >= 7), so a duplicate costs 1 round trip as ours does: the stricter anchor, printed beside;
 *   Powertools: handRolledVerify, then `makeIdempotent` from @aws-lambda-powertools/idempotency with its
 *               Redis layer (`CachePersistenceLayer`), the ioredis client behind its small CacheClient
 *               interface (get, set with EX/NX, del).
 * Four rows: fresh and duplicate deliveries, one at a time and 32 in flight. Rounds run interleaved (the
 * order flips every round); each ratio is the median of the per-round ratios, with its range. Round trips
 * are counted on the client's socket (every command ioredis writes is one request and one reply); CPU per
 * delivery is printed for this process and for the Redis server (INFO cpu), the steadier figures on a shared
 * machine, and what the floor in bench/README.md is worked out from.
 * It also runs two overlapping deliveries of one payment through each, and prints how often the handler ran.
 *
 *   node --import tsx bench/handler-redis.bench.ts        (REDIS_URL to use another Redis)
 */
import { pathToFileURL } from 'node:url';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import type { CacheClient } from '@aws-lambda-powertools/idempotency/cache/types';
import { handRolledVerify, SECRET, type SignedDelivery, signedDeliveries } from '@service-pay/bench-kit';
import { createWebhookHandler } from '@service-pay/core';
import { latch } from '@service-pay/core/testing';
import { failFastRedisOptions, RedisDedupeStore } from '@service-pay/redis';
import { Redis } from 'ioredis';

const ROUNDS = 7;
const LEASE_MS = 10_000;
/** Short: the bench writes tens of thousands of keys into a shared Redis, and removes them at the end too. */
const RETAIN_MS = 300_000;
const TARGET_HAND = 0.95;
/** "Ahead of Powertools": above 1x. */
const TARGET_POWERTOOLS = 1;

interface Row {
  kind: 'fresh' | 'duplicate';
  inFlight: number;
  /** Deliveries per contestant per round. */
  perRound: number;
}

const ROWS: Row[] = [
  { kind: 'fresh', inFlight: 1, perRound: 600 },
  { kind: 'fresh', inFlight: 32, perRound: 2_000 },
  { kind: 'duplicate', inFlight: 1, perRound: 1_000 },
  { kind: 'duplicate', inFlight: 32, perRound: 3_000 },
];

const rowName = (row: Row) => `${row.kind}, ${row.inFlight === 1 ? 'sequential' : `${row.inFlight} in flight`}`;

/** Answers one signed delivery with an HTTP status. */
type Receiver = (delivery: SignedDelivery) => Promise<number>;
type OnPaid = (paymentId: string) => void | Promise<void>;
const CONTESTANTS = ['ours', 'hand-rolled', 'hand-rolled, one trip', 'Powertools'] as const;
type Contestant = (typeof CONTESTANTS)[number];

/** What one comparison measured, in the shape `bench/src/run-all.ts` gathers. */
export interface RedisBenchCheck {
  of: string;
  over: string;
  atLeast: number;
  ratio: number;
  met: boolean;
}

/** Our handler with the store under test. */
function ours(client: Redis, keyPrefix: string, onPaid: OnPaid): Receiver {
  const handle = createWebhookHandler({
    secret: SECRET,
    store: new RedisDedupeStore({ client, keyPrefix }),
    leaseMs: LEASE_MS,
    retainMs: RETAIN_MS,
    onPaymentPaid: (event) => onPaid(event.paymentId),
  });
  return async (d) => (await handle({ method: 'POST', headers: d.headers, rawBody: d.body })).status;
}

/** The receiver a merchant writes with ioredis: no fence, no heartbeat, no fingerprint. */
function handRolled(client: Redis, keyPrefix: string, onPaid: OnPaid): Receiver {
  let tokens = 0;
  return async (d) => {
    const event = handRolledVerify(d.body, d.headers['x-service-signature'], SECRET) as { paymentId: string };
    const key = `${keyPrefix}payment.paid:${event.paymentId}`;
    const token = `t${++tokens}`;
    if ((await client.set(key, token, 'PX', LEASE_MS, 'NX')) === null) {
      return (await client.get(key)) === 'done' ? 200 : 409;
    }
    try {
      await onPaid(event.paymentId);
    } catch (error) {
      await client.del(key);
      throw error;
    }
    await client.set(key, 'done', 'PX', RETAIN_MS);
    return 200;
  };
}

/** The same receiver with the claim and the read in one command (Redis >= 7): a duplicate costs 1 round trip. */
function handRolledOneTrip(client: Redis, keyPrefix: string, onPaid: OnPaid): Receiver {
  let tokens = 0;
  return async (d) => {
    const event = handRolledVerify(d.body, d.headers['x-service-signature'], SECRET) as { paymentId: string };
    const key = `${keyPrefix}payment.paid:${event.paymentId}`;
    const previous = await client.set(key, `t${++tokens}`, 'PX', LEASE_MS, 'NX', 'GET');
    if (previous !== null) return previous === 'done' ? 200 : 409;
    try {
      await onPaid(event.paymentId);
    } catch (error) {
      await client.del(key);
      throw error;
    }
    await client.set(key, 'done', 'PX', RETAIN_MS);
    return 200;
  };
}

/** Powertools' CacheClient (written for node-redis and Valkey GLIDE) over the same ioredis client. */
function cacheClient(client: Redis): CacheClient {
  return {
    get: (name) => client.get(name),
    set: (name, value, options) => {
      const { EX, NX } = (options ?? {}) as { EX?: number; NX?: boolean };
      const key = String(name);
      const text = value as string;
      if (EX === undefined) return NX ? client.set(key, text, 'NX') : client.set(key, text);
      return NX ? client.set(key, text, 'EX', EX, 'NX') : client.set(key, text, 'EX', EX);
    },
    del: (keys) => client.del(...keys),
  };
}

/**
 * Powertools' idempotency around the same handler. `lambdaContext` stands in for what Lambda hands a
 * function: without it (any server outside Lambda) an in-progress record carries no expiry of its own.
 */
function powertools(
  client: Redis,
  keyPrefix: string,
  onPaid: OnPaid,
  lambdaContext?: { getRemainingTimeInMillis: () => number },
): Receiver {
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'paymentId', expiresAfterSeconds: RETAIN_MS / 1000 });
  if (lambdaContext !== undefined) config.registerLambdaContext(lambdaContext as never);
  const credit = makeIdempotent(
    async (event: { paymentId: string }) => {
      await onPaid(event.paymentId);
      return { received: true };
    },
    { persistenceStore: new CachePersistenceLayer({ client: cacheClient(client) }), config, keyPrefix },
  );
  return async (d) => {
    const event = handRolledVerify(d.body, d.headers['x-service-signature'], SECRET) as { paymentId: string };
    try {
      await credit(event);
      return 200;
    } catch (error) {
      if (error instanceof IdempotencyAlreadyInProgressError) return 409;
      throw error;
    }
  };
}

/**
 * Outside Lambda, Powertools warns on every delivery ("Could not determine remaining time left. Did you call
 * registerLambdaContext on IdempotencyConfig?"). Counted, not printed, while it runs: a terminal write per
 * delivery would measure the terminal.
 */
let powertoolsWarnings = 0;
async function quietly<T>(run: () => Promise<T>): Promise<T> {
  const warn = console.warn;
  console.warn = () => {
    powertoolsWarnings++;
  };
  try {
    return await run();
  } finally {
    console.warn = warn;
  }
}

/** Every command the client writes: one request and one reply each. */
function countCommands(client: Redis): () => number {
  let sent = 0;
  const original = client.sendCommand.bind(client);
  client.sendCommand = ((...args: unknown[]) => {
    sent++;
    return (original as (...a: unknown[]) => unknown)(...args);
  }) as Redis['sendCommand'];
  return () => sent;
}

interface Measured {
  perSec: number;
  roundTrips: number;
  /** This process's CPU per delivery (us): steadier than deliveries/s on a shared machine; Redis's own not included. */
  cpuMicros: number;
  /** The Redis server's CPU per delivery (us), from INFO cpu: shared with whatever else uses that Redis. */
  redisCpuMicros: number;
}

/** The Redis server's CPU time so far (us), read on a connection of its own (not counted as a round trip). */
async function redisCpu(stats: Redis): Promise<number> {
  const info = await stats.info('cpu');
  const seconds = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
}

/** Delivers each of `deliveries` once, `inFlight` at a time; deliveries per second, round trips and CPU each. */
async function drive(
  receive: Receiver,
  deliveries: SignedDelivery[],
  inFlight: number,
  commands: () => number,
  stats: Redis,
): Promise<Measured> {
  const redisBefore = await redisCpu(stats);
  const before = commands();
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < deliveries.length) {
        const status = await receive(deliveries[next++] as SignedDelivery);
        if (status !== 200) throw new Error(`bench: a delivery was answered ${status}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  return {
    perSec: deliveries.length / seconds,
    roundTrips: (commands() - before) / deliveries.length,
    cpuMicros: (user + system) / deliveries.length,
    redisCpuMicros: ((await redisCpu(stats)) - redisBefore) / deliveries.length,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const range = (xs: number[]) => `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`;

/**
 * Two deliveries of one payment, the second sent while the first one's handler runs: how often did the
 * handler run? Exactly once is 1 (the second is told 409 and retried later by the sender).
 */
async function overlapping(
  make: (onPaid: OnPaid) => Receiver,
): Promise<{ runs: number; statuses: Array<number | string> }> {
  let runs = 0;
  const entered = latch();
  const release = latch();
  const receive = make(async () => {
    runs++;
    entered.open();
    await release.opened;
  });
  const [delivery] = signedDeliveries(1) as [SignedDelivery];
  const first = receive(delivery);
  await entered.opened;
  // The second either answers while the first still runs (409), or enters the handler and waits at the gate.
  const second = receive(delivery).catch((error: Error) => error.name);
  await Promise.race([second, new Promise((resolve) => setTimeout(resolve, 200))]);
  release.open();
  return { runs, statuses: [await first, await second] };
}

/**
 * Runs the four rows and the overlap check; prints them and returns each target's check.
 *
 * @example
 * ```ts
 * import { run } from '../packages/redis/bench/handler-redis.bench.ts';
 * const checks = await run();
 * ```
 */
export async function run(): Promise<RedisBenchCheck[]> {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const client = new Redis(url, failFastRedisOptions());
  client.on('error', () => {});
  await new Promise((resolve) => client.once('ready', resolve));
  const commands = countCommands(client);
  const stats = new Redis(url, failFastRedisOptions());
  stats.on('error', () => {});
  await new Promise((resolve) => stats.once('ready', resolve));
  const version = /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? 'unknown';
  const base = `bench:service-pay:${Date.now().toString(36)}:`;
  let credited = 0;
  const countCredit: OnPaid = () => {
    credited++;
  };
  const receivers: Record<Contestant, Receiver> = {
    ours: ours(client, `${base}ours:`, countCredit),
    'hand-rolled': handRolled(client, `${base}hand:`, countCredit),
    'hand-rolled, one trip': handRolledOneTrip(client, `${base}hand1:`, countCredit),
    Powertools: powertools(client, `${base}pt`, countCredit),
  };
  const receive = (who: Contestant, d: SignedDelivery[], inFlight: number): Promise<Measured> =>
    who === 'Powertools'
      ? quietly(() => drive(receivers[who], d, inFlight, commands, stats))
      : drive(receivers[who], d, inFlight, commands, stats);
  const checks: RedisBenchCheck[] = [];
  try {
    console.log(
      `\n## Redis ${version} on loopback: handler + RedisDedupeStore vs hand-rolled ioredis vs Powertools idempotency (Redis layer), ${ROUNDS} interleaved rounds`,
    );
    console.log(
      '  per round: ratio of deliveries/s; median (range over rounds). CPU: us per delivery, median over rounds.',
    );
    for (const row of ROWS) {
      // Duplicates: payments each contestant credited before the clock starts (each has its own prefix).
      const seen = row.kind === 'duplicate' ? signedDeliveries(Math.min(row.perRound, 1_000)) : [];
      for (const who of CONTESTANTS) await receive(who, seen, 8);
      const replay = () => Array.from({ length: row.perRound }, (_, i) => seen[i % seen.length] as SignedDelivery);
      const samples = Object.fromEntries(CONTESTANTS.map((c) => [c, [] as Measured[]])) as Record<
        Contestant,
        Measured[]
      >;
      // Round 0 warms up (JIT, scripts loaded on the connection) and is not counted.
      for (let round = 0; round <= ROUNDS; round++) {
        // Fresh: one new batch per round, the same bytes for all (each contestant has its own key prefix).
        const batch = row.kind === 'fresh' ? signedDeliveries(row.perRound) : replay();
        const order = round % 2 === 0 ? [...CONTESTANTS] : [...CONTESTANTS].reverse();
        const creditedBefore = credited;
        for (const who of order) {
          const measured = await receive(who, batch, row.inFlight);
          if (round > 0) samples[who].push(measured);
        }
        const expected = row.kind === 'fresh' ? row.perRound * CONTESTANTS.length : 0;
        if (credited - creditedBefore !== expected) {
          throw new Error(`bench: ${credited - creditedBefore} credits in a round, expected ${expected}`);
        }
      }
      const perRound = (a: Contestant, b: Contestant) =>
        samples[a].map((s, i) => s.perSec / (samples[b][i] as Measured).perSec);
      const hand = perRound('ours', 'hand-rolled');
      const oneTrip = perRound('ours', 'hand-rolled, one trip');
      const pt = perRound('ours', 'Powertools');
      const ratio = (xs: number[]) => `${median(xs).toFixed(2)}x (${range(xs)})`;
      const each = (f: (m: Measured[]) => string) => CONTESTANTS.map((c) => `${c} ${f(samples[c])}`).join(', ');
      console.log(`  ${rowName(row)}`);
      console.log(`    deliveries/s: ${each((m) => String(Math.round(median(m.map((x) => x.perSec)))))}`);
      console.log(
        `    ours / hand-rolled ${ratio(hand)}; ours / Powertools ${ratio(pt)}; ours / hand-rolled, one trip ${ratio(oneTrip)}`,
      );
      console.log(`    round trips per delivery: ${each((m) => (m.at(-1) as Measured).roundTrips.toFixed(2))}`);
      console.log(`    CPU, this process: ${each((m) => median(m.map((x) => x.cpuMicros)).toFixed(0))}`);
      console.log(`    CPU, Redis server: ${each((m) => median(m.map((x) => x.redisCpuMicros)).toFixed(1))}`);
      checks.push(
        {
          of: `Redis, ${rowName(row)}: handler + RedisDedupeStore`,
          over: 'hand-rolled ioredis',
          atLeast: TARGET_HAND,
          ratio: median(hand),
          met: median(hand) >= TARGET_HAND,
        },
        {
          of: `Redis, ${rowName(row)}: handler + RedisDedupeStore`,
          over: 'Powertools Redis layer',
          atLeast: TARGET_POWERTOOLS,
          ratio: median(pt),
          met: median(pt) > TARGET_POWERTOOLS,
        },
      );
    }
    console.log(
      `  Powertools outside Lambda: ${powertoolsWarnings} console warnings ("Could not determine remaining time left") in this run, one per delivery`,
    );
    console.log('  two overlapping deliveries of one payment (the second sent while the first runs its handler):');
    const cases: Array<[string, (onPaid: OnPaid) => Receiver]> = [
      ['ours', (onPaid) => ours(client, `${base}overlap:ours:`, onPaid)],
      ['hand-rolled', (onPaid) => handRolled(client, `${base}overlap:hand:`, onPaid)],
      ['hand-rolled, one trip', (onPaid) => handRolledOneTrip(client, `${base}overlap:hand1:`, onPaid)],
      ['Powertools, outside Lambda', (onPaid) => powertools(client, `${base}overlap:pt`, onPaid)],
      [
        'Powertools, a Lambda context registered',
        (onPaid) => powertools(client, `${base}overlap:ptl`, onPaid, { getRemainingTimeInMillis: () => LEASE_MS }),
      ],
    ];
    for (const [name, make] of cases) {
      const { runs, statuses } = await quietly(() => overlapping(make));
      console.log(`    ${name.padEnd(42)} handler ran ${runs}x, answers ${statuses.join(' and ')}`);
    }
    return checks;
  } finally {
    await removeKeys(client, base);
    client.disconnect();
    stats.disconnect();
  }
}

async function removeKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [nextCursor, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await client.unlink(...keys);
    cursor = nextCursor;
  } while (cursor !== '0');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const checks = await run();
  process.exitCode = checks.every((c) => c.met) ? 0 : 1;
}
