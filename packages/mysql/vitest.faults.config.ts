import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// The fault rows on a MariaDB server of their own (killed with -9 and restarted under app processes). They
// run after the unit and conformance tier (group 1 of `pnpm test`), beside at most one other fault file.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'mysql-faults',
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/prisma/generate.ts'],
    sequence: { groupOrder: 1 },
    maxWorkers: 2,
    // A row waits up to 90 s for the sender to finish its retries (about 25 s unloaded): the test's time is
    // above that wait, so a slow row fails with its figures, not a timeout in the middle of them.
    testTimeout: 120_000,
    hookTimeout: 30_000,
  },
});
