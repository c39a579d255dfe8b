import { createWebhookHandler, type PaymentPaidEvent, type WebhookResponse } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { TcpProxy, testDeadline, waitFor } from '@service-pay/test-kit';
import { RedisServer, redisCli } from '@service-pay/test-kit/redis';
import { describe, expect, it } from 'vitest';
import { RedisDedupeStore } from '../../src/index.js';
import { families } from '../support/client-families.js';
import { delivery, recordingLogger, SECRET } from '../support/deliveries.js';
import { creditedOnceOnRetry, recoversFromResetHandshakes } from '../support/retries.js';

// The Redis fault rows that apply to every client family beside ioredis (node-redis 6 and 5, iovalkey,
// @upstash/redis through the local bridge), each on a redis-server of the test's own that it kills or pauses.

/**
 * A handler on a redis-server of the test's own, counting the handler's runs per payment; with `proxied`,
 * the client reaches the server through a `TcpProxy` that the test can make cut connections.
 */
async function ownRedis(
  family: (typeof families)[number],
  options: { storeTimeoutMs?: number; proxied?: boolean } = {},
) {
  const own = await RedisServer.start();
  const proxy = options.proxied ? await TcpProxy.start(own.port) : undefined;
  const { client, close } = await family.open(proxy?.port ?? own.port);
  const runs = new Map<string, number>();
  const handle = createWebhookHandler({
    secret: SECRET,
    store: new RedisDedupeStore({ client }),
    logger: recordingLogger(),
    ...(options.storeTimeoutMs === undefined ? {} : { storeTimeoutMs: options.storeTimeoutMs }),
    onPaymentPaid: (event) => void runs.set(event.paymentId, (runs.get(event.paymentId) ?? 0) + 1),
  });
  const stop = async () => {
    await close();
    await proxy?.stop();
    await own.stop();
  };
  return { own, proxy, handle, runs, stop };
}

describe.each(families)('outages with $name', (family) => {
  it('Redis killed mid-run: 503 while down, nothing runs; after restart each retry is credited once', async ({
    task,
  }) => {
    const deadline = testDeadline(task);
    const { own, handle, runs, stop } = await ownRedis(family);
    try {
      const event: PaymentPaidEvent = samplePaymentPaidEvent();
      await own.kill();
      const down: WebhookResponse = await handle(delivery(event));
      expect(down.status).toBe(503);
      expect(JSON.parse(down.body)).toMatchObject({ error: 'STORE_UNAVAILABLE' });
      expect(runs.size).toBe(0);
      await own.startAgain();
      await creditedOnceOnRetry('after the restart', handle, runs, event, deadline);
    } finally {
      await stop();
    }
  });

  it('Redis stops answering (CLIENT PAUSE): 503 within the pipeline bound, and the retry after it is not locked out', async ({
    task,
  }) => {
    const deadline = testDeadline(task);
    const { own, handle, runs, stop } = await ownRedis(family, { storeTimeoutMs: 500 });
    try {
      const event = samplePaymentPaidEvent();
      await redisCli(own.port, 'client', 'pause', '1500', 'ALL');
      const paused = await handle(delivery(event));
      expect(paused.status).toBe(503);
      expect(runs.size).toBe(0);
      // The claim sent during the pause still runs once Redis wakes up, and the release the pipeline queued
      // behind it on the same connection right after; the retry below queues behind both.
      await waitFor('Redis to answer after the pause', async () => (await redisCli(own.port, 'ping')) === 'PONG', {
        deadline,
      });
      const retry = await handle(delivery(event));
      expect(JSON.parse(retry.body)).toEqual({ received: true });
      expect(runs.get(event.paymentId)).toBe(1);
    } finally {
      await stop();
    }
  });

  it("a reset during the client's handshake (Redis going down as it reconnects): it tries again, and the store answers", async ({
    task,
  }) => {
    const deadline = testDeadline(task);
    const { proxy, handle, runs, stop } = await ownRedis(family, { storeTimeoutMs: 500, proxied: true });
    try {
      await recoversFromResetHandshakes(handle, runs, proxy as TcpProxy, deadline);
    } finally {
      await stop();
    }
  });
});
