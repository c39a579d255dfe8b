import { defineConfig } from 'vitest/config';

// The normal run does a small chaos run (200 payments); `pnpm test:chaos` runs 2,000, or CHAOS_PAYMENTS.
export default defineConfig({
  test: { name: 'chaos', include: ['chaos/**/*.test.ts'], testTimeout: 600_000, hookTimeout: 120_000 },
});
