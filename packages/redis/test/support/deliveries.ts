import { type PaymentPaidEvent, signWebhook, type WebhookLogger, type WebhookRequest } from '@service-pay/core';
import { redisTarget, testServers } from '@service-pay/test-kit';
import { Redis, type RedisOptions } from 'ioredis';
import { Redis as Redis5 } from 'ioredis-5';

/** Where a client connects: a server of the test's own by its port, or the shared one's options. */
type Target = number | ReturnType<typeof redisTarget>;

/** The shared Redis (`TEST_REDIS_URL`, database index included); every test writes under its own prefix. */
export const SHARED_REDIS = redisTarget(testServers().redisUrl);

const where = (target: Target) => (typeof target === 'number' ? { host: '127.0.0.1', port: target } : target);

export const SECRET = 'whsec_redis_store_tests';

/** One attempt of the sender: the event signed now, with a fresh `dl_` delivery id, as the service retries. */
export function delivery(event: PaymentPaidEvent): WebhookRequest {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  return { method: 'POST', headers, rawBody: body };
}

/** Collects what the pipeline logs, so a test can both stay quiet and look at what was said. */
export function recordingLogger(): WebhookLogger & {
  messages: string[];
  entries: Array<{ level: string; fields: Record<string, unknown>; message: string }>;
} {
  const entries: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const messages: string[] = [];
  const keep = (level: string) => (fields: Record<string, unknown>, message: string) => {
    entries.push({ level, fields, message });
    messages.push(message);
  };
  return { messages, entries, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}

/** A prefix no other test (or other engineer's run on the shared Redis) uses. */
export function uniquePrefix(label: string): string {
  return `test:service-pay:${label}:${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}:`;
}

/** Resolves once `client` can take commands; with the offline queue off, commands before that fail. */
export async function connected(client: Redis): Promise<Redis> {
  if (client.status !== 'ready') {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Redis client not ready: ${client.status}`)), 10_000);
      client.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  return client;
}

export function redisOn(target: Target, options: Omit<RedisOptions, 'replyMapping'> = {}): Redis {
  const client = new Redis({ ...where(target), ...options });
  // An outage is what several tests cause on purpose; ioredis would print every reconnect error otherwise.
  client.on('error', () => {});
  return client;
}

/**
 * The same on ioredis 5 (the peer range covers it). Typed as the ioredis 6 client the package builds
 * against: an app on 5.x compiles against 5.x's own types, which the store's declarations then refer to.
 */
export function redis5On(target: Target, options: Omit<RedisOptions, 'replyMapping' | 'protocol'> = {}): Redis {
  const client = new Redis5({ ...where(target), ...(options as object) });
  client.on('error', () => {});
  return client as unknown as Redis;
}
