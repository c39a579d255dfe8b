import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Options } from 'tsup';

/** Private workspace packages compiled into the packages that use them (code and types): never installed. */
const BUNDLED = ['@service-pay/sql'];
/** Their declarations are inlined where a public type names them (the layer's root exports them all). */
const BUNDLED_TYPES = [/^@service-pay\/sql$/];

/**
 * Resolves the bundled layer's imports from its source through its own exports map, not through
 * node_modules: it is a dev dependency of the packages that compile it in, and the demo's production-only
 * install (`pnpm demo` installs no dev dependencies) links none. Every package builds from its own folder,
 * beside `packages/sql`.
 */
const bundledFromSource = {
  name: 'bundled-from-source',
  setup(build: {
    onResolve(options: { filter: RegExp }, callback: (args: { path: string }) => { path: string } | undefined): void;
  }) {
    const dir = join(process.cwd(), '..', 'sql');
    const exportsMap = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).exports as Record<string, string>;
    build.onResolve({ filter: /^@service-pay\/sql(\/.*)?$/ }, (args) => {
      const target = exportsMap[`.${args.path.slice('@service-pay/sql'.length)}`];
      return target === undefined ? undefined : { path: join(dir, target) };
    });
  },
};

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
    esbuildPlugins: [bundledFromSource],
    platform: 'node',
    target: 'node20',
    clean: true,
    ...overrides,
  };
}
