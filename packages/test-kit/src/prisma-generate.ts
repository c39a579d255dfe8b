import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `prisma generate` of `schema`, run in `packageDir` (whose node_modules hold `prisma` and
 * `@prisma/client`), for a vitest global setup or a benchmark. `prisma generate` never runs the schema
 * engine, but Prisma asks for its binary, which it would download (the machines that run these tests reach
 * only the npm registry): an empty stub stands in for it. Tables are made with plain SQL, so
 * `prisma migrate` (the engine's job) is never needed.
 *
 * @example
 * ```ts
 * export default () => generatePrismaClient(join(here, 'schema.prisma'), join(here, '../..'));
 * ```
 */
export function generatePrismaClient(schema: string, packageDir: string): void {
  const stubDir = mkdtempSync(join(tmpdir(), 'prisma-engine-stub-'));
  const stub = join(stubDir, 'schema-engine');
  writeFileSync(stub, '#!/bin/sh\nexit 0\n');
  chmodSync(stub, 0o755);
  try {
    execFileSync(join(packageDir, 'node_modules/.bin/prisma'), ['generate', '--schema', schema], {
      cwd: packageDir,
      env: {
        ...process.env,
        PRISMA_SCHEMA_ENGINE_BINARY: stub,
        PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING: '1',
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
        CHECKPOINT_DISABLE: '1',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 120_000,
    });
  } finally {
    rmSync(stubDir, { recursive: true, force: true });
  }
}
