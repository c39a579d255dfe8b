import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// Real NestJS apps on @nestjs/platform-express and @nestjs/platform-fastify, listening on 127.0.0.1 port 0,
// driven by supertest and fetch.
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'nestjs',
    env: { EXPECTED_NEST_MAJOR: '12' },
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
