import { createWebhookHandler, type PaymentPaidEvent, type WebhookResponse } from '@service-pay/core';
import { dedupeStoreConformance, samplePaymentPaidEvent } from '@service-pay/core/testing';
import { Redis as UpstashRedis } from '@upstash/redis';
import { Redis as Valkey } from 'iovalkey';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisClient, RedisDedupeStore } from '../src/index.js';
import { delivery, recordingLogger, SECRET, uniquePrefix } from './support/deliveries.js';
import { RedisServer, redisCli, sleep } from './support/redis-server.js';
import { UpstashBridge } from './support/upstash-bridge.js';

// Every client family beside ioredis, on a Redis server of this file's own: node-redis 5, iovalkey, and
// @upstash/redis through a local bridge that speaks Upstash's REST protocol (a stand-in, not Upstash).
// Each runs the whole conformance suite, then the Redis fault rows that apply to it.

/** A client as an app makes it for the store, the way each README says. */
interface Family {
  name: string;
  open(port: number): Promise<{ client: RedisClient; close(): Promise<void> }>;
}

const families: Family[] = [
  {
    name: 'node-redis 5 (createClient, disableOfflineQueue)',
    async open(port) {
      const client = createClient({
        socket: {
          host: '127.0.0.1',
          port,
          connectTimeout: 1_000,
          reconnectStrategy: (retries) => Math.min(retries * 50, 500),
        },
        disableOfflineQueue: true,
      });
      client.on('error', () => {}); // outages answer 503; keep the process up
      await client.connect();
      return { client, close: async () => void (await client.close().catch(() => client.destroy())) };
    },
  },
  {
    name: 'iovalkey',
    async open(port) {
      const client = new Valkey({
        host: '127.0.0.1',
        port,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        lazyConnect: true,
      });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => client.disconnect() };
    },
  },
  {
    name: '@upstash/redis, through a local REST bridge (not Upstash)',
    async open(port) {
      const bridge = await UpstashBridge.start(port);
      // retry: false, so an outage is one failed request (503 from the pipeline) rather than five.
      const client = new UpstashRedis({ url: bridge.url, token: bridge.token, retry: false, enableTelemetry: false });
      return { client, close: () => bridge.stop() };
    },
  },
];

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  await server?.stop();
});

describe.each(families)('$name', (family) => {
  let opened: Awaited<ReturnType<Family['open']>>;
  beforeAll(async () => {
    opened = await family.open(server.port);
  });
  afterAll(async () => {
    await opened?.close();
  });

  describe('conformance', () => {
    for (const c of dedupeStoreConformance(
      () => new RedisDedupeStore({ client: opened.client, keyPrefix: uniquePrefix('conf') }),
    )) {
      it(c.name, c.run);
    }
  });

  it('runs the handler exactly once per payment: 5 concurrent deliveries of 20 payments, then a duplicate each', async () => {
    const runs = new Map<string, number>();
    const handle = createWebhookHandler({
      secret: SECRET,
      store: new RedisDedupeStore({ client: opened.client, keyPrefix: uniquePrefix('once') }),
      logger: recordingLogger(),
      onPaymentPaid: async (event) => {
        runs.set(event.paymentId, (runs.get(event.paymentId) ?? 0) + 1);
        await sleep(20);
      },
    });
    const payments = Array.from({ length: 20 }, () => samplePaymentPaidEvent());
    const answers = await Promise.all(payments.flatMap((event) => [1, 2, 3, 4, 5].map(() => handle(delivery(event)))));
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    for (const event of payments)
      expect(JSON.parse((await handle(delivery(event))).body)).toMatchObject({ received: true });
    for (const event of payments) expect(runs.get(event.paymentId)).toBe(1);
  });
});

describe.each(families)('outages with $name', (family) => {
  it('Redis killed mid-run: 503 while down, nothing runs; after restart each retry is credited once', async () => {
    const own = await RedisServer.start();
    const { client, close } = await family.open(own.port);
    try {
      const runs = new Map<string, number>();
      const handle = createWebhookHandler({
        secret: SECRET,
        store: new RedisDedupeStore({ client }),
        logger: recordingLogger(),
        onPaymentPaid: (event) => void runs.set(event.paymentId, (runs.get(event.paymentId) ?? 0) + 1),
      });
      const event: PaymentPaidEvent = samplePaymentPaidEvent();
      await own.kill();
      const down: WebhookResponse = await handle(delivery(event));
      expect(down.status).toBe(503);
      expect(JSON.parse(down.body)).toMatchObject({ error: 'STORE_UNAVAILABLE' });
      expect(runs.size).toBe(0);
      await own.start();
      let retry: WebhookResponse = down;
      for (let i = 0; i < 100 && retry.status !== 200; i++) {
        await sleep(100);
        retry = await handle(delivery(event)); // the sender retries until it gets its answer
      }
      expect(JSON.parse(retry.body)).toEqual({ received: true });
      expect(JSON.parse((await handle(delivery(event))).body)).toEqual({ received: true, duplicate: true });
      expect(runs.get(event.paymentId)).toBe(1);
    } finally {
      await close();
      await own.stop();
    }
  });

  it('Redis stops answering (CLIENT PAUSE): 503 within the pipeline bound, and the retry after it is not locked out', async () => {
    const own = await RedisServer.start();
    const { client, close } = await family.open(own.port);
    try {
      const runs = new Map<string, number>();
      const handle = createWebhookHandler({
        secret: SECRET,
        store: new RedisDedupeStore({ client }),
        logger: recordingLogger(),
        storeTimeoutMs: 500,
        onPaymentPaid: (event) => void runs.set(event.paymentId, (runs.get(event.paymentId) ?? 0) + 1),
      });
      const event = samplePaymentPaidEvent();
      await redisCli(own.port, 'client', 'pause', '1500', 'ALL');
      const paused = await handle(delivery(event));
      expect(paused.status).toBe(503);
      expect(runs.size).toBe(0);
      // The claim sent during the pause still ran once Redis woke up; the pipeline released it behind it.
      await sleep(1_800);
      const retry = await handle(delivery(event));
      expect(JSON.parse(retry.body)).toEqual({ received: true });
      expect(runs.get(event.paymentId)).toBe(1);
    } finally {
      await close();
      await own.stop();
    }
  });
});
