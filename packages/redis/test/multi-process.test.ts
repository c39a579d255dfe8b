import { fileURLToPath } from 'node:url';
import { type PaymentPaidEvent, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { AppProcess, retryUntil, testDeadline, testServers } from '@service-pay/test-kit';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connected, redisOn, SECRET, SHARED_REDIS, uniquePrefix } from './support/deliveries.js';

const PORT = SHARED_REDIS;
const KEY_PREFIX = uniquePrefix('multi');
const packageDir = fileURLToPath(new URL('..', import.meta.url));
let apps: AppProcess[] = [];
let urls: string[] = [];
let redis: Redis;

/** Starts one app instance as a separate Node process (test/fixtures/app-instance.ts). */
function startInstance(name: string): Promise<AppProcess> {
  return AppProcess.start({
    cwd: packageDir,
    fixture: 'test/fixtures/app-instance.ts',
    env: { REDIS_URL: testServers().redisUrl, KEY_PREFIX, WEBHOOK_SECRET: SECRET, INSTANCE: name },
  });
}

beforeAll(async () => {
  redis = await connected(redisOn(PORT));
  apps = await Promise.all([startInstance('a'), startInstance('b')]);
  urls = apps.map((app) => app.url);
}, 90_000);

afterAll(async () => {
  await Promise.all(apps.map((app) => app.kill()));
  const keys = await redis.keys(`${KEY_PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

/** One attempt of the sender to one instance, freshly signed with a new delivery id like a real retry. */
async function post(url: string, event: PaymentPaidEvent): Promise<number> {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  const response = await fetch(url, { method: 'POST', body, headers });
  await response.arrayBuffer();
  return response.status;
}

it('two app processes sharing one Redis run the handler exactly once per payment', async ({ task }) => {
  const deadline = testDeadline(task);
  // Warm both instances up (HTTP connection, JIT, scripts loaded on their Redis connections), so neither
  // wins every race below just by having started first.
  for (const url of urls) expect(await post(url!, samplePaymentPaidEvent())).toBe(200);
  const payments = Array.from({ length: 40 }, () => samplePaymentPaidEvent());

  // Every payment arrives twice at each instance at the same moment: duplicates and concurrent retries
  // landing behind a load balancer.
  const firstWave = await Promise.all(
    payments.map(async (event, i) => {
      const [a, b] = i % 2 === 0 ? urls : [urls[1], urls[0]];
      const statuses = await Promise.all([a, b, a, b].map((url) => post(url!, event)));
      return { event, statuses };
    }),
  );
  for (const { statuses } of firstWave) for (const status of statuses) expect([200, 409]).toContain(status);
  // A 409 (held by the other instance) is retried by the sender until answered 200.
  for (const { event, statuses } of firstWave) {
    if (statuses.includes(200)) continue;
    // 409 while the holder runs; the first other answer must be 200.
    let attempt = 0;
    const status = await retryUntil(
      `an answer other than 409 for ${event.paymentId}`,
      () => post(urls[attempt++ % 2]!, event),
      (answer) => answer !== 409,
      { deadline },
      50,
    );
    expect(status).toBe(200);
  }
  // And duplicates later, on either instance, never run it again.
  for (const event of payments) for (const url of urls) expect(await post(url, event)).toBe(200);
  // Handed over, whatever won the races above (under load one instance may win them all): a payment each
  // instance credits first alone, then delivered to the other, which must find it credited.
  const handedOver = Array.from({ length: 4 }, () => samplePaymentPaidEvent());
  for (const [i, event] of handedOver.entries()) {
    for (const url of i % 2 === 0 ? urls : [...urls].reverse()) expect(await post(url!, event)).toBe(200);
  }

  const all = [...payments, ...handedOver];
  const runs = await redis.mget(all.map((e) => `${KEY_PREFIX}runs:${e.paymentId}`));
  expect(runs).toEqual(all.map(() => '1'));
  const [byA, byB] = await redis.mget(`${KEY_PREFIX}runs-by:a`, `${KEY_PREFIX}runs-by:b`);
  expect(Number(byA ?? 0) + Number(byB ?? 0)).toBe(all.length + urls.length);
  // Both instances did real work (the warm-up, the handed-over payments), so the exactly-once was decided
  // across processes, not inside one.
  expect(Number(byA ?? 0)).toBeGreaterThanOrEqual(1 + handedOver.length / 2);
  expect(Number(byB ?? 0)).toBeGreaterThanOrEqual(1 + handedOver.length / 2);
});
