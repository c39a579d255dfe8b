import { defineConfig } from 'vitest/config';

// Unit tests of the layer's pure parts (table names, option checks, the rollback escalation); the stores
// built on it are tested against real databases in @service-pay/postgres, /mysql and /sqlite.
export default defineConfig({
  test: {
    name: 'sql',
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
