import { defineConfig } from 'vitest/config';

// The normal run does a small chaos run; `pnpm test:chaos` sets CHAOS_PAYMENTS=2000 for the full one.
export default defineConfig({
  test: { name: 'chaos', include: ['chaos/**/*.test.ts'], testTimeout: 600_000, hookTimeout: 120_000 },
});
