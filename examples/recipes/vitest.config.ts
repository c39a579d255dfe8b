import { defineConfig } from 'vitest/config';

// Each recipe's app is built (where its framework builds) and started as a real process; files run one
// at a time, the builds are the slow part.
export default defineConfig({
  test: { name: 'recipes', include: ['test/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 300_000 },
});
