import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// Events of every documented shape (API Gateway REST and HTTP APIs, Function URLs, ALB) through the
// handler, and the same handler run by lambda-local, a Lambda runtime emulator, with a real PostgresStore.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'lambda',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
