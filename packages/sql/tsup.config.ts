import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// Built only for its declarations: the SQL packages compile this layer's code in from source and inline
// these declarations where a public type of theirs names one (`KyselyStore extends SqlStore`).
export default defineConfig(packageBuild({ entry: { index: 'src/index.ts' }, format: ['esm'] }));
