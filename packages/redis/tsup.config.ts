import { defineConfig } from 'tsup';

// One Node bundle per module format. ioredis and core stay external: they are peers, so the app's own
// copies (and its single ioredis connection pool) are the ones used.
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  platform: 'node',
  target: 'node20',
  clean: true,
});
