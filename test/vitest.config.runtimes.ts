import { defineConfig } from 'vitest/config';

// The runtime matrix (runtimes/runtimes.test.ts): Bun, Deno and workerd as real processes, a few seconds in all.
export default defineConfig({
  test: { name: 'runtimes', include: ['runtimes/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 },
});
