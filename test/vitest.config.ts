import { defineConfig } from 'vitest/config';

// The normal run does a small chaos run (200 payments); `pnpm test:chaos` runs 2,000, or CHAOS_PAYMENTS. It
// kills, pauses and restarts Redis and the shops: last in `pnpm test` (group 3), alone on the machine.
export default defineConfig({
  test: {
    name: 'chaos',
    include: ['chaos/**/*.test.ts'],
    sequence: { groupOrder: 3 },
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
});
