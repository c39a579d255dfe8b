import { defineConfig } from 'vitest/config';

// Builds test/fixture-app once with `next build` (about 20-40 s on 2 cores) and serves it with `next start`.
export default defineConfig({
  test: {
    name: 'next',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 300_000,
  },
});
