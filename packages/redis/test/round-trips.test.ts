import { createWebhookHandler, PaymentRejectedError } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failFastRedisOptions, RedisDedupeStore } from '../src/index.js';
import { connected, delivery, recordingLogger, redisOn, SECRET } from './support/deliveries.js';
import { RedisServer, redisCli } from './support/redis-server.js';

// A server of our own, so its command statistics count this test's client and nothing else.
let server: RedisServer;
let client: Redis;
/** Every command the client writes to the socket: each one is a request and a reply, one round trip. */
const sent: string[] = [];

beforeAll(async () => {
  server = await RedisServer.start();
  client = await connected(redisOn(server.port, failFastRedisOptions()));
  const original = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
    sent.push(command.name);
    return (original as (...args: unknown[]) => unknown)(command, ...rest);
  }) as Redis['sendCommand'];
});

afterAll(async () => {
  client?.disconnect();
  await server?.stop();
});

/** Scripts the server ran for clients, from INFO commandstats (EVAL on a connection's first use, then EVALSHA). */
async function scriptCalls(): Promise<number> {
  const stats = await redisCli(server.port, 'info', 'commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/^cmdstat_(eval|evalsha):calls=(\d+)/gm)) calls += Number(match[2]);
  return calls;
}

/** Round trips one request costs, counted on the client's socket and, independently, on the server. */
async function roundTrips(request: () => Promise<unknown>): Promise<{ client: string[]; server: number }> {
  const serverBefore = await scriptCalls();
  sent.length = 0;
  await request();
  const clientSent = [...sent];
  return { client: clientSent, server: (await scriptCalls()) - serverBefore };
}

describe('Redis round trips on the request path', () => {
  const runs: string[] = [];
  const handle = () =>
    createWebhookHandler({
      secret: SECRET,
      store: new RedisDedupeStore({ client, keyPrefix: 'rt:' }),
      logger: recordingLogger(),
      onPaymentPaid: (event) => {
        runs.push(event.paymentId);
        if (event.orderNo.startsWith('reject')) throw new PaymentRejectedError('amount does not match the order');
        if (event.orderNo.startsWith('fail')) throw new Error('database down');
      },
    });

  it('a first delivery costs 2 (claim, complete) and a duplicate 1 (claim)', async () => {
    const h = handle();
    // Warm-up: the first use of each script on a connection sends its body (EVAL), still one round trip.
    await h(delivery(samplePaymentPaidEvent()));

    const event = samplePaymentPaidEvent();
    const first = await roundTrips(() => h(delivery(event)));
    expect(first.client).toEqual(['evalsha', 'evalsha']);
    expect(first.server).toBe(2);

    const duplicate = await roundTrips(() => h(delivery(event)));
    expect(duplicate.client).toEqual(['evalsha']);
    expect(duplicate.server).toBe(1);
    expect(runs.filter((id) => id === event.paymentId)).toHaveLength(1);
  });

  it('is still 2 on a brand-new connection: the script body rides on the first call itself (EVAL)', async () => {
    const fresh = await connected(redisOn(server.port, failFastRedisOptions()));
    try {
      const h = createWebhookHandler({
        secret: SECRET,
        store: new RedisDedupeStore({ client: fresh, keyPrefix: 'rt-fresh:' }),
        logger: recordingLogger(),
        onPaymentPaid: () => {},
      });
      const before = await scriptCalls();
      await h(delivery(samplePaymentPaidEvent()));
      expect((await scriptCalls()) - before).toBe(2);
    } finally {
      fresh.disconnect();
    }
  });

  it('a delivery while another holds the lease costs 1; a failed handler 2 (claim, release); a rejection 2', async () => {
    const h = handle();
    const store = new RedisDedupeStore({ client, keyPrefix: 'rt:' });
    const held = samplePaymentPaidEvent();
    await store.claim(`payment.paid:${held.paymentId}`, 'someone-else', 'fp', 30_000);
    const inProgress = await roundTrips(() => h(delivery(held)));
    expect(inProgress.server).toBe(1);

    const failing = await roundTrips(() => h(delivery(samplePaymentPaidEvent({ orderNo: 'fail-1' }))));
    expect(failing.client).toEqual(['evalsha', 'evalsha']);
    expect(failing.server).toBe(2);

    const rejected = await roundTrips(() => h(delivery(samplePaymentPaidEvent({ orderNo: 'reject-1' }))));
    expect(rejected.server).toBe(2);
  });

  it('a conflict (same payment, different signed fields) costs 1', async () => {
    const h = handle();
    const event = samplePaymentPaidEvent();
    await h(delivery(event));
    const conflict = await roundTrips(() => h(delivery({ ...event, amount: '99.00', amountRaw: '99000000' })));
    expect(conflict.server).toBe(1);
  });
});
