import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// The Redis fault rows: redis-servers of the tests' own, killed, paused and restarted. They run after the
// unit and conformance tier (group 1 of `pnpm test`), two files at a time, so a restart is not timed against
// the whole suite's load; their waits are bounded by each test's own timeout.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'redis-faults',
    include: ['test/faults/**/*.test.ts'],
    sequence: { groupOrder: 1 },
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
