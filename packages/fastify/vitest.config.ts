import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// Real Fastify 5 apps, driven through `inject` and through a real listen on 127.0.0.1 port 0.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'fastify',
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
