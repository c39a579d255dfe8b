import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// A real Hono app served by @hono/node-server on 127.0.0.1 port 0, driven by fetch. (Bun, Deno and workerd
// run the same adapter in test/runtimes.)
export default defineConfig({
  // The other packages from their source: an edit in one is seen here with no rebuild.
  resolve: { alias: sourceAliases() },
  test: {
    name: 'hono',
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
