import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// Two entries: node-postgres and PGlite at the root, postgres.js at `/postgres-js`, so an app's type
// declarations only ever name the client it installed.
export default defineConfig(packageBuild({ entry: { index: 'src/index.ts', 'postgres-js': 'src/postgres-js.ts' } }));
