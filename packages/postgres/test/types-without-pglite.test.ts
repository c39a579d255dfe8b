import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

// A node-postgres app that never installed PGlite compiles against the built package without skipLibCheck:
// the type declarations import nothing from '@electric-sql/pglite' (they describe PGlite structurally).
// The app gets a folder of its own in the system's temp dir, where PGlite cannot be found by walking up.
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = join(packageDir, '../..');
const run = promisify(execFile);
const app = mkdtempSync(join(tmpdir(), 'service-pay-pg-only-'));
afterAll(() => rmSync(app, { recursive: true, force: true }));

const link = (name: string, target: string) => {
  mkdirSync(join(app, 'node_modules', name, '..'), { recursive: true });
  symlinkSync(realpathSync(target), join(app, 'node_modules', name));
};

it('a pg-only app type-checks with skipLibCheck off', async () => {
  // The package as npm would install it: its manifest and its build, nothing else (no node_modules of its own).
  const installed = join(app, 'node_modules/@service-pay/postgres');
  mkdirSync(installed, { recursive: true });
  cpSync(join(packageDir, 'package.json'), join(installed, 'package.json'));
  cpSync(join(packageDir, 'dist'), join(installed, 'dist'), { recursive: true });
  link('@service-pay/core', join(packageDir, '../core'));
  link('pg', join(packageDir, 'node_modules/pg'));
  link('@types/pg', join(packageDir, 'node_modules/@types/pg'));
  link('@types/node', join(repoRoot, 'node_modules/@types/node'));
  writeFileSync(
    join(app, 'app.ts'),
    `import { PostgresStore } from '@service-pay/postgres';
import pg from 'pg';

export const store = new PostgresStore({ pool: new pg.Pool() });
`,
  );
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
      },
      files: ['app.ts'],
    }),
  );
  writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  // PGlite is really out of reach from the app, as in an app that never installed it. (Checked in a child
  // without NODE_PATH: pnpm's bin shims point NODE_PATH at the workspace's hoisted modules, PGlite included.)
  const { NODE_PATH: _hoisted, ...env } = process.env;
  const lookup = await run(process.execPath, ['-e', "require.resolve('@electric-sql/pglite')"], { cwd: app, env }).then(
    () => 'found',
    (error: { stderr?: string }) => error.stderr ?? String(error),
  );
  expect(lookup).toMatch(/Cannot find module '@electric-sql\/pglite'/);
  const result = await run(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', app]).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  expect(result).toBe('');
}, 60_000);
