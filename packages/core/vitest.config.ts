import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { alias: { '#crypto': fileURLToPath(new URL('./src/crypto/node.ts', import.meta.url)) } },
  test: { name: 'core', include: ['test/**/*.test.ts'], exclude: ['test/**/*.web.test.ts'] },
});
