import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// Every file talks to AWS's DynamoDB Local, started by the global setup on a free loopback port (fetched
// once into a cache folder, never part of the install). The fault rows, which start emulators of their own,
// are a project of their own (vitest.faults.config.ts).
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'dynamodb',
    include: ['test/**/*.test.ts'],
    // Emulators killed and restarted on purpose: vitest.faults.config.ts, after this tier.
    exclude: ['test/faults/**'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
