import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packagesDir = fileURLToPath(new URL('./packages', import.meta.url));

/** Where an export subpath's source is: `.` is `src/index.ts`, `./x` is `src/x.ts` or `src/x/index.ts`. */
function sourceOf(dir: string, subpath: string): string | undefined {
  const name = subpath === '.' ? 'index' : subpath.slice(2);
  return [join(dir, 'src', `${name}.ts`), join(dir, 'src', name, 'index.ts')].find(existsSync);
}

/**
 * Every built package's entry points mapped to their TypeScript source, for `resolve.alias` in the packages'
 * test configs: an edit in core is seen by the adapters' and stores' tests at once, with no rebuild. Packages
 * whose exports already name their source (the private SQL layer, the test kit) need none. `#crypto` is
 * core's build-time seam, bound to node:crypto as in the Node bundle.
 *
 * Only the in-process tiers use it: what runs in a child process (fixture apps, the CLI) imports the
 * packages through Node, so from `dist`, and the merchant apps and runtime matrix (test/) test the built
 * and packed packages on purpose.
 *
 * @example
 * ```ts
 * export default defineConfig({ resolve: { alias: sourceAliases() }, test: { name: 'express' } });
 * ```
 */
export function sourceAliases(): { find: RegExp; replacement: string }[] {
  const aliases: { find: RegExp; replacement: string }[] = [
    { find: /^#crypto$/, replacement: join(packagesDir, 'core', 'src', 'crypto', 'node.ts') },
  ];
  for (const entry of readdirSync(packagesDir)) {
    const dir = join(packagesDir, entry);
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; exports?: Record<string, unknown> };
    for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
      if (subpath === './package.json' || !JSON.stringify(target).includes('./dist/')) continue;
      const source = sourceOf(dir, subpath);
      if (source === undefined) continue;
      const specifier = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
      aliases.push({ find: new RegExp(`^${specifier.replace(/[/.]/g, '\\$&')}$`), replacement: source });
    }
  }
  return aliases;
}
