import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// Builds test/fixture-app and test/prisma-app once each with `next build` (about 20-40 s each on 2 cores)
// and serves them with `next start`.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'next',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 300_000,
  },
});
