import { defineConfig } from 'vitest/config';

// One `next build` (about a minute on 2 cores) in the first hook, then `next start`.
export default defineConfig({
  test: { name: 'next-orders', include: ['test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 300_000 },
});
