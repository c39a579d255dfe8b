import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// Every file talks to a real SQLite database: a file of its own in a temporary folder, opened by this
// process and, for the cross-process cases, by child processes the test starts and kills.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'sqlite',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
