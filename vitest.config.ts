import { defineConfig } from 'vitest/config';

// Every package, the examples and the cross-package tests bring their own vitest config; this one only
// gathers them, so `pnpm test` runs everything.
export default defineConfig({
  test: {
    projects: [
      'packages/*/vitest.config.ts',
      'packages/core/vitest.web.config.ts',
      'packages/nestjs/vitest.nest11.config.ts',
      'examples/*/vitest.config.ts',
      'test/vitest.config*.ts',
    ],
  },
});
