import { defineConfig } from 'tsup';

// One neutral bundle per module format, for the Node and the Edge runtime alike. Core stays external, so
// Next.js resolves it with the runtime's export conditions (its Web Crypto build on the Edge).
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  platform: 'neutral',
  target: 'es2022',
  clean: true,
});
