import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// One entry per client: better-sqlite3 (and libsql) at the root, each ORM at its own subpath (`/kysely`), so
// an app's type declarations and bundle only ever name the client it installed.
export default defineConfig(packageBuild({ entry: { index: 'src/index.ts', kysely: 'src/kysely.ts' } }));
