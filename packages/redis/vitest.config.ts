import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// Every file talks to a real Redis: the one on 127.0.0.1:6379 (unique key prefixes per test) or
// redis-servers the tests start and stop themselves on free loopback ports.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'redis',
    include: ['test/**/*.test.ts'],
    // Servers killed and paused on purpose: vitest.faults.config.ts, after this tier.
    exclude: ['test/faults/**'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
