import { defineConfig } from 'vitest/config';

// The published packages as a user meets them: metadata, LICENSE, README install line and quick start.
export default defineConfig({
  test: { name: 'packages', include: ['packages/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 30_000 },
});
