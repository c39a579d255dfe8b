import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

export default defineConfig([
  packageBuild(),
  // The bin: ESM only (the package is type module), no types; its hashbang makes tsup mark it executable.
  packageBuild({ entry: { cli: 'src/cli.ts' }, format: ['esm'], dts: false, clean: false }),
]);
