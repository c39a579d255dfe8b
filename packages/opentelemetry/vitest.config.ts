import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// The SDK's in-memory metric and span exporters behind real handlers (core and Express on port 0).
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'opentelemetry',
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
