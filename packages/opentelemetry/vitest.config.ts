import { defineConfig } from 'vitest/config';

// The SDK's in-memory metric and span exporters behind real handlers (core and Express on port 0).
export default defineConfig({
  test: {
    name: 'opentelemetry',
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
