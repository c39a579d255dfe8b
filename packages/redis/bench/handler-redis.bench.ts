/**
 * The core handler end to end (verify, claim, run, complete) with RedisDedupeStore against the same
 * handler with MemoryDedupeStore: fresh payment ids, 32 deliveries in flight, Redis on loopback.
 * Rounds of both run interleaved in one process and the medians are compared, so the ratio holds on a
 * noisy machine where absolute numbers do not. Target: Redis >= 0.5x memory.
 *
 *   node --import tsx bench/handler-redis.bench.ts        (REDIS_URL to use another Redis)
 */
import { pathToFileURL } from 'node:url';
import {
  createWebhookHandler,
  type DedupeStore,
  MemoryDedupeStore,
  signWebhook,
  type WebhookRequest,
} from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { Redis } from 'ioredis';
import { failFastRedisOptions, RedisDedupeStore } from '../src/index.js';

const SECRET = 'whsec_bench_redis_0123456789abcdef';
const CONCURRENCY = 32;
const PER_ROUND = 4_000;
const ROUNDS = 5;
const TARGET = 0.5;

/** What `run` measured. */
export interface RedisBenchResult {
  name: string;
  memoryOpsPerSec: number;
  redisOpsPerSec: number;
  /** redis / memory, with the client built from `failFastRedisOptions()`. */
  ratio: number;
  /** The same with ioredis' `enableAutoPipelining` on as well, for comparison. */
  autoPipeliningRatio: number;
  target: number;
  met: boolean;
}

function freshDeliveries(count: number): WebhookRequest[] {
  return Array.from({ length: count }, () => {
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
    return { method: 'POST', headers, rawBody: Buffer.from(body) };
  });
}

/** Delivers every request once, `CONCURRENCY` at a time; returns deliveries per second. */
async function round(store: DedupeStore): Promise<number> {
  // retainMs short: the bench writes thousands of keys into a shared Redis and should leave nothing behind.
  const handle = createWebhookHandler({ secret: SECRET, store, retainMs: 60_000, onPaymentPaid: () => {} });
  const deliveries = freshDeliveries(PER_ROUND);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < deliveries.length) {
        const answer = await handle(deliveries[next++]!);
        if (answer.status !== 200) throw new Error(`bench delivery answered ${answer.status}: ${answer.body}`);
      }
    }),
  );
  return PER_ROUND / ((performance.now() - started) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Runs the comparison and prints one line with the ratio.
 *
 * @example
 * ```ts
 * import { run } from '../packages/redis/bench/handler-redis.bench.ts';
 * const { ratio, met } = await run();
 * ```
 */
export async function run(): Promise<RedisBenchResult> {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const client = new Redis(url, failFastRedisOptions());
  const autoClient = new Redis(url, { ...failFastRedisOptions(), enableAutoPipelining: true });
  for (const c of [client, autoClient]) c.on('error', () => {});
  await Promise.all([client, autoClient].map((c) => new Promise((resolve) => c.once('ready', resolve))));
  const keyPrefix = `bench:service-pay:${Date.now().toString(36)}:`;
  const cases = {
    memory: () => new MemoryDedupeStore({ maxEntries: PER_ROUND * 2 }),
    redis: () => new RedisDedupeStore({ client, keyPrefix }),
    auto: () => new RedisDedupeStore({ client: autoClient, keyPrefix }),
  };
  const results: Record<keyof typeof cases, number[]> = { memory: [], redis: [], auto: [] };
  try {
    // One warm-up of each (JIT, scripts loaded on the connections), then interleaved measured rounds.
    for (const make of Object.values(cases)) await round(make());
    for (let i = 0; i < ROUNDS; i++) {
      for (const [name, make] of Object.entries(cases)) results[name as keyof typeof cases].push(await round(make()));
    }
    const memoryOpsPerSec = median(results.memory);
    const redisOpsPerSec = median(results.redis);
    const ratio = redisOpsPerSec / memoryOpsPerSec;
    const autoPipeliningRatio = median(results.auto) / memoryOpsPerSec;
    const result: RedisBenchResult = {
      name: `handler end to end, fresh keys, ${CONCURRENCY} concurrent: RedisDedupeStore (loopback) vs MemoryDedupeStore`,
      memoryOpsPerSec,
      redisOpsPerSec,
      ratio,
      autoPipeliningRatio,
      target: TARGET,
      met: ratio >= TARGET,
    };
    console.log(
      `${result.name}\n  memory ${Math.round(memoryOpsPerSec)}/s, redis ${Math.round(redisOpsPerSec)}/s: ` +
        `ratio ${ratio.toFixed(2)}x (target >= ${TARGET}x) ${result.met ? 'OK' : 'BELOW TARGET'}; ` +
        `with enableAutoPipelining ${autoPipeliningRatio.toFixed(2)}x`,
    );
    return result;
  } finally {
    await removeKeys(client, keyPrefix);
    client.disconnect();
    autoClient.disconnect();
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
  const { met } = await run();
  process.exitCode = met ? 0 : 1;
}
