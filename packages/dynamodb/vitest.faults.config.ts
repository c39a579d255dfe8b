import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// The DynamoDB fault rows: emulators of the tests' own (DynamoDB Local), killed and restarted. They run after
// the unit and conformance tier (group 1 of `pnpm test`), two files at a time, so a restart is not timed
// against the whole suite's load, and only on the recommended Node line: their subject is the emulator and
// the store's retries, not the line.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'dynamodb-faults',
    include: ['test/faults/**/*.test.ts'],
    sequence: { groupOrder: 1 },
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
