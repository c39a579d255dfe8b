import { defineConfig } from 'vitest/config';

// Every file talks to a real Redis: the one on 127.0.0.1:6379 (unique key prefixes per test) or
// redis-servers the tests start and stop themselves on free loopback ports.
export default defineConfig({
  test: {
    name: 'redis',
    include: ['test/**/*.test.ts'],
    // Servers killed and paused on purpose: vitest.faults.config.ts, after this tier.
    exclude: ['test/faults/**'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
