import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// A test, bench or source file may import another workspace package only by its name, declared in its own
// package.json: a relative path into another package's folder is an edge no package.json shows, breaks when
// that package moves its tests, and pulls its test helpers into places that never asked for them. Shared
// test helpers live in @service-pay/test-kit. (Runners that load files by path, such as the bench runner's
// `import()` of each package's bench, are not imports of code to reuse and are not checked.)
const root = fileURLToPath(new URL('../../', import.meta.url));

/** The workspace's package folders (pnpm-workspace.yaml's `dir` and `dir/*` entries), deepest first. */
function packageDirs(): string[] {
  const workspace = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
  const block = /^packages:\n((?:\s+(?:-.*|#.*)\n)+)/m.exec(workspace)?.[1] ?? '';
  const dirs: string[] = [];
  for (const [, glob] of block.matchAll(/^\s+-\s+(\S+)/gm)) {
    const pattern = glob as string;
    if (!pattern.endsWith('/*')) dirs.push(resolve(root, pattern));
    else {
      const parent = resolve(root, pattern.slice(0, -2));
      for (const name of readdirSync(parent)) {
        if (existsSync(join(parent, name, 'package.json'))) dirs.push(join(parent, name));
      }
    }
  }
  return dirs.sort((a, b) => b.length - a.length);
}

/** Every relative specifier of a static import, export-from or require in `source`. */
function relativeSpecifiers(source: string): string[] {
  const found: string[] = [];
  const pattern =
    /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|\brequire\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm;
  for (const match of source.matchAll(pattern)) found.push((match[1] ?? match[2]) as string);
  return found;
}

/** `file: specifier` for every import of a file in another workspace package's folder. */
function crossPackageImports(): string[] {
  const dirs = packageDirs();
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => /\.(ts|tsx|mts|cts|js|mjs|cjs)$/.test(f) && !/(^|\/)(node_modules|dist|generated)\//.test(f));
  const offending: string[] = [];
  for (const file of files) {
    const path = join(root, file);
    if (!existsSync(path)) continue;
    const owner = dirs.find((dir) => path.startsWith(dir + sep));
    if (owner === undefined) continue;
    for (const specifier of relativeSpecifiers(readFileSync(path, 'utf8'))) {
      const target = resolve(dirname(path), specifier);
      // The repository's own build configuration (tsup.shared.ts) belongs to no package: shared on purpose.
      const targetOwner = dirs.find((dir) => target.startsWith(dir + sep));
      if (targetOwner !== undefined && targetOwner !== owner) {
        offending.push(`${file}: '${specifier}' (${relative(root, target)})`);
      }
    }
  }
  return offending;
}

it('no package imports another package (its tests, benches or sources) by a relative path', () => {
  expect(crossPackageImports()).toEqual([]);
});
