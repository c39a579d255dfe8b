import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// The files that stop and restart a PostgreSQL server of their own (initdb and pg_ctl on a free loopback
// port) under app processes: the fault rows per client, and the pool without an error listener. They run
// after the unit and conformance tier (group 1 of `pnpm test`), two files at a time.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'postgres-faults',
    include: ['test/faults/**/*.test.ts', 'test/pool-errors.test.ts'],
    // PrismaStore's rows import a generated Prisma client: generated once, before any file runs.
    globalSetup: ['test/prisma/generate.ts'],
    sequence: { groupOrder: 1 },
    maxWorkers: 2,
    // A row waits up to 90 s for the sender to finish its retries (about 25 s unloaded): the test's time is
    // above that wait, so a slow row fails with its figures, not a timeout in the middle of them.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
