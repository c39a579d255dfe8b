import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';

// `#crypto` is bound at build time: node:crypto in the Node bundle, Web Crypto in the web bundle. The
// package's export conditions then pick a bundle, so no runtime ever probes for `require('crypto')`.
const cryptoBackend = (flavour: 'node' | 'web'): Plugin => ({
  name: 'crypto-backend',
  setup(build) {
    build.onResolve({ filter: /^#crypto$/ }, () => ({
      path: fileURLToPath(new URL(`./src/crypto/${flavour}.ts`, import.meta.url)),
    }));
  },
});

export default defineConfig([
  {
    entry: { index: 'src/index.ts', testing: 'src/testing/index.ts', node: 'src/node/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    platform: 'node',
    target: 'node20',
    clean: true,
    esbuildPlugins: [cryptoBackend('node')],
  },
  {
    entry: { web: 'src/index.ts' },
    format: ['esm', 'cjs'],
    platform: 'neutral',
    target: 'es2022',
    esbuildPlugins: [cryptoBackend('web')],
  },
]);
