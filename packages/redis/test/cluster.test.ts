import { createWebhookHandler } from '@service-pay/core';
import { dedupeStoreConformance, samplePaymentPaidEvent } from '@service-pay/core/testing';
import { RedisCluster, redisCli } from '@service-pay/test-kit/redis';
import { Cluster } from 'ioredis';
import { Cluster as Cluster5 } from 'ioredis-5';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failFastClusterOptions, RedisDedupeStore } from '../src/index.js';
import { delivery, recordingLogger, SECRET, uniquePrefix } from './support/deliveries.js';

let cluster: RedisCluster | undefined;
let client: Cluster;
let v5: Cluster;
let nodeRedis: ReturnType<typeof createCluster>;

function ready(c: { status: string; once(event: 'ready', listener: () => void): unknown }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cluster client not ready: ${c.status}`)), 15_000);
    c.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

beforeAll(async () => {
  cluster = await RedisCluster.start();
  client = new Cluster(cluster.nodes, failFastClusterOptions());
  client.on('error', () => {});
  const v5Client = new Cluster5(cluster.nodes, failFastClusterOptions());
  v5Client.on('error', () => {});
  v5 = v5Client as unknown as Cluster;
  await Promise.all([ready(client), ready(v5Client)]);
  nodeRedis = createCluster({
    rootNodes: cluster.nodes.map(({ host, port }) => ({ socket: { host, port } })),
    defaults: { socket: { connectTimeout: 1_000 }, disableOfflineQueue: true },
  });
  nodeRedis.on('error', () => {});
  await nodeRedis.connect();
}, 60_000);

afterAll(async () => {
  // Always runs, also when a test or beforeAll failed: processes killed, temp dirs removed.
  for (const c of [client, v5]) await c?.quit().catch(() => c.disconnect());
  await nodeRedis?.close().catch(() => nodeRedis.destroy());
  await cluster?.stop();
});

describe('RedisDedupeStore conformance on a 3-master Redis Cluster', () => {
  for (const c of dedupeStoreConformance(() => new RedisDedupeStore({ client, keyPrefix: uniquePrefix('cluster') }))) {
    it(c.name, c.run);
  }
});

describe('RedisDedupeStore conformance on a 3-master Redis Cluster (ioredis 5)', () => {
  for (const c of dedupeStoreConformance(
    () => new RedisDedupeStore({ client: v5, keyPrefix: uniquePrefix('cluster-v5') }),
  )) {
    it(c.name, c.run);
  }
});

describe('RedisDedupeStore conformance on a 3-master Redis Cluster (node-redis 6 createCluster)', () => {
  for (const c of dedupeStoreConformance(
    () => new RedisDedupeStore({ client: nodeRedis, keyPrefix: uniquePrefix('cluster-node-redis') }),
  )) {
    it(c.name, c.run);
  }
});

describe('RedisDedupeStore on Redis Cluster', () => {
  it('spreads dedupe keys over every master (one key per script, no hash tag)', async () => {
    const store = new RedisDedupeStore({ client, keyPrefix: uniquePrefix('spread') });
    for (let i = 0; i < 60; i++)
      expect(await store.claim(`payment.paid:p_${i}`, 't', 'fp', 10_000)).toEqual({ state: 'claimed' });
    for (const node of cluster!.nodes) expect(Number(await redisCli(node.port, 'dbsize'))).toBeGreaterThan(0);
  });

  it('runs the handler exactly once per payment behind the core pipeline', async () => {
    const store = new RedisDedupeStore({ client, keyPrefix: uniquePrefix('cluster-handler') });
    const runs = new Map<string, number>();
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      logger: recordingLogger(),
      onPaymentPaid: (event) => void runs.set(event.paymentId, (runs.get(event.paymentId) ?? 0) + 1),
    });
    const events = Array.from({ length: 20 }, () => samplePaymentPaidEvent());
    // Every payment delivered three times at once, then once more after: one run each.
    const answers = await Promise.all(events.flatMap((e) => [e, e, e]).map((e) => handle(delivery(e))));
    for (const a of answers) expect([200, 409]).toContain(a.status);
    for (const e of events) expect((await handle(delivery(e))).status).toBe(200);
    for (const e of events) expect(runs.get(e.paymentId)).toBe(1);
  });
});
