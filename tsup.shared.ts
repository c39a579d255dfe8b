import type { Options } from 'tsup';

/**
 * How every package builds: one bundle per module format (ESM and CJS) with types, for `import` and
 * `require` alike. Dependencies and peers stay external, so the app's own copies are the ones used.
 */
export function packageBuild(overrides: Options = {}): Options {
  return {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    platform: 'node',
    target: 'node20',
    clean: true,
    ...overrides,
  };
}
