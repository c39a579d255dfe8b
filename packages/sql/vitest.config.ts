import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// Unit tests of the layer's pure parts (table names, option checks, the rollback escalation); the stores
// built on it are tested against real databases in @service-pay/postgres, /mysql and /sqlite.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'sql',
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
