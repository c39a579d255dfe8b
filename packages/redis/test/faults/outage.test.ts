import { createWebhookHandler, type PaymentPaidEvent, type WebhookResponse } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { freePort, sleep, TcpProxy, testDeadline, waitFor } from '@service-pay/test-kit';
import { RedisServer, redisCli } from '@service-pay/test-kit/redis';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { failFastRedisOptions, RedisDedupeStore } from '../../src/index.js';
import { connected, delivery, recordingLogger, redis5On, redisOn, SECRET } from '../support/deliveries.js';
import { recoversFromResetHandshakes } from '../support/retries.js';

// The sender gives up at 5 s; the handler must answer 503 well before. The pipeline's bound
// (storeTimeoutMs) is 2 s; this generous ceiling only catches hanging, never measures speed.
const ANSWERED_WELL_BEFORE_SENDER_TIMEOUT_MS = 4_000;

const CLIENTS: [string, (port: number) => Redis][] = [
  ['failFastRedisOptions()', (port) => redisOn(port, failFastRedisOptions())],
  // The pipeline's bound must hold even on a client nobody tuned (offline queue on, 20 retries).
  ['default ioredis options', (port) => redisOn(port)],
  ['ioredis 5 and failFastRedisOptions()', (port) => redis5On(port, failFastRedisOptions())],
];

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function track(client: Redis): Redis {
  cleanups.push(() => client.disconnect());
  return client;
}

/** A handler on `store` that counts how often it ran per payment. */
function countingHandler(store: RedisDedupeStore) {
  const runs = new Map<string, number>();
  const logger = recordingLogger();
  const handle = createWebhookHandler({
    secret: SECRET,
    store,
    logger,
    onPaymentPaid: (event) => void runs.set(event.paymentId, (runs.get(event.paymentId) ?? 0) + 1),
  });
  return { handle, runs, logger };
}

/** A counting handler on a redis-server of the test's own, stopped after the test. */
async function onOwnServer(clientOn: (port: number) => Redis) {
  const server = await RedisServer.start();
  cleanups.push(() => server.stop());
  const client = track(await connected(clientOn(server.port)));
  return { server, client, ...countingHandler(new RedisDedupeStore({ client })) };
}

async function timed(answer: Promise<WebhookResponse>): Promise<WebhookResponse & { ms: number }> {
  const started = performance.now();
  const response = await answer;
  return { ...response, ms: performance.now() - started };
}

function expectStoreUnavailable(answer: WebhookResponse & { ms: number }): void {
  expect(answer.status).toBe(503);
  expect(JSON.parse(answer.body)).toMatchObject({ error: 'STORE_UNAVAILABLE' });
  expect(answer.headers['retry-after']).toBeDefined();
  expect(answer.ms).toBeLessThan(ANSWERED_WELL_BEFORE_SENDER_TIMEOUT_MS);
}

/** Resolves once `client` has reconnected (the test's deadline bounds the wait). */
function untilReady(client: Redis, deadline: number): Promise<boolean> {
  return waitFor(`the client to reconnect (${client.status})`, () => client.status === 'ready', { deadline }, 20);
}

describe.each(CLIENTS)('outage, client with %s', (_label, clientOn) => {
  it('nothing listening on the port: 503 STORE_UNAVAILABLE in under 2 s, handler not run', async () => {
    const port = await freePort();
    const client = track(clientOn(port));
    const store = new RedisDedupeStore({ client });
    const { handle, runs, logger } = countingHandler(store);

    const answers = await Promise.all([1, 2, 3].map(() => timed(handle(delivery(samplePaymentPaidEvent())))));
    for (const answer of answers) expectStoreUnavailable(answer);
    expect(runs.size).toBe(0);
    const outage = logger.entries.filter((e) => e.fields.code === 'STORE_UNAVAILABLE');
    expect(outage.map((e) => [e.level, e.fields.status])).toEqual(Array(3).fill(['error', 503]));
    // What the log says matches what happened: a refusal at once with a fail-fast client, the pipeline's
    // bound with a client that queues commands while it reconnects.
    const said = outage.map((e) => e.message);
    if (_label.startsWith('default')) expect(said[0]).toMatch(/^The store did not answer within storeTimeoutMs;/);
    else expect(said[0]).toMatch(/^The store failed \(.+\); answered 503/);
    // One line per 503: the background release of a claim that never reached Redis does not warn.
    expect(logger.entries.filter((e) => e.level === 'warn')).toEqual([]);
  });

  it('Redis killed mid-run: 503s while down, and after restart each retry is credited exactly once', async ({
    task,
  }) => {
    const deadline = testDeadline(task);
    const { server, client, handle, runs } = await onOwnServer(clientOn);
    const credited = new Set<string>();
    const send = async (event: PaymentPaidEvent) => {
      const answer = await timed(handle(delivery(event)));
      if (answer.status === 200) credited.add(event.paymentId);
      return answer;
    };

    const before = Array.from({ length: 3 }, () => samplePaymentPaidEvent());
    for (const event of before) expect((await send(event)).status).toBe(200);

    // A burst of deliveries with the crash landing in the middle of it: each is answered in time, and
    // each is either handled (200) or not handled at all (503).
    const payments = Array.from({ length: 12 }, () => samplePaymentPaidEvent());
    const burst = payments.map(async (event, i) => {
      await sleep(i * 3);
      return send(event);
    });
    await sleep(12);
    await server.kill();
    for (const answer of await Promise.all(burst)) {
      expect([200, 503]).toContain(answer.status);
      expect(answer.ms).toBeLessThan(ANSWERED_WELL_BEFORE_SENDER_TIMEOUT_MS);
    }

    // While down, every delivery is a fast 503 and nothing runs.
    const runsBefore = [...runs.values()].reduce((a, b) => a + b, 0);
    const down = await Promise.all(payments.map((event) => send(event)));
    for (const answer of down) expectStoreUnavailable(answer);
    expect([...runs.values()].reduce((a, b) => a + b, 0)).toBe(runsBefore);

    // Back on the same port, empty (no persistence). The sender retries what it has no 200 for.
    await server.startAgain();
    await untilReady(client, deadline);
    const retried = payments.filter((e) => !credited.has(e.paymentId));
    expect(retried.length).toBeGreaterThan(0);
    for (const event of retried) {
      const answer = await send(event);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({ received: true });
    }
    // Later duplicates of those are answered without running the handler again. (Payments completed
    // before the crash are not re-sent: a Redis that restarts empty has forgotten them, which is why the
    // README asks for persistence and the examples guard the credit in their database.)
    for (const event of retried)
      expect(JSON.parse((await send(event)).body)).toEqual({ received: true, duplicate: true });
    for (const event of [...before, ...payments]) expect(runs.get(event.paymentId)).toBe(1);
  });

  it('Redis stops answering (CLIENT PAUSE): 503 within the bound, and the retry after it is not locked out', async ({
    task,
  }) => {
    const deadline = testDeadline(task);
    const { server, handle, runs } = await onOwnServer(clientOn);
    const event = samplePaymentPaidEvent();

    await redisCli(server.port, 'client', 'pause', '2500', 'ALL');
    expectStoreUnavailable(await timed(handle(delivery(event))));
    expect(runs.size).toBe(0);

    // The claim sent during the pause still ran once Redis woke up; the pipeline released it (fenced by its
    // token) right behind it on the same connection, so the sender's retry, queued behind both once Redis
    // answers again, is handled now instead of meeting 409 for a whole lease.
    await waitFor('Redis to answer after the pause', async () => (await redisCli(server.port, 'ping')) === 'PONG', {
      deadline,
    });
    const retry = await handle(delivery(event));
    expect(retry.status).toBe(200);
    expect(JSON.parse(retry.body)).toEqual({ received: true });
    expect(runs.get(event.paymentId)).toBe(1);
  });

  it("a reset during the client's handshake (Redis going down as it reconnects): it tries again, and the store answers", async ({
    task,
  }) => {
    const deadline = testDeadline(task);
    const server = await RedisServer.start();
    cleanups.push(() => server.stop());
    const proxy = await TcpProxy.start(server.port);
    cleanups.push(() => proxy.stop());
    const client = track(await connected(clientOn(proxy.port)));
    const { handle, runs } = countingHandler(new RedisDedupeStore({ client }));
    await recoversFromResetHandshakes(handle, runs, proxy, deadline);
  });
});

describe('what bounds the wait when nothing listens', () => {
  it('failFastRedisOptions(): every store call is refused at once; nothing is queued to run later', async () => {
    const store = new RedisDedupeStore({ client: track(redisOn(await freePort(), failFastRedisOptions())) });
    const started = performance.now();
    for (const call of [
      store.claim('k', 't', 'fp', 10_000),
      store.complete('k', 't', 10_000, 'fp'),
      store.release('k', 't'),
      store.extend('k', 't', 10_000),
    ]) {
      await expect(call).rejects.toThrow(/enableOfflineQueue/);
    }
    expect(performance.now() - started).toBeLessThan(ANSWERED_WELL_BEFORE_SENDER_TIMEOUT_MS);
  });

  it("default ioredis options: the command waits in the offline queue; the pipeline's storeTimeoutMs ends the wait", async () => {
    const store = new RedisDedupeStore({ client: track(redisOn(await freePort())) });
    const logger = recordingLogger();
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      logger,
      storeTimeoutMs: 300,
      onPaymentPaid: () => {},
    });
    const answer = await timed(handle(delivery(samplePaymentPaidEvent())));
    expectStoreUnavailable(answer);
    expect(answer.ms).toBeLessThan(2_000);
  });
});
