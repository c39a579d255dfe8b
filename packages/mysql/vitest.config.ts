import { defineConfig } from 'vitest/config';

// Every file talks to the machine's MariaDB (127.0.0.1:3306, root, database `test`; `.ci/run` starts it when
// it is down), in tables of its own.
export default defineConfig({
  test: {
    name: 'mysql',
    include: ['test/**/*.test.ts'],
    // PrismaStore's tests import a generated Prisma client: generated once, before any file runs.
    globalSetup: ['test/prisma/generate.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
