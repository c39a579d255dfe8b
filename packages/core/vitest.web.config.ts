import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// The verification suite again, bound to the Web Crypto backend, with node:crypto made unavailable so any
// accidental use of it fails the run (as it would on the Edge runtime or a Worker).
export default defineConfig({
  resolve: {
    alias: {
      '#crypto': here('./src/crypto/web.ts'),
      'node:crypto': here('./test/support/no-node-crypto.ts'),
      crypto: here('./test/support/no-node-crypto.ts'),
      'node:buffer': here('./test/support/no-node-crypto.ts'),
    },
  },
  test: { name: 'core-web', include: ['test/**/*.web.test.ts'] },
});
