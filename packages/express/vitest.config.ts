import { defineConfig } from 'vitest/config';

// Real Express 4 and 5 apps on 127.0.0.1 port 0, driven by supertest and fetch.
export default defineConfig({
  test: {
    name: 'express',
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
