import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// Every file talks to a real database: the machine's PostgreSQL on 127.0.0.1:5432 (db `test`, a table of
// its own per file) or PGlite in the test process. The files that stop a PostgreSQL server of their own
// run after this tier: vitest.faults.config.ts.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'postgres',
    include: ['test/**/*.test.ts'],
    exclude: ['test/faults/**', 'test/pool-errors.test.ts'],
    // PrismaStore's tests import a generated Prisma client: generated once, before any file runs.
    globalSetup: ['test/prisma/generate.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
