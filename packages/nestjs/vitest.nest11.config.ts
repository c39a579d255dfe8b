import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { sourceAliases } from '../../vitest.shared.js';

// The same NestJS test files again, against NestJS 11 (test/nest11 installs it): every `@nestjs/*` import of
// the tests and of the module's source resolves there, and Nest's own imports follow from its own folder.
const nest11 = fileURLToPath(new URL('./test/nest11/node_modules/', import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      {
        find: /^@nestjs\/(common|core|testing|platform-express|platform-fastify)(\/package\.json)?$/,
        replacement: `${nest11}@nestjs/$1$2`,
      },
      // The other packages from their source, as in the NestJS 12 run.
      ...sourceAliases(),
    ],
  },
  test: {
    name: 'nestjs-11',
    env: { EXPECTED_NEST_MAJOR: '11' },
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
