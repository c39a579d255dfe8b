import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

// `pnpm build` (scripts/build.mjs) in a workspace of its own: package `a`, and `b` that depends on it. Each
// build appends its package's name to builds.log, so the test sees what was built, not what was said.
let workspace: string;

function write(path: string, text: string): void {
  mkdirSync(join(workspace, path, '..'), { recursive: true });
  writeFileSync(join(workspace, path), text);
}

function pkg(name: string, deps: Record<string, string> = {}, fails = false): void {
  const script = fails
    ? 'process.exit(3)'
    : `require('fs').mkdirSync('dist',{recursive:true});require('fs').writeFileSync('dist/index.js','');require('fs').appendFileSync('../../builds.log','${name}\\n')`;
  write(
    `packages/${name}/package.json`,
    JSON.stringify({ name: `@w/${name}`, scripts: { build: `node -e "${script}"` }, dependencies: deps }),
  );
  write(`packages/${name}/src/index.ts`, `export const ${name} = 1;\n`);
}

function build(...args: string[]): { built: string[]; status: number | null; output: string } {
  rmSync(join(workspace, 'builds.log'), { force: true });
  const result = spawnSync(process.execPath, [join(workspace, 'scripts', 'build.mjs'), ...args], {
    cwd: workspace,
    encoding: 'utf8',
  });
  let built: string[] = [];
  try {
    built = readFileSync(join(workspace, 'builds.log'), 'utf8').trim().split('\n').filter(Boolean).sort();
  } catch {}
  return { built, status: result.status, output: result.stdout + result.stderr };
}

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'sp-build-'));
  cpSync(join(root, 'scripts', 'build.mjs'), join(workspace, 'scripts', 'build.mjs'));
  cpSync(join(root, 'scripts', 'lib', 'workspace.mjs'), join(workspace, 'scripts', 'lib', 'workspace.mjs'));
  write('package.json', JSON.stringify({ name: 'w', private: true }));
  write('pnpm-workspace.yaml', "packages:\n  - 'packages/*'\n");
  write('pnpm-lock.yaml', "lockfileVersion: '9.0'\n");
  write('tsup.shared.ts', 'export {};\n');
  write('tsconfig.base.json', '{}\n');
  mkdirSync(join(workspace, 'examples'));
  pkg('a');
  pkg('b', { '@w/a': 'workspace:*' });
});

afterEach(() => rmSync(workspace, { recursive: true, force: true }));

describe('pnpm build: only what changed, and what depends on it', () => {
  it('builds everything once, then nothing while the inputs stay the same', () => {
    expect(build().built).toEqual(['a', 'b']);
    const again = build();
    expect(again.built).toEqual([]);
    expect(again.output).toContain('all 2 packages up to date');
    expect(build('--force').built).toEqual(['a', 'b']);
  });

  it('builds a changed package and the packages that depend on it, not those it depends on', () => {
    build();
    appendFileSync(join(workspace, 'packages/b/src/index.ts'), '// changed\n');
    expect(build().built).toEqual(['b']);
    appendFileSync(join(workspace, 'packages/a/src/index.ts'), '// changed\n');
    expect(build().built).toEqual(['a', 'b']);
  });

  it('builds packages that depend on each other (a test of one runs the other) together, and then not again', () => {
    pkg('a', { '@w/b': 'workspace:*' });
    expect(build().built).toEqual(['a', 'b']);
    expect(build().built).toEqual([]);
    appendFileSync(join(workspace, 'packages/b/src/index.ts'), '// changed\n');
    expect(build().built).toEqual(['a', 'b']);
  });

  it('builds everything again when a shared input changes (the lockfile, the shared build settings)', () => {
    build();
    appendFileSync(join(workspace, 'pnpm-lock.yaml'), '# another version\n');
    expect(build().built).toEqual(['a', 'b']);
    appendFileSync(join(workspace, 'tsup.shared.ts'), '// changed\n');
    expect(build().built).toEqual(['a', 'b']);
  });

  it('does not count tests, benchmarks or Markdown as inputs', () => {
    build();
    write('packages/a/test/a.test.ts', 'x\n');
    write('packages/a/bench/a.bench.ts', 'x\n');
    write('packages/a/README.md', '# a\n');
    expect(build().built).toEqual([]);
  });

  it('builds a package again whose dist lost or changed a file, whatever its inputs say', () => {
    build();
    rmSync(join(workspace, 'packages/b/dist/index.js'));
    expect(build().built).toEqual(['b']);
    writeFileSync(join(workspace, 'packages/a/dist/index.js'), 'tampered');
    expect(build().built).toEqual(['a']);
  });

  it('leaves a package whose build failed to be built next time, and fails with its status', () => {
    build();
    pkg('b', { '@w/a': 'workspace:*' }, true);
    const failed = build();
    expect(failed.status).not.toBe(0);
    pkg('b', { '@w/a': 'workspace:*' });
    expect(build().built).toEqual(['b']);
  });
});
