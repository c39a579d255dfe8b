import { createWebhookHandler } from '@service-pay/core';
import { dedupeStoreConformance, samplePaymentPaidEvent } from '@service-pay/core/testing';
import { sleep } from '@service-pay/test-kit';
import { RedisServer } from '@service-pay/test-kit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisDedupeStore } from '../src/index.js';
import { type Family, families } from './support/client-families.js';
import { delivery, recordingLogger, SECRET, uniquePrefix } from './support/deliveries.js';

// Every client family beside ioredis, on a Redis server of this file's own, runs the whole conformance
// suite and the exactly-once burst. Their outage rows (a server killed, paused) are in faults/.

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
