import { createWebhookHandler, fingerprintOf, PaymentRejectedError } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { RedisServer } from '@service-pay/test-kit/redis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failFastRedisOptions, RedisDedupeStore } from '../src/index.js';
import { connected, delivery, recordingLogger, redisOn, SECRET } from './support/deliveries.js';

// A server of our own, so what its MONITOR shows is this test's client and nothing else.
let server: RedisServer;
let client: Redis;
let monitor: Redis;
let marker: Redis;
/** Every command the client writes to the socket: each one is a request and a reply, one round trip. */
const sent: string[] = [];
/** Every command the server took from a client (a script's own calls left out), as MONITOR shows them. */
const executed: string[][] = [];

beforeAll(async () => {
  server = await RedisServer.start();
  client = await connected(redisOn(server.port, failFastRedisOptions()));
  marker = await connected(redisOn(server.port));
  monitor = await redisOn(server.port).monitor();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== 'lua') executed.push(args.map(String));
  });
  const original = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
    sent.push(command.name);
    return (original as (...args: unknown[]) => unknown)(command, ...rest);
  }) as Redis['sendCommand'];
});

afterAll(async () => {
  client?.disconnect();
  marker?.disconnect();
  monitor?.disconnect();
  await server?.stop();
});

let marks = 0;
/**
 * The commands the server ran since the last call: an ECHO on another connection runs after every command
 * whose reply has come back, and MONITOR reports commands in the order they ran, so once it shows the
 * ECHO, it has shown them all.
 */
async function serverRan(): Promise<string[]> {
  const mark = `rt-mark-${++marks}`;
  await marker.echo(mark);
  for (let i = 0; !executed.some((args) => args[1] === mark); i++) {
    if (i > 200) throw new Error('MONITOR never showed the marker');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return executed
    .splice(0)
    .map((args) => String(args[0]).toLowerCase())
    .filter((name) => name !== 'echo');
}

/** Round trips one request costs, counted on the client's socket and, independently, on the server. */
async function roundTrips(request: () => Promise<unknown>): Promise<{ client: string[]; server: number }> {
  await serverRan();
  sent.length = 0;
  await request();
  const clientSent = [...sent];
  return { client: clientSent, server: (await serverRan()).length };
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
    await h(delivery(samplePaymentPaidEvent()));

    const event = samplePaymentPaidEvent();
    const first = await roundTrips(() => h(delivery(event)));
    // The claim is a plain SET ... NX ... GET (Redis >= 7), the completion a plain SET ... GET (Redis >= 6.2):
    // no script on the path of a fresh delivery or a duplicate.
    expect(first.client).toEqual(['set', 'set']);
    expect(first.server).toBe(2);

    const duplicate = await roundTrips(() => h(delivery(event)));
    expect(duplicate.client).toEqual(['set']);
    expect(duplicate.server).toBe(1);
    expect(runs.filter((id) => id === event.paymentId)).toHaveLength(1);
  });

  it('is still 2 on a brand-new connection, with no script sent (no EVAL, no EVALSHA)', async () => {
    const fresh = await connected(redisOn(server.port, failFastRedisOptions()));
    try {
      const h = createWebhookHandler({
        secret: SECRET,
        store: new RedisDedupeStore({ client: fresh, keyPrefix: 'rt-fresh:' }),
        logger: recordingLogger(),
        onPaymentPaid: () => {},
      });
      await serverRan();
      await h(delivery(samplePaymentPaidEvent()));
      expect(await serverRan()).toEqual(['set', 'set']);
    } finally {
      fresh.disconnect();
    }
  });

  it('a delivery while another holds the lease costs 2 (claim, the lease time left); a failed handler 3 (claim, release, ledger); a rejection 2', async () => {
    const h = handle();
    const store = new RedisDedupeStore({ client, keyPrefix: 'rt:' });
    const held = samplePaymentPaidEvent();
    // Held with the payment's own fingerprint: another attempt of the same payment, not a conflict.
    await store.claim(`payment.paid:${held.paymentId}`, 'someone-else', fingerprintOf(held), 30_000);
    const inProgress = await roundTrips(() => h(delivery(held)));
    // The PTTL for Retry-After is the one command this rare path adds: it keeps Lua off every other claim.
    expect(inProgress.client).toEqual(['set', 'pttl']);
    expect(inProgress.server).toBe(2);

    const failing = await roundTrips(() => h(delivery(samplePaymentPaidEvent({ orderNo: 'fail-1' }))));
    // The release, then the operator's ledger records the failure: one script more, on the failure path only.
    expect(failing.client).toEqual(['set', 'evalsha', 'evalsha']);
    expect(failing.server).toBe(3);

    const rejected = await roundTrips(() => h(delivery(samplePaymentPaidEvent({ orderNo: 'reject-1' }))));
    expect(rejected.server).toBe(2);
  });

  it('a conflict (same payment, different signed fields) costs 2: the claim, and the ledger flag', async () => {
    const h = handle();
    const event = samplePaymentPaidEvent();
    await h(delivery(event));
    const conflict = await roundTrips(() => h(delivery({ ...event, amount: '99.00', amountRaw: '99000000' })));
    // The operator's ledger flags the payment: one script, on this rare path only.
    expect(conflict.client).toEqual(['set', 'evalsha']);
    expect(conflict.server).toBe(2);
  });
});
