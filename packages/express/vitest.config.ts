import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// Real Express 4 and 5 apps on 127.0.0.1 port 0, driven by supertest and fetch.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'express',
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
