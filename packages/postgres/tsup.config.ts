import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// One entry per client: node-postgres and PGlite at the root, each other client at its own subpath
// (`/postgres-js`, `/kysely`, `/drizzle`, `/knex`, `/typeorm`, `/prisma`, `/pg-promise`), so an app's type
// declarations and bundle only ever name the client it installed.
export default defineConfig(
  packageBuild({
    entry: {
      index: 'src/index.ts',
      'postgres-js': 'src/postgres-js.ts',
      kysely: 'src/kysely.ts',
      drizzle: 'src/drizzle.ts',
      knex: 'src/knex.ts',
      typeorm: 'src/typeorm.ts',
      prisma: 'src/prisma.ts',
      'pg-promise': 'src/pg-promise.ts',
    },
  }),
);
