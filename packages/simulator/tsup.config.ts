import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// shims: the CJS build gets import.meta.url, which the dashboard uses to find its files.
export default defineConfig([
  packageBuild({ shims: true }),
  // The CLI: ESM only (the package is type module), no types; bin/service-pay.js loads it.
  packageBuild({ entry: { cli: 'src/cli.ts' }, format: ['esm'], dts: false, clean: false }),
]);
