import type { TargetCheck } from './harness.js';

/**
 * `pnpm bench`: every benchmark, printed as ratios against baselines run in the same process. Exits 0
 * even when a target is missed (machines are noisy), but says so in the summary.
 */
// Each package keeps its own benchmark beside its code (its framework and client resolve from there);
// this runner only gathers them. `pnpm bench core redis` runs a subset.
const suites: Array<[string, () => Promise<{ run: () => Promise<TargetCheck[]> }>]> = [
  ['core', () => import('./core.bench.js')],
  ['memory', () => import('./memory.bench.js')],
  ['express', () => import('../../packages/express/bench/express.bench.js')],
  ['fastify', () => import('../../packages/fastify/bench/fastify.bench.js')],
  ['redis', () => import('../../packages/redis/bench/handler-redis.bench.js')],
  ['postgres', () => import('../../packages/postgres/bench/handler-postgres.bench.js')],
  ['orm', () => import('../../packages/postgres/bench/orm-stores.bench.js')],
  ['mysql', () => import('../../packages/mysql/bench/orm-stores.bench.js')],
];

const only = process.argv.slice(2);
console.log(`node ${process.version} (${process.execPath}), V8 ${process.versions.v8}`);
const all: TargetCheck[] = [];
for (const [name, load] of suites) {
  if (only.length > 0 && !only.includes(name)) continue;
  const suite = await load();
  all.push(...(await suite.run()));
}
const missed = all.filter((c) => !c.met);
console.log(
  `\n${all.length - missed.length} of ${all.length} targets met${missed.length ? `; missed: ${missed.map((m) => `${m.of}/${m.over}`).join(', ')}` : ''}`,
);
