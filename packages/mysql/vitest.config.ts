import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// Every file talks to the machine's MariaDB (127.0.0.1:3306, root, database `test`; `.ci/run` starts it when
// it is down), in tables of its own. The fault rows, on a MariaDB of their own that they kill, run after this
// tier: vitest.faults.config.ts.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'mysql',
    include: ['test/**/*.test.ts'],
    exclude: ['test/faults/**'],
    // PrismaStore's tests import a generated Prisma client: generated once, before any file runs.
    globalSetup: ['test/prisma/generate.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
