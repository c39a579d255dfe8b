import { defineConfig } from 'vitest/config';

// Events of every documented shape (API Gateway REST and HTTP APIs, Function URLs, ALB) through the
// handler, and the same handler run by lambda-local, a Lambda runtime emulator, with a real PostgresStore.
export default defineConfig({
  test: {
    name: 'lambda',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
