import { defineConfig } from 'tsup';

// One Node bundle per module format. Core, fastify and fastify-plugin stay external: the app's own copies are used.
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  platform: 'node',
  target: 'node20',
  clean: true,
});
