import { defineConfig } from 'vitest/config';

// Real Fastify 5 apps, driven through `inject` and through a real listen on 127.0.0.1 port 0.
export default defineConfig({
  test: {
    name: 'fastify',
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
