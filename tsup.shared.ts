import type { Options } from 'tsup';

/** Private workspace packages compiled into the packages that use them (code and types): never installed. */
const BUNDLED = ['@service-pay/sql'];
/** Their declarations are inlined where a public type names them (the layer's root exports them all). */
const BUNDLED_TYPES = [/^@service-pay\/sql$/];

/**
 * How every package builds: one bundle per module format (ESM and CJS) with types, for `import` and
 * `require` alike. Dependencies and peers stay external, so the app's own copies are the ones used; the
 * private SQL layer is compiled in.
 */
export function packageBuild(overrides: Options = {}): Options {
  return {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: { resolve: BUNDLED_TYPES },
    noExternal: BUNDLED,
    platform: 'node',
    target: 'node20',
    clean: true,
    ...overrides,
  };
}
