/**
 * A CPU profile of the Redis path alone: fresh deliveries, one at a time, through createWebhookHandler +
 * RedisDedupeStore (ioredis, failFastRedisOptions). Prints the top self-time entries, the figures the
 * closing notes of the speed issues quote.
 *
 *   node --import tsx bench/profile-fresh.ts [deliveries]      (REDIS_URL to use another Redis)
 */
import { Session } from 'node:inspector/promises';
import { SECRET, signedDeliveries } from '@service-pay/bench-kit';
import { createWebhookHandler } from '@service-pay/core';
import { failFastRedisOptions, RedisDedupeStore } from '@service-pay/redis';
import { Redis } from 'ioredis';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

const count = Number(process.argv[2] ?? 20_000);
const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', failFastRedisOptions());
if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
const prefix = `bench:profile:${Date.now().toString(36)}:`;
const store = new RedisDedupeStore({ client, keyPrefix: prefix });
const handle = createWebhookHandler({ secret: SECRET, store, retainMs: 60_000, onPaymentPaid: () => {} });
const answered = new Map<number, number>();
const deliveries = signedDeliveries(count + 2_000);
const send = async (i: number) => {
  const d = deliveries[i]!;
  const { status } = await handle({ method: 'POST', headers: d.headers, rawBody: d.body });
  answered.set(status, (answered.get(status) ?? 0) + 1);
};
for (let i = 0; i < 2_000; i++) await send(count + i); // warm up: the optimizing tiers, the connection

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 50 });
await session.post('Profiler.start');
for (let i = 0; i < count; i++) await send(i);
const { profile } = (await session.post('Profiler.stop')) as { profile: { nodes: ProfileNode[] } };

const selfByFunction = new Map<string, number>();
let total = 0;
for (const node of profile.nodes) {
  const hits = node.hitCount ?? 0;
  total += hits;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url
    .replace(/^.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, '')
    .replace(/^file:\/\/.*\/packages\//, '');
  const name = `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim();
  selfByFunction.set(name, (selfByFunction.get(name) ?? 0) + hits);
}
const top = [...selfByFunction.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25);
console.log(
  `self time, ${count} fresh deliveries, sequential (${total} samples); answers ${JSON.stringify(Object.fromEntries(answered))}:`,
);
for (const [name, hits] of top) console.log(`${((100 * hits) / total).toFixed(1).padStart(5)}%  ${name}`);
const keys = await client.keys(`${prefix}*`);
for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500));
client.disconnect();
