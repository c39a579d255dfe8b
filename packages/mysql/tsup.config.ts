import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// One entry per client: mysql2 at the root, each ORM at its own subpath (`/kysely`, `/drizzle`, `/prisma`, `/knex`, `/typeorm`), so an
// app's type declarations and bundle only ever name the client it installed.
export default defineConfig(
  packageBuild({
    entry: {
      index: 'src/index.ts',
      kysely: 'src/kysely.ts',
      drizzle: 'src/drizzle.ts',
      prisma: 'src/prisma.ts',
      knex: 'src/knex.ts',
      typeorm: 'src/typeorm.ts',
    },
  }),
);
